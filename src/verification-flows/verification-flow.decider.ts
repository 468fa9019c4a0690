import type { Environment } from '../common/environment.js';
import { Conflict, InvariantViolated, NotFound } from '../common/errors.js';
import type { Decider } from '../event-sourcing/decider.js';
import type { VerificationFlowEvent } from './verification-flow.events.js';

const SCHEMA_VERSION = 1;
/** Versions one flow may have: a bound on its stream. */
export const MAX_FLOW_VERSIONS = 1_000;

export interface FlowOwner {
  readonly organizationId: string;
  readonly environment: Environment;
}

export interface VerificationFlowState {
  readonly exists: boolean;
  readonly flowId: string;
  readonly organizationId: string;
  readonly environment: string;
  /** The newest version (0 before the flow exists). */
  readonly version: number;
  readonly links: number;
}

export type VerificationFlowCommand =
  | { readonly type: 'CreateFlow'; readonly flowId: string; readonly owner: FlowOwner; readonly definition: string }
  /** `definition`: sealed for `version`, which must be the next one (the handler seals for the version it read). */
  | { readonly type: 'PublishFlowVersion'; readonly owner: FlowOwner; readonly version: number; readonly definition: string }
  | { readonly type: 'CreateLink'; readonly owner: FlowOwner; readonly linkId: string; readonly keyId: string };

export const initialFlowState: VerificationFlowState = { exists: false, flowId: '', organizationId: '', environment: '', version: 0, links: 0 };
/** Reusable links one flow may have. */
export const MAX_FLOW_LINKS = 20;

/** A flow: created once at version 1, then each new version numbered after the last; only its own organization and environment see it. */
export function decide(command: VerificationFlowCommand, state: VerificationFlowState): VerificationFlowEvent[] {
  switch (command.type) {
    case 'CreateFlow': {
      if (state.exists) throw new Conflict('A flow with this id exists');
      const { flowId, owner, definition } = command;
      return [
        {
          type: 'VerificationFlowCreated',
          data: { flowId, organizationId: owner.organizationId, environment: owner.environment, version: 1, definition, schemaVersion: SCHEMA_VERSION },
        },
      ];
    }
    case 'PublishFlowVersion': {
      if (!state.exists || state.organizationId !== command.owner.organizationId || state.environment !== command.owner.environment)
        throw new NotFound('No verification flow with this id');
      if (command.version !== state.version + 1) throw new Conflict('The flow changed meanwhile; try again');
      if (command.version > MAX_FLOW_VERSIONS) throw new Conflict(`A flow has at most ${MAX_FLOW_VERSIONS} versions; create a new flow`);
      const { flowId, organizationId, environment } = state;
      return [
        {
          type: 'VerificationFlowVersionPublished',
          data: { flowId, organizationId, environment, version: command.version, definition: command.definition, schemaVersion: SCHEMA_VERSION },
        },
      ];
    }
    case 'CreateLink': {
      if (!state.exists || state.organizationId !== command.owner.organizationId || state.environment !== command.owner.environment)
        throw new NotFound('No verification flow with this id');
      if (state.links >= MAX_FLOW_LINKS) throw new Conflict(`A flow has at most ${MAX_FLOW_LINKS} links`);
      const { flowId, organizationId, environment } = state;
      return [{ type: 'VerificationFlowLinkCreated', data: { flowId, organizationId, environment, linkId: command.linkId, keyId: command.keyId, schemaVersion: SCHEMA_VERSION } }];
    }
    default: {
      const _exhaustive: never = command;
      throw new InvariantViolated(`unknown flow command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export function evolve(state: VerificationFlowState, event: VerificationFlowEvent): VerificationFlowState {
  switch (event.type) {
    case 'VerificationFlowCreated':
      return { exists: true, flowId: event.data.flowId, organizationId: event.data.organizationId, environment: event.data.environment, version: event.data.version, links: 0 };
    case 'VerificationFlowVersionPublished':
      if (event.data.version !== state.version + 1) throw new InvariantViolated(`flow ${state.flowId} skipped from version ${state.version} to ${event.data.version}`);
      return { ...state, version: event.data.version };
    case 'VerificationFlowLinkCreated':
      return { ...state, links: state.links + 1 };
    default: {
      const _exhaustive: never = event;
      throw new InvariantViolated(`unknown flow event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export const verificationFlowDecider: Decider<VerificationFlowState, VerificationFlowCommand, VerificationFlowEvent> = { initialState: initialFlowState, decide, evolve };
