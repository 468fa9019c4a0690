import { MAX_FUNDING_KOBO } from '../config/config.js';
import { Map as ImmutableMap } from 'immutable';
import type { Environment } from '../common/environment.js';
import { FundingReferenceConflict, InsufficientBalance, InvariantViolated, ValidationFailed } from '../common/errors.js';
import type { Decider } from '../event-sourcing/decider.js';
import { availableOf, balanceOf, isKoboAmount, moveMoney, type WalletFigures } from './money.rule.js';
import type { WalletDebited, WalletEvent, WalletFunded, WalletFundsReserved, WalletReservationReleased } from './wallet.events.js';

export { MAX_FUNDING_KOBO };
/** A reservation is a check's price: never more than a funding could ever cover. */
export const MAX_RESERVATION_KOBO = MAX_FUNDING_KOBO;
export const MAX_REFERENCE_LENGTH = 100;
export const MAX_REASON_LENGTH = 200;
const SCHEMA_VERSION = 1;

/**
 * The folded wallet stream. Balance = funded - debited; reserved = the open reservations;
 * available = balance - reserved, which no event may ever push below zero.
 *
 * Closed reservations are not remembered: references are fresh per verification and the
 * verification stream's expected revisions stop a reference from being reserved twice, so the
 * state stays bounded by the checks in flight rather than growing with the wallet's history.
 * The open reservations are a persistent map: each event's new state shares the old one's entries
 * instead of copying them (a copy per event costs in proportion to the checks in flight, so a
 * backlog made every later event dearer).
 */
export interface WalletState {
  readonly organizationId: string;
  readonly environment: Environment;
  readonly fundedKobo: number;
  readonly debitedKobo: number;
  readonly reservedKobo: number;
  readonly reservations: ImmutableMap<string, number>;
  /** Each funding reference credited, with its amount: a reuse for another amount is a conflict, not a repeat. */
  readonly fundingReferences: ImmutableMap<string, number>;
}

export type WalletCommand =
  | { readonly type: 'ReserveFunds'; readonly reference: string; readonly amountKobo: number; readonly scope: string }
  | { readonly type: 'CaptureReservation'; readonly reference: string }
  | { readonly type: 'ReleaseReservation'; readonly reference: string; readonly reason: string }
  | { readonly type: 'FundWallet'; readonly fundingReference: string; readonly amountKobo: number };

export function initialWalletState(organizationId: string, environment: Environment): WalletState {
  return {
    organizationId,
    environment,
    fundedKobo: 0,
    debitedKobo: 0,
    reservedKobo: 0,
    reservations: ImmutableMap<string, number>(),
    fundingReferences: ImmutableMap<string, number>(),
  };
}

/** The rules of one wallet's stream, whose initial state names the wallet. */
export function walletDecider(organizationId: string, environment: Environment): Decider<WalletState, WalletCommand, WalletEvent> {
  return { initialState: initialWalletState(organizationId, environment), decide, evolve };
}

export function balanceKobo(state: WalletState): number {
  return balanceOf(state);
}

export function availableKobo(state: WalletState): number {
  return availableOf(state);
}

export { isKoboAmount };

/** A funding or reservation reference of 1 to MAX_REFERENCE_LENGTH characters. */
export function isWalletReference(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_REFERENCE_LENGTH;
}

/** The state's figures moved by the event (money.rule.ts), or InvariantViolated where the rule refuses it. */
function moved(state: WalletState, event: WalletEvent, heldKobo?: number | null): WalletFigures {
  const outcome = moveMoney(state, { type: event.type, amountKobo: event.data.amountKobo, heldKobo });
  if (outcome.refused !== undefined) throw new InvariantViolated(`${event.type}: ${outcome.message}`);
  return outcome.figures;
}

