import { describe, expect, it } from '@jest/globals';
import { FundingReferenceConflict, InsufficientBalance, InvariantViolated, ValidationFailed } from '../common/errors.js';
import { givenFor } from '../event-sourcing/decider.testing.js';
import { availableKobo, balanceKobo, evolve, initialWalletState, MAX_FUNDING_KOBO, walletDecider, type WalletCommand } from './wallet.decider.js';
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

const given = givenFor(walletDecider(ORG, 'test'));

describe('Wallet decider', () => {
  describe('reserving', () => {
    it('reserves the price when the available balance covers it exactly', () =>
      given([funded(10_000)])
        .when(reserve('vrf_a', 10_000))
        .then([reserved('vrf_a', 10_000)]));

    it('rejects a reservation above the available balance, reporting that balance', () =>
      given([funded(10_000), reserved('vrf_a', 6_000)])
        .when(reserve('vrf_b', 5_000))
        .thenThrows(InsufficientBalance, (error) => expect(error.details).toEqual({ reference: 'vrf_b', priceKobo: 5_000, balanceKobo: 4_000 })));

    it('counts debits and open reservations against the balance, but not releases', () => {
      const history = [funded(10_000), reserved('vrf_a', 3_000), debited('vrf_a', 3_000), reserved('vrf_b', 3_000), reserved('vrf_c', 2_000), released('vrf_c', 2_000)];
      const { state } = given(history);
      expect(balanceKobo(state)).toBe(7_000);
      expect(state.reservedKobo).toBe(3_000);
      expect(availableKobo(state)).toBe(4_000);
      given(history).when(reserve('vrf_d', 4_001)).thenThrows(InsufficientBalance);
      given(history)
        .when(reserve('vrf_d', 4_000))
        .then([reserved('vrf_d', 4_000)]);
    });

    it('writes nothing for a repeated reserve of an open reservation', () =>
      given([funded(10_000), reserved('vrf_a', 1_000)])
        .when(reserve('vrf_a', 1_000))
        .thenNothing());

    it('refuses a repeated reference for another amount', () =>
      given([funded(10_000), reserved('vrf_a', 1_000)])
        .when(reserve('vrf_a', 2_000))
        .thenThrows(ValidationFailed));

    it('refuses negative and fractional prices', () => {
      given([funded(10_000)])
        .when(reserve('vrf_a', -1))
        .thenThrows(ValidationFailed);
      given([funded(10_000)])
        .when(reserve('vrf_a', 1.5))
        .thenThrows(ValidationFailed);
    });
  });

  describe('capturing and releasing', () => {
    it('debits an open reservation for the amount held', () =>
      given([funded(10_000), reserved('vrf_a', 2_500)])
        .when(capture('vrf_a'))
        .then([debited('vrf_a', 2_500)]));

    it('releases an open reservation for the amount held', () => {
      const state = given([funded(10_000), reserved('vrf_a', 2_500)])
        .when(release('vrf_a'))
        .thenState();
      expect(availableKobo(state)).toBe(10_000);
      expect(balanceKobo(state)).toBe(10_000);
      expect(state.reservations.size).toBe(0);
    });

    it('writes nothing for a capture or release of a reservation already closed', () => {
      given([funded(10_000), reserved('vrf_a', 2_500), debited('vrf_a', 2_500)])
        .when(capture('vrf_a'))
        .thenNothing();
      given([funded(10_000), reserved('vrf_a', 2_500), debited('vrf_a', 2_500)])
        .when(release('vrf_a'))
        .thenNothing();
      given([funded(10_000), reserved('vrf_a', 2_500), released('vrf_a', 2_500)])
        .when(capture('vrf_a'))
        .thenNothing();
    });

    it('writes nothing for a capture of a reference never reserved', () =>
      given([funded(10_000)])
        .when(capture('vrf_unknown'))
        .thenNothing());
  });

  describe('funding', () => {
    it('credits a new funding reference', () => {
      const state = given([funded(10_000, 'sandbox-credit')])
        .when(fund('bank-transfer-1', 50_000))
        .thenState();
      expect(balanceKobo(state)).toBe(60_000);
    });

    it('writes nothing for a funding reference already credited with the same amount', () =>
      given([funded(10_000, 'bank-transfer-1')])
        .when(fund('bank-transfer-1', 10_000))
        .thenNothing());

    it('refuses a funding reference already credited with another amount, naming both amounts', () =>
      given([funded(10_000, 'bank-transfer-1')])
        .when(fund('bank-transfer-1', 99_000))
        .thenThrows(FundingReferenceConflict, (error) => {
          expect(error.code).toBe('funding_reference_conflict');
          expect(error.details).toEqual({ reference: 'bank-transfer-1', existingAmountKobo: 10_000, requestedAmountKobo: 99_000 });
        }));

    it('refuses zero, negative, fractional and oversized amounts', () => {
      for (const amountKobo of [0, -5, 10.5, MAX_FUNDING_KOBO + 1]) given([]).when(fund('f', amountKobo)).thenThrows(ValidationFailed);
      given([])
        .when(fund('f', MAX_FUNDING_KOBO))
        .then([funded(MAX_FUNDING_KOBO, 'f')]);
    });
  });

  describe('invariants', () => {
    it('fails loudly on an event of another wallet', () => {
      const other: WalletEvent = { type: 'WalletFunded', data: { organizationId: 'org_other', environment: 'test', fundingReference: 'x', amountKobo: 1, schemaVersion: 1 } };
      expect(() => given([other])).toThrow(InvariantViolated);
      expect(() => givenFor(walletDecider(ORG, 'live'))([funded(1)])).toThrow(InvariantViolated);
      expect(() => evolve(initialWalletState(ORG, 'live'), funded(1))).toThrow(InvariantViolated);
    });

    it('fails loudly on a history that overdraws the wallet', () => expect(() => given([funded(1_000), reserved('vrf_a', 1_001)])).toThrow(InvariantViolated));

    it('fails loudly on a capture of a reservation that is not open, or for another amount', () => {
      expect(() => given([funded(1_000), debited('vrf_a', 10)])).toThrow(InvariantViolated);
      expect(() => given([funded(1_000), reserved('vrf_a', 10), debited('vrf_a', 11)])).toThrow(InvariantViolated);
    });

    it('fails loudly on a funding reference credited twice', () => expect(() => given([funded(1_000, 'f'), funded(1_000, 'f')])).toThrow(InvariantViolated));

    it('never lets a sequence of decisions push the available balance below zero', () => {
      let history: WalletEvent[] = [funded(7_000)];
      let refused = 0;
      for (let i = 0; i < 20; i++) {
        try {
          history = [
            ...history,
            ...given(history)
              .when(reserve(`vrf_${i}`, 1_000))
              .events(),
          ];
        } catch (error) {
          expect(error).toBeInstanceOf(InsufficientBalance);
          refused++;
        }
        expect(availableKobo(given(history).state)).toBeGreaterThanOrEqual(0);
      }
      expect(refused).toBe(13);
      for (let i = 0; i < 7; i++)
        history = [
          ...history,
          ...given(history)
            .when(capture(`vrf_${i}`))
            .events(),
        ];
      const { state } = given(history);
      expect(balanceKobo(state)).toBe(0);
      expect(availableKobo(state)).toBe(0);
    });
  });
});
