import { describe, expect, it } from '@jest/globals';
import { availableOf, balanceChangeKobo, balanceOf, moveMoney, NO_MONEY, type MoneyMove, type WalletFigures } from './money.rule.js';

const figures = (fundedKobo: number, debitedKobo: number, reservedKobo: number): WalletFigures => ({ fundedKobo, debitedKobo, reservedKobo });
const funding = (amountKobo: unknown): MoneyMove => ({ type: 'WalletFunded', amountKobo });
const reservation = (amountKobo: unknown): MoneyMove => ({ type: 'WalletFundsReserved', amountKobo });
const debit = (amountKobo: unknown, heldKobo?: number | null): MoneyMove => ({ type: 'WalletDebited', amountKobo, heldKobo });
const release = (amountKobo: unknown, heldKobo?: number | null): MoneyMove => ({ type: 'WalletReservationReleased', amountKobo, heldKobo });

describe('The wallet money rule', () => {
  describe('moves the figures', () => {
    it('a funding adds to funded and so to the balance', () => {
      const moved = moveMoney(figures(1_000, 200, 300), funding(5_000));
      expect(moved).toEqual({ figures: figures(6_000, 200, 300) });
      expect(balanceOf(moved.figures)).toBe(5_800);
      expect(availableOf(moved.figures)).toBe(5_500);
    });

    it('a reservation adds to reserved, leaving the balance', () => expect(moveMoney(figures(1_000, 0, 0), reservation(400))).toEqual({ figures: figures(1_000, 0, 400) }));

    it('a debit takes its reservation from reserved into debited', () => expect(moveMoney(figures(1_000, 0, 400), debit(400, 400))).toEqual({ figures: figures(1_000, 400, 0) }));

    it('a release gives its reservation back to the available balance', () =>
      expect(moveMoney(figures(1_000, 0, 400), release(400, 400))).toEqual({ figures: figures(1_000, 0, 0) }));

    it('a reservation of exactly the available balance leaves nothing available', () =>
      expect(moveMoney(figures(1_000, 300, 200), reservation(500))).toEqual({ figures: figures(1_000, 300, 700) }));

    it('a close is judged by the figures alone when the caller does not say what it holds', () =>
      expect(moveMoney(figures(1_000, 0, 400), debit(400))).toEqual({ figures: figures(1_000, 400, 0) }));
  });

  describe('refuses', () => {
    it('a reservation above the available balance (an overdraft), moving the figures anyway for a replay that goes on', () =>
      expect(moveMoney(figures(1_000, 300, 200), reservation(501))).toEqual({
        figures: figures(1_000, 300, 701),
        refused: 'overdrawn',
        message: 'the available balance or the reserved amount went negative',
      }));

    it('a close that takes more than is reserved', () => expect(moveMoney(figures(1_000, 0, 100), release(200)).refused).toBe('overdrawn'));

    it('a debit or release of a reservation that is not open', () => {
      expect(moveMoney(figures(1_000, 0, 400), debit(400, null))).toMatchObject({ refused: 'not_open', message: 'its debit closes a reservation that is not open' });
      expect(moveMoney(figures(1_000, 0, 400), release(400, null))).toMatchObject({ refused: 'not_open', message: 'its release closes a reservation that is not open' });
    });

    it('a debit or release for another amount than the reservation holds', () => {
      expect(moveMoney(figures(1_000, 0, 400), debit(300, 400))).toMatchObject({ refused: 'other_amount', figures: figures(1_000, 300, 100) });
      expect(moveMoney(figures(1_000, 0, 400), release(300, 400))).toMatchObject({ refused: 'other_amount', message: 'its release is for another amount than the reservation' });
    });

    it.each([
      ['a negative amount', -1],
      ['a fraction', 1.5],
      ['text', '100'],
      ['nothing', undefined],
      ['beyond exact integers', 2 ** 53],
    ])('%s as an amount, leaving the figures', (_, amountKobo) =>
      expect(moveMoney(figures(1_000, 0, 0), funding(amountKobo))).toEqual({
        figures: figures(1_000, 0, 0),
        refused: 'not_an_amount',
        message: 'its amount is not a non-negative whole number of kobo',
      }),
    );

    it('a total beyond the integers a JavaScript number holds exactly', () =>
      expect(moveMoney(figures(Number.MAX_SAFE_INTEGER - 1, 0, 0), funding(2)).refused).toBe('beyond_exact_integers'));
  });

  it('starts every wallet at nothing', () => {
    expect(NO_MONEY).toEqual(figures(0, 0, 0));
    expect(moveMoney(NO_MONEY, debit(1, 1)).refused).toBe('overdrawn');
  });

  it('moves the balance by the same amount in balanceChangeKobo as in moveMoney, for every event type', () => {
    const before = figures(10_000, 1_000, 2_000);
    for (const move of [funding(700), reservation(700), debit(700, 700), release(700, 700)]) {
      const { figures: after } = moveMoney(before, move);
      expect(balanceOf(after) - balanceOf(before)).toBe(balanceChangeKobo(move.type, 700));
    }
  });
});
