import { describe, expect, it } from '@jest/globals';
import { InvariantViolated, NotFound, VerificationAlreadyExists, VerificationAlreadyFinished, VerificationNotRequested, VerificationPending } from '../common/errors.js';
import { givenFor } from '../event-sourcing/decider.testing.js';
import { evolve, initialVerificationState, verificationDecider, type VerificationCommand } from './verification.decider.js';
import type { VerificationEvent, VerificationRequested } from './verification.events.js';
import { verificationView } from './verification.views.js';

const at = new Date('2026-11-22T08:00:00.000Z');
const requestedData: VerificationRequested['data'] = {
  schemaVersion: 1,
  reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
  organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
  environment: 'test',
  keyId: 'key_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
  scope: 'nin',
  category: 'kyc',
  countryCode: 'NG',
  request: { nin: '12345678905' },
  priceKobo: 10_000,
  requestedAt: at.toISOString(),
};
const requested: VerificationRequested = { type: 'VerificationRequested', data: requestedData };

const given = givenFor(verificationDecider);

const complete: VerificationCommand = { type: 'CompleteVerification', outcome: 'found', result: { firstName: 'Ada' }, at };
const fail: VerificationCommand = { type: 'FailVerification', reasonCode: 'provider_error', errorMessage: 'failed', at };
const reject: VerificationCommand = { type: 'RejectVerification', priceKobo: 10_000, balanceKobo: 500, at };

describe('Requesting a verification', () => {
  it('records the request on a new stream', () => given([]).when({ type: 'RequestVerification', data: requestedData }).then([requested]));
  it('refuses to reuse a reference', () => given([requested]).when({ type: 'RequestVerification', data: requestedData }).thenThrows(VerificationAlreadyExists));
});

describe('Finishing a verification', () => {
  it('completes an open verification as found, charged', () => {
    given([requested])
      .when(complete)
      .then([
        {
          type: 'VerificationCompleted',
          data: { schemaVersion: 1, reference: requestedData.reference, outcome: 'found', result: { firstName: 'Ada' }, completedAt: at.toISOString() },
        },
      ]);
    const view = verificationView(given([requested]).when(complete).thenState());
    expect(view).toMatchObject({ status: 'found', charged: true, errorMessage: null, result: { firstName: 'Ada' } });
  });

  it('fails an open verification, uncharged, with the error message', () =>
    expect(verificationView(given([requested]).when(fail).thenState())).toMatchObject({ status: 'failed', charged: false, errorMessage: 'failed', result: {} }));

  it('rejects for insufficient balance with the price and balance', () => {
    const [event] = given([requested]).when(reject).events();
    expect(event).toMatchObject({ type: 'VerificationRejected', data: { reasonCode: 'insufficient_balance', priceKobo: 10_000, balanceKobo: 500 } });
    expect(verificationView(given([requested]).when(reject).thenState())).toMatchObject({ status: 'failed', charged: false });
  });

  it('never finishes twice, whatever the first terminal event was', () => {
    for (const first of [complete, fail, reject]) {
      const terminal = given([requested]).when(first).events();
      for (const second of [complete, fail, reject])
        given([requested, ...terminal])
          .when(second)
          .thenThrows(VerificationAlreadyFinished);
    }
  });

  it('cannot finish a verification that was never requested', () => given([]).when(complete).thenThrows(VerificationNotRequested));

  it('refuses to fold a second terminal event or a second request (a corrupt stream fails loudly)', () => {
    const [done] = given([requested]).when(complete).events();
    const [failed] = given([requested]).when(fail).events();
    expect(() => given([requested, done, failed])).toThrow(InvariantViolated);
    expect(() => given([requested, requested])).toThrow(InvariantViolated);
    expect(() => evolve(initialVerificationState, done)).toThrow(InvariantViolated);
  });
});

describe('The view', () => {
  it('is pending and uncharged while open, with createdAt at a +00:00 offset', () => {
    expect(verificationView(given([requested]).state)).toEqual({
      reference: requestedData.reference,
      scope: 'nin',
      category: 'kyc',
      countryCode: 'NG',
      status: 'pending',
      request: { nin: '12345678905' },
      result: {},
      errorMessage: null,
      failureReason: null,
      priceKobo: 10_000,
      charged: false,
      createdAt: '2026-11-22T08:00:00.000+00:00',
      personalDataErasedAt: null,
    });
  });
  it('shows an erased verification (its sealed fields could not be opened) with request and result {}, every other fact kept', () => {
    const completed = {
      type: 'VerificationCompleted' as const,
      data: {
        reference: requestedData.reference,
        outcome: 'found' as const,
        result: {},
        completedAt: at.toISOString(),
        personalDataErasedAt: '2026-12-01T00:00:00.000+00:00',
        schemaVersion: 1,
      },
    };
    const view = verificationView(given([requested, completed]).state);
    expect(view).toMatchObject({ status: 'found', charged: true, request: {}, result: {}, priceKobo: 10_000, personalDataErasedAt: '2026-12-01T00:00:00.000+00:00' });
  });
  it('charges not_found', () =>
    expect(verificationView(given([requested]).when({ type: 'CompleteVerification', outcome: 'not_found', result: {}, at }).thenState())).toMatchObject({
      status: 'not_found',
      charged: true,
      result: {},
    }));
});

describe("Erasing a verification's personal data", () => {
  const completed: VerificationEvent = {
    type: 'VerificationCompleted',
    data: { schemaVersion: 1, reference: requestedData.reference, outcome: 'found', result: { firstName: 'Ada' }, completedAt: at.toISOString() },
  };
  const later = new Date('2026-12-01T00:00:00.000Z');
  const erased: VerificationEvent = { type: 'VerificationPersonalDataErased', data: { schemaVersion: 1, reference: requestedData.reference, erasedAt: later.toISOString() } };

  it('records the erasure of a finished verification, with no personal data; the view keeps every fact and shows request and result {}', () => {
    given([requested, completed]).when({ type: 'ErasePersonalData', at: later }).then([erased]);
    const view = verificationView(given([requested, completed, erased]).state);
    expect(view).toMatchObject({ status: 'found', charged: true, priceKobo: 10_000, request: {}, result: {}, personalDataErasedAt: '2026-12-01T00:00:00.000+00:00' });
  });
  it('writes nothing the second time', () =>
    given([requested, completed, erased])
      .when({ type: 'ErasePersonalData', at: new Date('2027-01-01T00:00:00.000Z') })
      .thenNothing());
  it('dates the erasure by a key already destroyed (offboarding) when the codec found one', () => {
    const openedErased: VerificationEvent = { ...requested, data: { ...requestedData, request: {}, personalDataErasedAt: '2026-11-25T00:00:00.000+00:00' } };
    given([openedErased, completed])
      .when({ type: 'ErasePersonalData', at: later })
      .then([{ ...erased, data: { ...erased.data, erasedAt: '2026-11-25T00:00:00.000Z' } }]);
  });
  it('refuses a verification still running (409 verification_pending)', () => given([requested]).when({ type: 'ErasePersonalData', at: later }).thenThrows(VerificationPending));
  it('is not found without a request', () => given([]).when({ type: 'ErasePersonalData', at: later }).thenThrows(NotFound));
  it('an erasure before the verification finished is a broken stream', () => expect(() => evolve(given([requested]).state, erased)).toThrow(InvariantViolated));
});
