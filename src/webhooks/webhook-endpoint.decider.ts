import { Conflict, NotFound, ValidationFailed, type FieldError } from '../common/errors.js';
import type { Decider, EventMeta } from '../event-sourcing/decider.js';
import type { WebhookEndpointEvent } from './webhook-endpoint.events.js';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from './webhook.events.js';

/** The longest overlap a rotation may ask for: a week, time enough to roll out the new secret. */
export const MAX_ROTATION_OVERLAP_SECONDS = 7 * 86_400;
/** Without an overlap asked for, the previous secret signs beside the new one for a day. */
export const DEFAULT_ROTATION_OVERLAP_SECONDS = 86_400;
const SCHEMA_VERSION = 1;

export interface SealedSecret {
  readonly secretId: string;
  readonly secret: string;
  readonly masterKeyId: string;
}

export type WebhookEndpointCommand =
  | {
      readonly type: 'CreateWebhookEndpoint';
      readonly endpointId: string;
      readonly organizationId: string;
      readonly environment: string;
      readonly target: string;
      readonly masterKeyId: string;
      readonly eventTypes: readonly string[];
      readonly enabled: boolean;
      readonly secret: SealedSecret;
    }
  | {
      readonly type: 'UpdateWebhookEndpoint';
      /** The caller's organization and environment: another's endpoint is not found. Null for operators. */
      readonly owner: Owner | null;
      readonly target?: { readonly sealed: string; readonly masterKeyId: string };
      readonly eventTypes?: readonly string[];
      readonly enabled?: boolean;
    }
  | { readonly type: 'RotateWebhookSecret'; readonly owner: Owner | null; readonly secret: SealedSecret; readonly overlapSeconds: number; readonly at: Date }
  | { readonly type: 'DisableFailingWebhookEndpoint' }
  | { readonly type: 'DeleteWebhookEndpoint'; readonly owner: Owner | null };

export interface Owner {
  readonly organizationId: string;
  readonly environment: string;
}

export interface WebhookEndpointState {
  readonly endpointId: string | null;
  readonly organizationId: string | null;
  readonly environment: string | null;
  readonly eventTypes: readonly string[];
  readonly enabled: boolean;
  readonly deleted: boolean;
  readonly currentSecretId: string | null;
  /** When it was created (its first event's time), as the read model stores it. */
  readonly createdAt: Date | null;
}

export const initialWebhookEndpointState: WebhookEndpointState = {
  endpointId: null,
  organizationId: null,
  environment: null,
  eventTypes: [],
  enabled: false,
  deleted: false,
  currentSecretId: null,
  createdAt: null,
};

/** Distinct known event types, in the canonical order; every unknown one listed as a field error. */
export function validEventTypes(eventTypes: readonly string[], field = 'eventTypes'): string[] {
  const errors: FieldError[] = [];
  eventTypes.forEach((type, index) => {
    if (!isWebhookEventType(type)) errors.push({ field: `${field}[${index}]`, message: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` });
  });
  if (errors.length > 0) throw new ValidationFailed(errors);
  return WEBHOOK_EVENT_TYPES.filter((type) => eventTypes.includes(type));
}

function existing(state: WebhookEndpointState, owner: Owner | null): string {
  const mine = owner === null || (state.organizationId === owner.organizationId && state.environment === owner.environment);
  if (state.endpointId === null || state.deleted || !mine) throw new NotFound('No webhook endpoint with that id');
  return state.endpointId;
}

const sameTypes = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((type, index) => type === b[index]);

function decide(command: WebhookEndpointCommand, state: WebhookEndpointState): WebhookEndpointEvent[] {
  switch (command.type) {
    case 'CreateWebhookEndpoint': {
      if (state.endpointId !== null) throw new Conflict('A webhook endpoint with that id exists');
      const eventTypes = validEventTypes(command.eventTypes);
      return [
        {
          type: 'WebhookEndpointCreated',
          data: {
            schemaVersion: SCHEMA_VERSION,
            endpointId: command.endpointId,
            organizationId: command.organizationId,
            environment: command.environment,
            target: command.target,
            eventTypes,
            enabled: command.enabled,
            secretId: command.secret.secretId,
            secret: command.secret.secret,
            masterKeyId: command.masterKeyId,
          },
        },
      ];
    }
    case 'UpdateWebhookEndpoint': {
      const endpointId = existing(state, command.owner);
      const eventTypes = command.eventTypes === undefined ? undefined : validEventTypes(command.eventTypes);
      const changes = {
        ...(command.target === undefined ? {} : { target: command.target.sealed, masterKeyId: command.target.masterKeyId }),
        ...(eventTypes === undefined || sameTypes(eventTypes, state.eventTypes) ? {} : { eventTypes }),
        ...(command.enabled === undefined || command.enabled === state.enabled ? {} : { enabled: command.enabled }),
      };
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'WebhookEndpointUpdated', data: { schemaVersion: SCHEMA_VERSION, endpointId, ...changes } }];
    }
    case 'RotateWebhookSecret': {
      const endpointId = existing(state, command.owner);
      if (!Number.isInteger(command.overlapSeconds) || command.overlapSeconds < 0 || command.overlapSeconds > MAX_ROTATION_OVERLAP_SECONDS) {
        throw new ValidationFailed([{ field: 'overlapSeconds', message: `must be a whole number of seconds from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}` }]);
      }
      if (state.currentSecretId === null) throw new Error('invariant: an endpoint has a secret');
      return [
        {
          type: 'WebhookEndpointSecretRotated',
          data: {
            schemaVersion: SCHEMA_VERSION,
            endpointId,
            secretId: command.secret.secretId,
            secret: command.secret.secret,
            masterKeyId: command.secret.masterKeyId,
            previousSecretId: state.currentSecretId,
            previousValidUntil: new Date(command.at.getTime() + command.overlapSeconds * 1_000).toISOString(),
          },
        },
      ];
    }
    case 'DisableFailingWebhookEndpoint': {
      const endpointId = existing(state, null);
      if (!state.enabled) return [];
      return [{ type: 'WebhookEndpointDisabled', data: { schemaVersion: SCHEMA_VERSION, endpointId, reason: 'failing' } }];
    }
    case 'DeleteWebhookEndpoint': {
      const endpointId = existing(state, command.owner);
      return [{ type: 'WebhookEndpointDeleted', data: { schemaVersion: SCHEMA_VERSION, endpointId } }];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

function evolve(state: WebhookEndpointState, event: WebhookEndpointEvent, meta: EventMeta): WebhookEndpointState {
  switch (event.type) {
    case 'WebhookEndpointCreated':
      return {
        createdAt: meta.occurredAt,
        endpointId: event.data.endpointId,
        organizationId: event.data.organizationId,
        environment: event.data.environment,
        eventTypes: event.data.eventTypes,
        enabled: event.data.enabled,
        deleted: false,
        currentSecretId: event.data.secretId,
      };
    case 'WebhookEndpointUpdated':
      return { ...state, eventTypes: event.data.eventTypes ?? state.eventTypes, enabled: event.data.enabled ?? state.enabled };
    case 'WebhookEndpointSecretRotated':
      return { ...state, currentSecretId: event.data.secretId };
    case 'WebhookEndpointDisabled':
      return { ...state, enabled: false };
    case 'WebhookEndpointDeleted':
      return { ...state, deleted: true, enabled: false };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

export const webhookEndpointDecider: Decider<WebhookEndpointState, WebhookEndpointCommand, WebhookEndpointEvent> = {
  initialState: initialWebhookEndpointState,
  decide,
  evolve,
};
