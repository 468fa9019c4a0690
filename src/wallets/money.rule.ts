import type { WalletEntryType } from './wallet.read-model.js';
import type { WalletEvent } from './wallet.events.js';

/**
 * The wallet's money rule, the one place it is written: how each wallet event moves a wallet's
 * figures, and what the rule refuses. The decider, the wallets and wallet-ledger projections and
 * the auditor's replay all fold their figures through `moveMoney`; each tracks its reservations in
 * its own way (a map, a table, a ledger line) and hands over the held amount where it knows it.
 *
 * balance = funded - debited; reserved = the open reservations; available = balance - reserved.
 * A funding adds to funded; a reservation adds to reserved; a debit takes its reservation's amount
 * from reserved into debited; a release takes it from reserved. Refused: an amount that is not a
 * non-negative safe integer; a debit or release of a reservation that is not open, or for another
 * amount than it holds; a negative reserved or available figure (an overdraft); a total beyond the
 * integers a JavaScript number holds exactly.
 */
export interface WalletFigures {
  readonly fundedKobo: number;
  readonly debitedKobo: number;
  readonly reservedKobo: number;
}

export const NO_MONEY: WalletFigures = { fundedKobo: 0, debitedKobo: 0, reservedKobo: 0 };

export interface MoneyMove {
  readonly type: WalletEvent['type'];
  /** As read from the event: anything that is not a non-negative safe integer is refused. */
  readonly amountKobo: unknown;
  /**
   * For a debit or release: the amount of the reservation it closes, or null when none is open.
   * Left out by a caller that does not track reservations (the ledger's lines): then only the
   * figures judge it.
   */
  readonly heldKobo?: number | null;
}

export type MoneyRefusal = 'not_an_amount' | 'not_open' | 'other_amount' | 'beyond_exact_integers' | 'overdrawn';

/**
 * The figures after the move, and when the rule refuses it, why (the first rule broken). The
 * figures are moved by the event's amount even when refused, for a caller that reports and goes
 * on (the auditor's replay); an amount that is no amount leaves them as they were.
 */
export type MoneyOutcome =
  { readonly figures: WalletFigures; readonly refused?: undefined } | { readonly figures: WalletFigures; readonly refused: MoneyRefusal; readonly message: string };

/**
 * The figures of a balance and a reserved total where funded and debited are not kept apart (a
 * ledger line): the balance stands as funded, nothing debited, which moves and judges alike.
 */
export const lineFigures = (balanceKobo: number, reservedKobo: number): WalletFigures => ({ fundedKobo: balanceKobo, debitedKobo: 0, reservedKobo });

export const balanceOf = (figures: WalletFigures): number => figures.fundedKobo - figures.debitedKobo;
export const availableOf = (figures: WalletFigures): number => figures.fundedKobo - figures.debitedKobo - figures.reservedKobo;

/** A non-negative integer amount of kobo. */
export function isKoboAmount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The ledger's name for each wallet event type. */
export function entryTypeOfWalletEvent(type: WalletEvent['type']): WalletEntryType {
  switch (type) {
    case 'WalletFunded':
      return 'funding';
    case 'WalletFundsReserved':
      return 'reservation';
    case 'WalletDebited':
      return 'debit';
    case 'WalletReservationReleased':
      return 'release';
    default: {
      const _exhaustive: never = type;
      throw new Error(`invariant: unknown wallet event ${String(_exhaustive)}`);
    }
  }
}

/** How an event of this type moves the balance (funded - debited): a funding adds its amount, a debit takes it, the rest leave it. */
export function balanceChangeKobo(type: WalletEvent['type'], amountKobo: number): number {
  switch (type) {
    case 'WalletFunded':
      return amountKobo;
    case 'WalletDebited':
      return -amountKobo;
    case 'WalletFundsReserved':
    case 'WalletReservationReleased':
      return 0;
    default: {
      const _exhaustive: never = type;
      throw new Error(`invariant: unknown wallet event ${String(_exhaustive)}`);
    }
  }
}

function refused(figures: WalletFigures, reason: MoneyRefusal, message: string): MoneyOutcome {
  return { figures, refused: reason, message };
}

/** Given a wallet's figures and one of its events, the figures after it, or why the rule refuses it. */
export function moveMoney(figures: WalletFigures, move: MoneyMove): MoneyOutcome {
  const entryType = entryTypeOfWalletEvent(move.type);
  const amountKobo = move.amountKobo;
  if (!isKoboAmount(amountKobo)) return refused(figures, 'not_an_amount', 'its amount is not a non-negative whole number of kobo');
  let moved: WalletFigures;
  let closing: MoneyOutcome | undefined;
  switch (entryType) {
    case 'funding':
      moved = { fundedKobo: figures.fundedKobo + amountKobo, debitedKobo: figures.debitedKobo, reservedKobo: figures.reservedKobo };
      break;
    case 'reservation':
      moved = { fundedKobo: figures.fundedKobo, debitedKobo: figures.debitedKobo, reservedKobo: figures.reservedKobo + amountKobo };
      break;
    case 'debit':
    case 'release':
      moved = {
        fundedKobo: figures.fundedKobo,
        debitedKobo: entryType === 'debit' ? figures.debitedKobo + amountKobo : figures.debitedKobo,
        reservedKobo: figures.reservedKobo - amountKobo,
      };
      if (move.heldKobo === null) closing = refused(moved, 'not_open', `its ${entryType} closes a reservation that is not open`);
      else if (move.heldKobo !== undefined && move.heldKobo !== amountKobo) closing = refused(moved, 'other_amount', `its ${entryType} is for another amount than the reservation`);
      break;
    default: {
      const _exhaustive: never = entryType;
      throw new Error(`invariant: unknown entry type ${String(_exhaustive)}`);
    }
  }
  if (closing !== undefined) return closing;
  if (
    !Number.isSafeInteger(moved.fundedKobo) ||
    !Number.isSafeInteger(moved.debitedKobo) ||
    !Number.isSafeInteger(moved.reservedKobo) ||
    !Number.isSafeInteger(availableOf(moved))
  ) {
    return refused(moved, 'beyond_exact_integers', 'a wallet total left the integers a JavaScript number holds exactly');
  }
  if (moved.reservedKobo < 0 || availableOf(moved) < 0) return refused(moved, 'overdrawn', 'the available balance or the reserved amount went negative');
  return { figures: moved };
}
