import type { JsonObject, JsonValue } from '../../src/event-store/event-store.port.js';
import type { WebhookEventType } from '../../src/webhooks/webhook.events.js';

/** One message as every endpoint that wants it receives it: the body and the stable `webhook-id`. */
export interface WebhookMessage {
  /** `msg_` + the id of the log event that caused it: the same on every retry and every endpoint. */
  readonly id: string;
  readonly type: WebhookEventType;
  readonly organizationId: string;
  /** null for organization-wide events: they go to the endpoints of both environments. */
  readonly environment: 'test' | 'live' | null;
  readonly body: { readonly type: WebhookEventType; readonly timestamp: string; readonly data: JsonObject };
}

/** A log event as the mapping needs it: its id, type, body and when it happened. */
export interface LogEvent {
  readonly id: string;
  readonly type: string;
  readonly data: JsonObject;
  readonly occurredAt: Date;
}

/**
 * What an earlier event of the same stream said, for events that name only their reference: a
 * verification's request (organization, environment, scope) for its terminal and erasure events,
 * a key's issue (its environment; scope null) for its revocation. The subscriber keeps them.
 */
export interface StreamFacts {
  readonly organizationId: string;
  readonly environment: string;
  readonly scope: string | null;
}

export const messageId = (eventId: string): string => `msg_${eventId}`;

function environmentOf(value: JsonValue | undefined): 'test' | 'live' {
  if (value !== 'test' && value !== 'live') throw new Error(`invariant: an event's environment is test or live, not ${JSON.stringify(value)}`);
  return value;
}

function text(data: JsonObject, field: string): string {
  const value = data[field];
  if (typeof value !== 'string') throw new Error(`invariant: the event's ${field} is a string`);
  return value;
}

function message(event: LogEvent, type: WebhookEventType, organizationId: string, environment: 'test' | 'live' | null, fields: JsonObject): WebhookMessage {
  return {
    id: messageId(event.id),
    type,
    organizationId,
    environment,
    body: { type, timestamp: event.occurredAt.toISOString(), data: { organizationId, environment, ...fields } },
  };
}

/**
 * The webhook message a log event announces, or null when it announces none. Pure: the
 * verification's facts come from the caller (undefined when the event is not a verification's
 * terminal event, or its request was never seen). `wallet.low_balance` is not here: it depends on
 * the threshold, see lowBalanceCrossed.
 */