export function evolve(state: WalletState, event: WalletEvent): WalletState {
  if (event.data.organizationId !== state.organizationId || event.data.environment !== state.environment) {
    throw new InvariantViolated(`a ${event.type} of another wallet was folded into wallet ${state.organizationId}.${state.environment}`);
  }
  switch (event.type) {
    case 'WalletFunded': {
      if (state.fundingReferences.has(event.data.fundingReference)) throw new InvariantViolated('a funding reference was credited twice');
      return { ...state, ...moved(state, event), fundingReferences: state.fundingReferences.set(event.data.fundingReference, event.data.amountKobo) };
    }
    case 'WalletFundsReserved': {
      if (state.reservations.has(event.data.reference)) throw new InvariantViolated('a reference was reserved twice while open');
      return { ...state, ...moved(state, event), reservations: state.reservations.set(event.data.reference, event.data.amountKobo) };
    }
    case 'WalletDebited':
    case 'WalletReservationReleased':
      return { ...state, ...moved(state, event, state.reservations.get(event.data.reference) ?? null), reservations: state.reservations.delete(event.data.reference) };
    default: {
      const _exhaustive: never = event;
      throw new InvariantViolated(`unknown wallet event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

function assertReference(reference: string, field: string): void {
  if (!isWalletReference(reference)) {
    throw new ValidationFailed([{ field, message: `must be 1 to ${MAX_REFERENCE_LENGTH} characters` }]);
  }
}

/**
 * What a command does to the wallet: the events to append, possibly none when it was already done
 * (a repeated funding reference for the same amount, a capture or release of a reservation that is not open, a repeated
 * reserve of an open reservation). A reservation above the available balance throws
 * InsufficientBalance with the available balance as `balanceKobo`; a funding reference reused for
 * another amount throws FundingReferenceConflict with both amounts.
 */
export function decide(command: WalletCommand, state: WalletState): WalletEvent[] {
  const wallet = { organizationId: state.organizationId, environment: state.environment };
  switch (command.type) {
    case 'ReserveFunds': {
      assertReference(command.reference, 'reference');
      if (!Number.isSafeInteger(command.amountKobo) || command.amountKobo < 0 || command.amountKobo > MAX_RESERVATION_KOBO) {
        throw new ValidationFailed([{ field: 'amountKobo', message: `must be an integer from 0 to ${MAX_RESERVATION_KOBO}` }]);
      }
      const openKobo = state.reservations.get(command.reference);
      if (openKobo !== undefined) {
        if (openKobo !== command.amountKobo) throw new ValidationFailed([{ field: 'reference', message: 'is already reserved for another amount' }]);
        return [];
      }
      // Sufficiency is the money rule's: the reservation may not overdraw the wallet.
      if (moveMoney(state, { type: 'WalletFundsReserved', amountKobo: command.amountKobo }).refused === 'overdrawn') {
        const available = availableKobo(state);
        throw new InsufficientBalance('The wallet balance is too low for this check', { reference: command.reference, priceKobo: command.amountKobo, balanceKobo: available });
      }
      const event: WalletFundsReserved = {
        type: 'WalletFundsReserved',
        data: { ...wallet, reference: command.reference, amountKobo: command.amountKobo, scope: command.scope, schemaVersion: SCHEMA_VERSION },
      };
      return [event];
    }
    case 'CaptureReservation': {
      const heldKobo = state.reservations.get(command.reference);
      if (heldKobo === undefined) return [];
      const event: WalletDebited = { type: 'WalletDebited', data: { ...wallet, reference: command.reference, amountKobo: heldKobo, schemaVersion: SCHEMA_VERSION } };
      return [event];
    }
    case 'ReleaseReservation': {
      const heldKobo = state.reservations.get(command.reference);
      if (heldKobo === undefined) return [];
      const event: WalletReservationReleased = {
        type: 'WalletReservationReleased',
        data: { ...wallet, reference: command.reference, amountKobo: heldKobo, reason: command.reason.slice(0, MAX_REASON_LENGTH), schemaVersion: SCHEMA_VERSION },
      };
      return [event];
    }
    case 'FundWallet': {
      assertReference(command.fundingReference, 'reference');
      if (!Number.isSafeInteger(command.amountKobo) || command.amountKobo < 1 || command.amountKobo > MAX_FUNDING_KOBO) {
        throw new ValidationFailed([{ field: 'amountKobo', message: `must be an integer from 1 to ${MAX_FUNDING_KOBO}` }]);
      }
      const creditedKobo = state.fundingReferences.get(command.fundingReference);
      if (creditedKobo !== undefined) {
        if (creditedKobo === command.amountKobo) return [];
        throw new FundingReferenceConflict('This funding reference already credited the wallet with another amount', {
          reference: command.fundingReference,
          existingAmountKobo: creditedKobo,
          requestedAmountKobo: command.amountKobo,
        });
      }
      const event: WalletFunded = {
        type: 'WalletFunded',
        data: { ...wallet, fundingReference: command.fundingReference, amountKobo: command.amountKobo, schemaVersion: SCHEMA_VERSION },
      };
      return [event];
    }
    default: {
      const _exhaustive: never = command;
      throw new InvariantViolated(`unknown wallet command ${(_exhaustive as { type: string }).type}`);
    }
  }
}
