import { describe, expect, it } from '@jest/globals';
import { InsufficientBalance, ValidationFailed } from '../common/errors.js';
import {
  availableKobo,
  balanceKobo,
  decide,
  evolve,
  fold,
  initialWalletState,
  MAX_FUNDING_KOBO,
  type WalletCommand,
  WalletInvariantViolated,
  type WalletState,
} from './wallet.decider.js';
import type { WalletEvent } from './wallet.events.js';

const ORG = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const wallet = { organizationId: ORG, environment: 'test' as const };

const funded = (amountKobo: number, fundingReference = `fund-${amountKobo}`): WalletEvent => ({
  type: 'WalletFunded',
  data: { ...wallet, fundingReference, amountKobo, schemaVersion: 1 },
});
const reserved = (reference: string, amountKobo: number): WalletEvent => ({
  type: 'WalletFundsReserved',
  data: { ...wallet, reference, amountKobo, scope: 'nin', schemaVersion: 1 },
});
const debited = (reference: string, amountKobo: number): WalletEvent => ({ type: 'WalletDebited', data: { ...wallet, reference, amountKobo, schemaVersion: 1 } });
const released = (reference: string, amountKobo: number): WalletEvent => ({
  type: 'WalletReservationReleased',
  data: { ...wallet, reference, amountKobo, reason: 'provider_failed', schemaVersion: 1 },
});

const reserve = (reference: string, amountKobo: number): WalletCommand => ({ type: 'ReserveFunds', reference, amountKobo, scope: 'nin' });
const capture = (reference: string): WalletCommand => ({ type: 'CaptureReservation', reference });
const release = (reference: string): WalletCommand => ({ type: 'ReleaseReservation', reference, reason: 'provider_failed' });
const fund = (fundingReference: string, amountKobo: number): WalletCommand => ({ type: 'FundWallet', fundingReference, amountKobo });

function given(history: readonly WalletEvent[]) {
  const state = fold(initialWalletState(ORG, 'test'), history);
  return {
    when: (command: WalletCommand) => ({
      then: (expected: readonly WalletEvent[]) => expect(decide(command, state)).toEqual(expected),
      thenThrows: (error: new (...args: never[]) => Error) => expect(() => decide(command, state)).toThrow(error),
      thenState: (): WalletState => fold(state, decide(command, state)),
    }),
  };
}