export function webhookMessageFor(event: LogEvent, facts?: StreamFacts): WebhookMessage | null {
  const data = event.data;
  switch (event.type) {
    case 'VerificationCompleted': {
      if (facts === undefined) return null;
      return message(event, 'verification.completed', facts.organizationId, environmentOf(facts.environment), {
        reference: text(data, 'reference'),
        scope: scopeOf(facts),
        status: text(data, 'outcome'),
        charged: true,
        completedAt: text(data, 'completedAt'),
      });
    }
    case 'VerificationFailed': {
      if (facts === undefined) return null;
      return message(event, 'verification.failed', facts.organizationId, environmentOf(facts.environment), {
        reference: text(data, 'reference'),
        scope: scopeOf(facts),
        reasonCode: text(data, 'reasonCode'),
        charged: false,
        failedAt: text(data, 'failedAt'),
      });
    }
    case 'VerificationPersonalDataErased': {
      if (facts === undefined) return null;
      return message(event, 'personal_data.erased', facts.organizationId, environmentOf(facts.environment), {
        reference: text(data, 'reference'),
        erasedAt: text(data, 'erasedAt'),
      });
    }
    case 'WalletFunded':
      return message(event, 'wallet.funded', text(data, 'organizationId'), environmentOf(data.environment), {
        fundingReference: text(data, 'fundingReference'),
        amountKobo: amount(data, 'amountKobo'),
      });
    case 'ApiKeyIssued':
      return message(event, 'key.created', text(data, 'organizationId'), environmentOf(data.environment), {
        keyId: text(data, 'keyId'),
        prefix: text(data, 'prefix'),
        scopes: Array.isArray(data.scopes) ? data.scopes : null,
      });
    case 'ApiKeyRevoked':
      // The revocation names the key only; its environment is the issue's, which the caller passes as facts.
      if (facts === undefined) return null;
      return message(event, 'key.revoked', text(data, 'organizationId'), environmentOf(facts.environment), {
        keyId: text(data, 'keyId'),
      });
    case 'OrganizationApproved':
      return message(event, 'organization.approved', text(data, 'organizationId'), null, {});
    case 'OrganizationSuspended':
      return message(event, 'organization.suspended', text(data, 'organizationId'), null, {});
    case 'VerificationSessionCreated':
      return sessionMessage(event, 'verification_session.created', { flowId: text(data, 'flowId'), flowVersion: data.flowVersion ?? null, expiresAt: text(data, 'expiresAt') });
    case 'VerificationSessionSubmitted':
      return sessionMessage(event, 'verification_session.submitted', {});
    case 'VerificationSessionDecided': {
      const decision = text(data, 'decision');
      if (decision !== 'approved' && decision !== 'declined' && decision !== 'needs_review')
        throw new Error(`invariant: a session's decision is approved, declined or needs_review, not ${decision}`);
      return sessionMessage(event, `verification_session.${decision}`, { reasons: Array.isArray(data.reasons) ? data.reasons : [] });
    }
    case 'VerificationSessionReviewed': {
      // A person's decision on a session in review: the same event types as the rule's own, with the review's reason (from a fixed list).
      const decision = text(data, 'decision');
      if (decision !== 'approved' && decision !== 'declined') throw new Error(`invariant: a review approves or declines, not ${decision}`);
      return sessionMessage(event, `verification_session.${decision}`, {
        reasons: [],
        review: { reason: text(data, 'reason'), reviewedBy: text(data, 'reviewedBy') },
      });
    }
    case 'VerificationSessionExpired':
      return sessionMessage(event, 'verification_session.expired', {});
    case 'VerificationSessionCancelled':
      return sessionMessage(event, 'verification_session.cancelled', {});
    case 'PersonalDataDestroyed':
      return message(event, 'personal_data.erased', text(data, 'organizationId'), null, { reference: null, erasedAt: text(data, 'destroyedAt') });
    default:
      return null;
  }
}

/** A session's events each name its organization and environment; the message carries the session id and state, never the customer id or anything the person gave. */
function sessionMessage(event: LogEvent, type: WebhookEventType, fields: JsonObject): WebhookMessage {
  const data = event.data;
  return message(event, type, text(data, 'organizationId'), environmentOf(data.environment), { sessionId: text(data, 'sessionId'), ...fields });
}

function scopeOf(facts: StreamFacts): string {
  if (facts.scope === null) throw new Error("invariant: a verification's facts carry its scope");
  return facts.scope;
}

function amount(data: JsonObject, field: string): number {
  const value = data[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new Error(`invariant: the event's ${field} is an integer`);
  return value;
}

/**
 * Whether a wallet's balance moving from `before` to `after` crossed the threshold downwards: once
 * per crossing, so a balance that stays below it fires nothing more until it has risen to or
 * above it again. No threshold (null): never.
 */
export function lowBalanceCrossed(beforeKobo: number, afterKobo: number, thresholdKobo: number | null): boolean {
  return thresholdKobo !== null && beforeKobo >= thresholdKobo && afterKobo < thresholdKobo;
}

export function lowBalanceMessage(event: LogEvent, organizationId: string, environment: 'test' | 'live', balanceKobo: number, thresholdKobo: number): WebhookMessage {
  return message(event, 'wallet.low_balance', organizationId, environment, { balanceKobo, thresholdKobo });
}

/** Whether an endpoint subscribed to `eventTypes` (empty: every type) wants `type`. */
export function wants(eventTypes: readonly string[], type: WebhookEventType): boolean {
  return eventTypes.length === 0 || eventTypes.includes(type);
}
