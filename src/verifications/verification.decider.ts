import { InvariantViolated, NotFound, VerificationAlreadyExists, VerificationAlreadyFinished, VerificationNotRequested, VerificationPending } from '../common/errors.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import type { Decider } from '../event-sourcing/decider.js';
import type { VerificationEvent, VerificationRequested } from './verification.events.js';

/**
 * One verification stream, folded. Revision 0 is the request; exactly one terminal event may
 * follow. The handler appends that terminal event with expected revision 0, so a second finisher
 * (the recovery process, or a retried request) loses at the store even if it decided concurrently.
 */
export type VerificationStatus = 'pending' | 'found' | 'not_found' | 'failed';

export type Requested = VerificationRequested['data'];

export type VerificationState =
  | { readonly status: 'none' }
  | {
      readonly status: VerificationStatus;
      readonly requested: Requested;
      readonly result: JsonObject;
      readonly errorMessage: string | null;
      readonly reasonCode: string | null;
      /** Found and not_found are charged; failed (and pending) are not. */
      readonly charged: boolean;
      readonly finishedAt: string | null;
      /** When the personal data became unreadable (its key destroyed), as the codec found it; null while readable. */
      readonly personalDataErasedAt: string | null;
      /** True once a VerificationPersonalDataErased is in the stream (an erasure is recorded once). */
      readonly erasureRecorded: boolean;
    };

export type VerificationCommand =
  | { readonly type: 'RequestVerification'; readonly data: Omit<Requested, 'schemaVersion'> }
  | { readonly type: 'CompleteVerification'; readonly outcome: 'found' | 'not_found'; readonly result: JsonObject; readonly at: Date }
  | { readonly type: 'FailVerification'; readonly reasonCode: string; readonly errorMessage: string; readonly at: Date }
  | { readonly type: 'RejectVerification'; readonly priceKobo: number; readonly balanceKobo: number; readonly at: Date }
  /** Idempotent: a verification already erased decides nothing. */
  | { readonly type: 'ErasePersonalData'; readonly at: Date };

export const SCHEMA_VERSION = 1;
export const INSUFFICIENT_BALANCE_MESSAGE = 'The wallet balance is below the price of this check; no check was run';

export const initialVerificationState: VerificationState = { status: 'none' };

export function evolve(state: VerificationState, event: VerificationEvent): VerificationState {
  switch (event.type) {
    case 'VerificationRequested':
      if (state.status !== 'none') throw new InvariantViolated(`${event.data.reference} requested twice`);
      return {
        status: 'pending',
        requested: event.data,
        result: {},
        errorMessage: null,
        reasonCode: null,
        charged: false,
        finishedAt: null,
        personalDataErasedAt: event.data.personalDataErasedAt ?? null,
        erasureRecorded: false,
      };
    case 'VerificationCompleted':
      if (state.status !== 'pending') throw new InvariantViolated(`${event.data.reference} finished twice or before its request`);
      return {
        ...state,
        status: event.data.outcome,
        result: event.data.result,
        charged: true,
        finishedAt: event.data.completedAt,
        personalDataErasedAt: state.personalDataErasedAt ?? event.data.personalDataErasedAt ?? null,
      };
    case 'VerificationFailed':
      if (state.status !== 'pending') throw new InvariantViolated(`${event.data.reference} finished twice or before its request`);
      // `?? null`: a failure written without a reason code still folds (it reads as the provider's, verification.views.ts).
      return { ...state, status: 'failed', errorMessage: event.data.errorMessage, reasonCode: event.data.reasonCode ?? null, finishedAt: event.data.failedAt };
    case 'VerificationRejected':
      if (state.status !== 'pending') throw new InvariantViolated(`${event.data.reference} finished twice or before its request`);
      return { ...state, status: 'failed', errorMessage: event.data.errorMessage, reasonCode: event.data.reasonCode, finishedAt: event.data.rejectedAt };
    case 'VerificationPersonalDataErased':
      if (state.status === 'none' || state.status === 'pending') throw new InvariantViolated(`${event.data.reference} erased before it finished`);
      return { ...state, personalDataErasedAt: event.data.erasedAt, erasureRecorded: true };
    default: {
      const _exhaustive: never = event;
      throw new InvariantViolated(`unknown verification event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export function decide(command: VerificationCommand, state: VerificationState): VerificationEvent[] {
  if (command.type === 'RequestVerification') {
    if (state.status !== 'none') throw new VerificationAlreadyExists('This reference is already in use');
    return [{ type: 'VerificationRequested', data: { ...command.data, schemaVersion: SCHEMA_VERSION } }];
  }
  if (command.type === 'ErasePersonalData') {
    if (state.status === 'none') throw new NotFound('No verification with this reference');
    if (state.status === 'pending') throw new VerificationPending('This verification is still running; erase it once it has finished');
    if (state.erasureRecorded) return [];
    // A key already destroyed (offboarding) dates the erasure; the event records it once.
    const erasedAt = state.personalDataErasedAt === null ? command.at.toISOString() : new Date(state.personalDataErasedAt).toISOString();
    return [{ type: 'VerificationPersonalDataErased', data: { reference: state.requested.reference, erasedAt, schemaVersion: SCHEMA_VERSION } }];
  }
  if (state.status === 'none') throw new VerificationNotRequested('No verification was requested under this reference');
  if (state.status !== 'pending') throw new VerificationAlreadyFinished('This verification has already finished');
  const reference = state.requested.reference;
  switch (command.type) {
    case 'CompleteVerification':
      return [
        {
          type: 'VerificationCompleted',
          data: { reference, outcome: command.outcome, result: command.result, completedAt: command.at.toISOString(), schemaVersion: SCHEMA_VERSION },
        },
      ];
    case 'FailVerification':
      return [
        {
          type: 'VerificationFailed',
          data: { reference, reasonCode: command.reasonCode, errorMessage: command.errorMessage, failedAt: command.at.toISOString(), schemaVersion: SCHEMA_VERSION },
        },
      ];
    case 'RejectVerification':
      return [
        {
          type: 'VerificationRejected',
          data: {
            reference,
            reasonCode: 'insufficient_balance',
            errorMessage: INSUFFICIENT_BALANCE_MESSAGE,
            priceKobo: command.priceKobo,
            balanceKobo: command.balanceKobo,
            rejectedAt: command.at.toISOString(),
            schemaVersion: SCHEMA_VERSION,
          },
        },
      ];
    default: {
      const _exhaustive: never = command;
      throw new InvariantViolated(`unknown verification command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export const verificationDecider: Decider<VerificationState, VerificationCommand, VerificationEvent> = { initialState: initialVerificationState, decide, evolve };