describe('Wallet decider', () => {
  describe('reserving', () => {
    it('reserves the price when the available balance covers it exactly', () =>
      given([funded(10_000)]).when(reserve('vrf_a', 10_000)).then([reserved('vrf_a', 10_000)]));

    it('rejects a reservation above the available balance, reporting that balance', () => {
      given([funded(10_000), reserved('vrf_a', 6_000)]).when(reserve('vrf_b', 5_000)).thenThrows(InsufficientBalance);
      const state = fold(initialWalletState(ORG, 'test'), [funded(10_000), reserved('vrf_a', 6_000)]);
      try {
        decide(reserve('vrf_b', 5_000), state);
        throw new Error('expected a refusal');
      } catch (error) {
        expect(error).toBeInstanceOf(InsufficientBalance);
        expect((error as InsufficientBalance).details).toEqual({ reference: 'vrf_b', priceKobo: 5_000, balanceKobo: 4_000 });
      }
    });

    it('counts debits and open reservations against the balance, but not releases', () => {
      const history = [funded(10_000), reserved('vrf_a', 3_000), debited('vrf_a', 3_000), reserved('vrf_b', 3_000), reserved('vrf_c', 2_000), released('vrf_c', 2_000)];
      const state = fold(initialWalletState(ORG, 'test'), history);
      expect(balanceKobo(state)).toBe(7_000);
      expect(state.reservedKobo).toBe(3_000);
      expect(availableKobo(state)).toBe(4_000);
      given(history).when(reserve('vrf_d', 4_001)).thenThrows(InsufficientBalance);
      given(history).when(reserve('vrf_d', 4_000)).then([reserved('vrf_d', 4_000)]);
    });

    it('writes nothing for a repeated reserve of an open reservation', () => given([funded(10_000), reserved('vrf_a', 1_000)]).when(reserve('vrf_a', 1_000)).then([]));

    it('refuses a repeated reference for another amount', () => given([funded(10_000), reserved('vrf_a', 1_000)]).when(reserve('vrf_a', 2_000)).thenThrows(ValidationFailed));

    it('refuses negative and fractional prices', () => {
      given([funded(10_000)]).when(reserve('vrf_a', -1)).thenThrows(ValidationFailed);
      given([funded(10_000)]).when(reserve('vrf_a', 1.5)).thenThrows(ValidationFailed);
    });
  });

  describe('capturing and releasing', () => {
    it('debits an open reservation for the amount held', () => given([funded(10_000), reserved('vrf_a', 2_500)]).when(capture('vrf_a')).then([debited('vrf_a', 2_500)]));

    it('releases an open reservation for the amount held', () => {
      const state = given([funded(10_000), reserved('vrf_a', 2_500)]).when(release('vrf_a')).thenState();
      expect(availableKobo(state)).toBe(10_000);
      expect(balanceKobo(state)).toBe(10_000);
      expect(state.reservations.size).toBe(0);
    });

    it('writes nothing for a capture or release of a reservation already closed', () => {
      given([funded(10_000), reserved('vrf_a', 2_500), debited('vrf_a', 2_500)]).when(capture('vrf_a')).then([]);
      given([funded(10_000), reserved('vrf_a', 2_500), debited('vrf_a', 2_500)]).when(release('vrf_a')).then([]);
      given([funded(10_000), reserved('vrf_a', 2_500), released('vrf_a', 2_500)]).when(capture('vrf_a')).then([]);
    });

    it('writes nothing for a capture of a reference never reserved', () => given([funded(10_000)]).when(capture('vrf_unknown')).then([]));
  });

  describe('funding', () => {
    it('credits a new funding reference', () => {
      const state = given([funded(10_000, 'sandbox-credit')]).when(fund('bank-transfer-1', 50_000)).thenState();
      expect(balanceKobo(state)).toBe(60_000);
    });

    it('writes nothing for a funding reference already credited', () => given([funded(10_000, 'bank-transfer-1')]).when(fund('bank-transfer-1', 99_000)).then([]));

    it('refuses zero, negative, fractional and oversized amounts', () => {
      for (const amountKobo of [0, -5, 10.5, MAX_FUNDING_KOBO + 1]) given([]).when(fund('f', amountKobo)).thenThrows(ValidationFailed);
      given([]).when(fund('f', MAX_FUNDING_KOBO)).then([funded(MAX_FUNDING_KOBO, 'f')]);
    });
  });

  describe('invariants', () => {
    it('fails loudly on an event of another wallet', () => {
      const other: WalletEvent = { type: 'WalletFunded', data: { organizationId: 'org_other', environment: 'test', fundingReference: 'x', amountKobo: 1, schemaVersion: 1 } };
      expect(() => evolve(initialWalletState(ORG, 'test'), other)).toThrow(WalletInvariantViolated);
      expect(() => evolve(initialWalletState(ORG, 'live'), funded(1))).toThrow(WalletInvariantViolated);
    });

    it('fails loudly on a history that overdraws the wallet', () =>
      expect(() => fold(initialWalletState(ORG, 'test'), [funded(1_000), reserved('vrf_a', 1_001)])).toThrow(WalletInvariantViolated));

    it('fails loudly on a capture of a reservation that is not open, or for another amount', () => {
      expect(() => fold(initialWalletState(ORG, 'test'), [funded(1_000), debited('vrf_a', 10)])).toThrow(WalletInvariantViolated);
      expect(() => fold(initialWalletState(ORG, 'test'), [funded(1_000), reserved('vrf_a', 10), debited('vrf_a', 11)])).toThrow(WalletInvariantViolated);
    });

    it('fails loudly on a funding reference credited twice', () =>
      expect(() => fold(initialWalletState(ORG, 'test'), [funded(1_000, 'f'), funded(1_000, 'f')])).toThrow(WalletInvariantViolated));

    it('never lets a sequence of decisions push the available balance below zero', () => {
      let state = fold(initialWalletState(ORG, 'test'), [funded(7_000)]);
      let refused = 0;
      for (let i = 0; i < 20; i++) {
        try {
          state = fold(state, decide(reserve(`vrf_${i}`, 1_000), state));
        } catch (error) {
          expect(error).toBeInstanceOf(InsufficientBalance);
          refused++;
        }
        expect(availableKobo(state)).toBeGreaterThanOrEqual(0);
      }
      expect(refused).toBe(13);
      for (let i = 0; i < 7; i++) state = fold(state, decide(capture(`vrf_${i}`), state));
      expect(balanceKobo(state)).toBe(0);
      expect(availableKobo(state)).toBe(0);
    });
  });
});
