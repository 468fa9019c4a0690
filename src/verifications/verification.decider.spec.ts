import { describe, expect, it } from '@jest/globals';
import { decide, evolve, fold, initialVerificationState, VerificationAlreadyExists, VerificationAlreadyFinished, VerificationNotRequested, type VerificationCommand } from './verification.decider.js';
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

function given(events: VerificationEvent[]) {
  const state = fold(events);
  return {
    when: (command: VerificationCommand) => ({
      then: (expected: (events: VerificationEvent[]) => void) => expected(decide(command, state)),
      thenThrows: (error: new (...args: never[]) => Error) => expect(() => decide(command, state)).toThrow(error),
    }),
  };
}

const complete: VerificationCommand = { type: 'CompleteVerification', outcome: 'found', result: { firstName: 'Ada' }, at };
const fail: VerificationCommand = { type: 'FailVerification', reasonCode: 'provider_error', errorMessage: 'failed', at };
const reject: VerificationCommand = { type: 'RejectVerification', priceKobo: 10_000, balanceKobo: 500, at };

describe('Requesting a verification', () => {
  it('records the request on a new stream', () =>
    given([]).when({ type: 'RequestVerification', data: requestedData }).then((events) => expect(events).toEqual([requested])));
  it('refuses to reuse a reference', () => given([requested]).when({ type: 'RequestVerification', data: requestedData }).thenThrows(VerificationAlreadyExists));
});

describe('Finishing a verification', () => {
  it('completes an open verification as found, charged', () =>
    given([requested])
      .when(complete)
      .then((events) => {
        expect(events).toEqual([{ type: 'VerificationCompleted', data: { schemaVersion: 1, reference: requestedData.reference, outcome: 'found', result: { firstName: 'Ada' }, completedAt: at.toISOString() } }]);
        const view = verificationView(fold([requested, ...events]));
        expect(view).toMatchObject({ status: 'found', charged: true, errorMessage: null, result: { firstName: 'Ada' } });
      }));

  it('fails an open verification, uncharged, with the error message', () =>
    given([requested])
      .when(fail)
      .then((events) => expect(verificationView(fold([requested, ...events]))).toMatchObject({ status: 'failed', charged: false, errorMessage: 'failed', result: {} })));

  it('rejects for insufficient balance with the price and balance', () =>
    given([requested])
      .when(reject)
      .then((events) => {
        expect(events[0]).toMatchObject({ type: 'VerificationRejected', data: { reasonCode: 'insufficient_balance', priceKobo: 10_000, balanceKobo: 500 } });
        expect(verificationView(fold([requested, ...events]))).toMatchObject({ status: 'failed', charged: false });
      }));

  it('never finishes twice, whatever the first terminal event was', () => {
    for (const first of [complete, fail, reject]) {
      const terminal = decide(first, fold([requested]));
      for (const second of [complete, fail, reject]) given([requested, ...terminal]).when(second).thenThrows(VerificationAlreadyFinished);
    }
  });

  it('cannot finish a verification that was never requested', () => given([]).when(complete).thenThrows(VerificationNotRequested));

  it('refuses to fold a second terminal event (a corrupt stream fails loudly)', () => {
    const [done] = decide(complete, fold([requested]));
    const [failed] = decide(fail, fold([requested]));
    expect(() => fold([requested, done, failed])).toThrow(VerificationAlreadyFinished);
    expect(() => evolve(initialVerificationState, done)).toThrow(VerificationAlreadyFinished);
  });
});

describe('The view', () => {
  it('is pending and uncharged while open, with createdAt at a +00:00 offset', () => {
    expect(verificationView(fold([requested]))).toEqual({
      reference: requestedData.reference,
      scope: 'nin',
      category: 'kyc',
      countryCode: 'NG',
      status: 'pending',
      request: { nin: '12345678905' },
      result: {},
      errorMessage: null,
      priceKobo: 10_000,
      charged: false,
      createdAt: '2026-11-22T08:00:00.000+00:00',
    });
  });
  it('charges not_found', () => {
    const events = decide({ type: 'CompleteVerification', outcome: 'not_found', result: {}, at }, fold([requested]));
    expect(verificationView(fold([requested, ...events]))).toMatchObject({ status: 'not_found', charged: true, result: {} });
  });
});
