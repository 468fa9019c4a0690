import { describe, it } from '@jest/globals';
import { InvariantViolated, NotFound, TopUpNotResolvable } from '../common/errors.js';
import { GIVEN_AT, givenFor } from '../event-sourcing/decider.testing.js';
import { CHECKOUT_LIFETIME_MS, topUpDecider, type TopUpCommand, type VerifiedTransaction } from './topup.decider.js';
import type { TopUpEvent } from './topup.events.js';

const ids = { reference: 'top_01JD3Q9ZK8W6V2C4X7N5B0M1TR', organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR', environment: 'live', schemaVersion: 1 };
const initiated: TopUpEvent = { type: 'TopUpInitiated', data: { ...ids, rail: 'paystack', channel: 'card', amountKobo: 500_000 } };
const paid: TopUpEvent = {
  type: 'TopUpPaid',
  data: { ...ids, amountKobo: 500_000, feesKobo: 7_500, currency: 'NGN', paidAt: '2026-12-01T10:00:00.000Z', providerTransactionId: '4099260516' },
};
const credited: TopUpEvent = { type: 'TopUpCredited', data: { ...ids, amountKobo: 500_000, fundingReference: `topup:${ids.reference}` } };
const verified = (over: Partial<VerifiedTransaction> = {}): VerifiedTransaction => ({
  status: 'success',
  amountKobo: 500_000,
  feesKobo: 7_500,
  currency: 'NGN',
  paidAt: '2026-12-01T10:00:00.000Z',
  providerTransactionId: '4099260516',
  ...over,
});
/** The verification judged a minute after the top-up was initiated (the givens happened at GIVEN_AT). */
const record = (over: Partial<VerifiedTransaction> = {}, reportedKobo: number | null = null, at = new Date(GIVEN_AT.getTime() + 60_000)): TopUpCommand => ({
  type: 'RecordVerification',
  verified: verified(over),
  reportedKobo,
  at,
});
const given = givenFor(topUpDecider);

describe('Top-up decider', () => {
  it('pays on a verified success for the amount initiated, with the fees as reported', () => given([initiated]).when(record({}, 500_000)).then([paid]));

  it('flags, paying nothing, when the webhook named another amount than the verified one', () =>
    given([initiated])
      .when(record({}, 900_000))
      .then([{ type: 'TopUpFlagged', data: { ...ids, reason: 'amount_mismatch', initiatedKobo: 500_000, verifiedKobo: 500_000, reportedKobo: 900_000, currency: 'NGN' } }]));

  it('flags when the verified amount is not the one initiated', () =>
    given([initiated])
      .when(record({ amountKobo: 400_000 }))
      .then([{ type: 'TopUpFlagged', data: { ...ids, reason: 'amount_mismatch', initiatedKobo: 500_000, verifiedKobo: 400_000, reportedKobo: null, currency: 'NGN' } }]));

  it('flags a payment in another currency', () =>
    given([initiated])
      .when(record({ currency: 'USD' }))
      .then([{ type: 'TopUpFlagged', data: { ...ids, reason: 'currency_mismatch', initiatedKobo: 500_000, verifiedKobo: 500_000, reportedKobo: null, currency: 'USD' } }]));

  it('records a failure once, and a later verified success still pays', () =>
    given([initiated, { type: 'TopUpFailed', data: { ...ids, status: 'abandoned' } }])
      .when(record())
      .then([paid]));

  it('leaves a checkout Paystack answers `abandoned` open within its lifetime (the payer may still pay), and fails it after', () => {
    given([initiated])
      .when(record({ status: 'abandoned' }, null, new Date(GIVEN_AT.getTime() + CHECKOUT_LIFETIME_MS - 1)))
      .then([]);
    given([initiated])
      .when(record({ status: 'abandoned' }, null, new Date(GIVEN_AT.getTime() + CHECKOUT_LIFETIME_MS)))
      .then([{ type: 'TopUpFailed', data: { ...ids, status: 'abandoned' } }]);
  });

  it('fails a declined payment at once', () =>
    given([initiated])
      .when(record({ status: 'failed' }))
      .then([{ type: 'TopUpFailed', data: { ...ids, status: 'failed' } }]));

  it("holds for an operator a failed top-up paid after all when its day's allowance could not count it again", () =>
    given([initiated, { type: 'TopUpFailed', data: { ...ids, status: 'abandoned' } }])
      .when({ ...record(), overDailyLimit: true } as TopUpCommand)
      .then([{ type: 'TopUpFlagged', data: { ...ids, reason: 'over_daily_limit', initiatedKobo: 500_000, verifiedKobo: 500_000, reportedKobo: null, currency: 'NGN' } }]));

  it('writes nothing for a pending transaction, nor for a second failure', () =>
    given([initiated, { type: 'TopUpFailed', data: { ...ids, status: 'failed' } }])
      .when(record({ status: 'failed' }))
      .then([]));

  it('writes nothing more once paid, credited or flagged', () => given([initiated, paid, credited]).when(record({}, 1)).then([]));

  it('credits once', () => given([initiated, paid]).when({ type: 'MarkCredited' }).then([credited]));
  it('a second credit writes nothing', () => given([initiated, paid, credited]).when({ type: 'MarkCredited' }).then([]));
  it('refuses to credit what was not paid', () => given([initiated]).when({ type: 'MarkCredited' }).thenThrows(InvariantViolated));
  it('knows no verification of an unknown top-up', () => given([]).when(record()).thenThrows(NotFound));

  describe("an operator's resolution", () => {
    const flagged: TopUpEvent = {
      type: 'TopUpFlagged',
      data: { ...ids, reason: 'amount_mismatch', initiatedKobo: 500_000, verifiedKobo: 450_000, reportedKobo: 500_000, currency: 'NGN' },
    };
    const resolvedCredit: TopUpEvent = {
      type: 'TopUpResolved',
      data: { ...ids, resolution: 'credit', amountKobo: 450_000, feesKobo: 6_750, paidAt: '2026-12-01T10:00:00.000Z', providerTransactionId: '4099260516' },
    };
    const credit = (over: Partial<VerifiedTransaction> = {}): TopUpCommand => ({ type: 'ResolveTopUp', resolution: { action: 'credit', verified: verified(over) } });
    const dismiss: TopUpCommand = { type: 'ResolveTopUp', resolution: { action: 'dismiss', reason: 'refunded_to_payer' } };

    it("credits a flagged top-up with the provider's settled amount, then it is credited as any paid one", () =>
      given([initiated, flagged])
        .when(credit({ amountKobo: 450_000, feesKobo: 6_750 }))
        .then([resolvedCredit]));
    it('a resolved credit leaves it paid for the normal credit', () =>
      given([initiated, flagged, resolvedCredit])
        .when({ type: 'MarkCredited' })
        .then([{ type: 'TopUpCredited', data: { ...ids, amountKobo: 450_000, fundingReference: `topup:${ids.reference}` } }]));
    it('credits a failed top-up the provider settled after all', () =>
      given([initiated, { type: 'TopUpFailed', data: { ...ids, status: 'abandoned' } }])
        .when(credit())
        .then([
          {
            type: 'TopUpResolved',
            data: { ...ids, resolution: 'credit', amountKobo: 500_000, feesKobo: 7_500, paidAt: '2026-12-01T10:00:00.000Z', providerTransactionId: '4099260516' },
          },
        ]));
    it('refuses a credit the provider does not confirm, or in another currency', () => {
      given([initiated, flagged])
        .when(credit({ status: 'reversed' }))
        .thenThrows(TopUpNotResolvable);
      given([initiated, flagged])
        .when(credit({ currency: 'USD' }))
        .thenThrows(TopUpNotResolvable);
    });
    it('refuses a second resolution, and a credit of what is credited', () => {
      given([initiated, flagged, resolvedCredit]).when(credit()).thenThrows(TopUpNotResolvable);
      given([initiated, paid, credited]).when(credit()).thenThrows(TopUpNotResolvable);
      given([initiated, flagged, { type: 'TopUpResolved', data: { ...ids, resolution: 'dismiss', reason: 'refunded_to_payer' } }])
        .when(dismiss)
        .thenThrows(TopUpNotResolvable);
    });
    it('dismisses a flagged top-up only, for its reason, and a dismissed one is not paid by a later verification', () => {
      given([initiated, flagged])
        .when(dismiss)
        .then([{ type: 'TopUpResolved', data: { ...ids, resolution: 'dismiss', reason: 'refunded_to_payer' } }]);
      given([initiated]).when(dismiss).thenThrows(TopUpNotResolvable);
      given([initiated, flagged, { type: 'TopUpResolved', data: { ...ids, resolution: 'dismiss', reason: 'refunded_to_payer' } }])
        .when(record())
        .then([]);
    });
  });
});
