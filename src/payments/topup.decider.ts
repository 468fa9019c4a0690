import { InvariantViolated, NotFound, TopUpNotResolvable, ValidationFailed } from '../common/errors.js';
import type { Environment } from '../common/environment.js';
import type { Decider, EventMeta } from '../event-sourcing/decider.js';
import type { TopUpEvent } from './topup.events.js';

const SCHEMA_VERSION = 1;
/**
 * How long a checkout stays the payer's to finish. Paystack's verify answers `abandoned` for a
 * transaction initialized and not paid yet, and the payer may still pay it later: within this time
 * `abandoned` is not final (the top-up stays open, its allowance counted); after it, the top-up fails.
 */
export const CHECKOUT_LIFETIME_MS = 2 * 3_600_000;

export type TopUpStatus = 'none' | 'initiated' | 'paid' | 'credited' | 'failed' | 'flagged' | 'dismissed';
/** Why an operator dismissed a top-up, crediting nothing: a fixed list, so the log says it in words everyone reads the same. */
export const DISMISS_REASONS = ['refunded_to_payer', 'credited_by_manual_funding', 'duplicate_payment', 'not_our_payment'] as const;
export type DismissReason = (typeof DISMISS_REASONS)[number];
export const RAILS = ['paystack', 'sandbox'] as const;
export type Rail = (typeof RAILS)[number];
export const CHANNELS = ['card', 'bank_transfer'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface TopUpState {
  readonly status: TopUpStatus;
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: Environment;
  readonly rail: Rail;
  readonly initiatedKobo: number;
  /** What the provider settled, once paid. */
  readonly paidKobo: number;
  readonly feesKobo: number;
  /** The Lagos day whose top-up allowance counted it ('' when none did). */
  readonly day: string;
  /** When it was initiated (null before). */
  readonly initiatedAt: Date | null;
}

/** What the provider's API said of the transaction (GET /transaction/verify/:reference, or the sandbox's same answer). */
export interface VerifiedTransaction {
  readonly status: 'success' | 'failed' | 'abandoned' | 'reversed' | 'pending';
  readonly amountKobo: number;
  readonly feesKobo: number;
  readonly currency: string;
  readonly paidAt: string | null;
  readonly providerTransactionId: string;
}

export type TopUpCommand =
  | {
      readonly type: 'InitiateTopUp';
      readonly reference: string;
      readonly organizationId: string;
      readonly environment: Environment;
      readonly rail: Rail;
      readonly channel: Channel;
      readonly amountKobo: number;
      readonly day: string;
    }
  /**
   * `reportedKobo`: the amount a webhook carried, when the verification follows one; `at`: when the
   * verification is judged (an `abandoned` checkout younger than its lifetime is not final);
   * `overDailyLimit`: a top-up that had failed is now paid, and its day's allowance could not count
   * it again within the limit.
   */
  | {
      readonly type: 'RecordVerification';
      readonly verified: VerifiedTransaction;
      readonly reportedKobo: number | null;
      readonly at: Date;
      readonly overDailyLimit?: boolean;
    }
  | { readonly type: 'MarkCredited' }
  /** An operator's resolution: `credit` with what the provider verified now, or `dismiss` for a reason. */
  | {
      readonly type: 'ResolveTopUp';
      readonly resolution: { readonly action: 'credit'; readonly verified: VerifiedTransaction } | { readonly action: 'dismiss'; readonly reason: DismissReason };
    };

export const initialTopUpState: TopUpState = {
  status: 'none',
  reference: '',
  organizationId: '',
  environment: 'test',
  rail: 'sandbox',
  initiatedKobo: 0,
  paidKobo: 0,
  feesKobo: 0,
  day: '',
  initiatedAt: null,
};

function ids(state: TopUpState) {
  return { reference: state.reference, organizationId: state.organizationId, environment: state.environment, schemaVersion: SCHEMA_VERSION };
}

/**
 * A top-up's rules: initiated, then paid (only on the provider's verified word, in naira, for the
 * amount initiated and, when a webhook named one, the amount it named), then credited once; or
 * failed (`abandoned` only once its checkout's lifetime is over; a later verified success still
 * pays it if its day's allowance can count it again, else it is flagged `over_daily_limit`); or
 * flagged for an operator, crediting nothing.
 */
export function decide(command: TopUpCommand, state: TopUpState): TopUpEvent[] {
  switch (command.type) {
    case 'InitiateTopUp': {
      if (state.status !== 'none') {
        if (state.initiatedKobo === command.amountKobo && state.organizationId === command.organizationId) return [];
        throw new ValidationFailed([{ field: 'reference', message: 'is already used by another top-up' }]);
      }
      if (!Number.isSafeInteger(command.amountKobo) || command.amountKobo < 1) throw new ValidationFailed([{ field: 'amountKobo', message: 'must be a positive integer' }]);
      const { reference, organizationId, environment, rail, channel, amountKobo, day } = command;
      return [{ type: 'TopUpInitiated', data: { reference, organizationId, environment, rail, channel, amountKobo, day, schemaVersion: SCHEMA_VERSION } }];
    }
    case 'RecordVerification': {
      if (state.status === 'none') throw new NotFound('No top-up with this reference');
      // Paid, credited, flagged or dismissed: the verified facts are already recorded (or an operator settled them).
      if (state.status === 'paid' || state.status === 'credited' || state.status === 'flagged' || state.status === 'dismissed') return [];
      const { verified, reportedKobo } = command;
      if (verified.status === 'pending') return [];
      if (verified.status === 'abandoned' && state.initiatedAt !== null && command.at.getTime() - state.initiatedAt.getTime() < CHECKOUT_LIFETIME_MS) return [];
      if (verified.status !== 'success') return state.status === 'failed' ? [] : [{ type: 'TopUpFailed', data: { ...ids(state), status: verified.status } }];
      const mismatch =
        verified.currency !== 'NGN'
          ? 'currency_mismatch'
          : verified.amountKobo !== state.initiatedKobo || (reportedKobo !== null && reportedKobo !== verified.amountKobo)
            ? 'amount_mismatch'
            : undefined;
      if (mismatch !== undefined) {
        return [
          {
            type: 'TopUpFlagged',
            data: { ...ids(state), reason: mismatch, initiatedKobo: state.initiatedKobo, verifiedKobo: verified.amountKobo, reportedKobo, currency: verified.currency.slice(0, 8) },
          },
        ];
      }
      if (state.status === 'failed' && command.overDailyLimit === true) {
        return [
          {
            type: 'TopUpFlagged',
            data: { ...ids(state), reason: 'over_daily_limit', initiatedKobo: state.initiatedKobo, verifiedKobo: verified.amountKobo, reportedKobo, currency: 'NGN' },
          },
        ];
      }
      return [
        {
          type: 'TopUpPaid',
          data: {
            ...ids(state),
            amountKobo: verified.amountKobo,
            feesKobo: verified.feesKobo,
            currency: 'NGN',
            paidAt: verified.paidAt ?? '',
            providerTransactionId: verified.providerTransactionId.slice(0, 100),
          },
        },
      ];
    }
    case 'MarkCredited': {
      if (state.status === 'credited') return [];
      if (state.status !== 'paid') throw new InvariantViolated(`a top-up ${state.status} cannot be credited`);
      return [{ type: 'TopUpCredited', data: { ...ids(state), amountKobo: state.paidKobo, fundingReference: `topup:${state.reference}` } }];
    }
    case 'ResolveTopUp': {
      if (state.status === 'none') throw new NotFound('No top-up with this reference');
      const { resolution } = command;
      if (resolution.action === 'dismiss') {
        // Only a flagged top-up is dismissed: one the provider never settled needs nothing, and one it settled is credited.
        if (state.status !== 'flagged') throw new TopUpNotResolvable(`a top-up ${state.status} is not dismissed`);
        return [{ type: 'TopUpResolved', data: { ...ids(state), resolution: 'dismiss', reason: resolution.reason } }];
      }
      // Flagged, or failed or unfinished here while the provider settled it: credited with what the provider settled, once.
      if (state.status !== 'flagged' && state.status !== 'failed' && state.status !== 'initiated') throw new TopUpNotResolvable(`a top-up ${state.status} needs no credit`);
      const { verified } = resolution;
      if (verified.status !== 'success' || verified.currency !== 'NGN' || !Number.isSafeInteger(verified.amountKobo) || verified.amountKobo < 1)
        throw new TopUpNotResolvable('the provider does not confirm a settled payment in naira');
      return [
        {
          type: 'TopUpResolved',
          data: {
            ...ids(state),
            resolution: 'credit',
            amountKobo: verified.amountKobo,
            feesKobo: verified.feesKobo,
            paidAt: verified.paidAt ?? '',
            providerTransactionId: verified.providerTransactionId.slice(0, 100),
          },
        },
      ];
    }
    default: {
      const _exhaustive: never = command;
      throw new InvariantViolated(`unknown top-up command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export function evolve(state: TopUpState, event: TopUpEvent, meta?: EventMeta): TopUpState {
  switch (event.type) {
    case 'TopUpInitiated':
      return {
        ...state,
        status: 'initiated',
        reference: event.data.reference,
        organizationId: event.data.organizationId,
        environment: event.data.environment as Environment,
        rail: event.data.rail as Rail,
        initiatedKobo: event.data.amountKobo,
        day: event.data.day ?? '',
        initiatedAt: meta?.occurredAt ?? null,
      };
    case 'TopUpPaid':
      return { ...state, status: 'paid', paidKobo: event.data.amountKobo, feesKobo: event.data.feesKobo };
    case 'TopUpCredited':
      return { ...state, status: 'credited' };
    case 'TopUpFailed':
      return { ...state, status: 'failed' };
    case 'TopUpFlagged':
      return { ...state, status: 'flagged' };
    case 'TopUpResolved':
      return event.data.resolution === 'credit' ? { ...state, status: 'paid', paidKobo: event.data.amountKobo, feesKobo: event.data.feesKobo } : { ...state, status: 'dismissed' };
    default: {
      const _exhaustive: never = event;
      throw new InvariantViolated(`unknown top-up event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export const topUpDecider: Decider<TopUpState, TopUpCommand, TopUpEvent> = { initialState: initialTopUpState, decide, evolve };
