import { describe, expect, it } from '@jest/globals';
import { evolve, initialVerificationState } from './verification.decider.js';
import type { VerificationEvent } from './verification.events.js';
import { failureReasonOf } from './failure-reason.js';
import { verificationView } from './verification.views.js';

const requested: VerificationEvent = {
  type: 'VerificationRequested',
  data: {
    reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
    organizationId: 'org_A',
    environment: 'test',
    keyId: 'key_A',
    scope: 'nin',
    category: 'kyc',
    countryCode: 'NG',
    request: {},
    priceKobo: 10_000,
    requestedAt: '2026-11-22T08:00:00.000Z',
    schemaVersion: 1,
  },
};

describe('Failure reasons', () => {
  it.each([
    ['provider_timeout', 'provider_timeout'],
    ['provider_circuit_open', 'provider_unavailable'],
    ['provider_unreachable', 'provider_unavailable'],
    ['provider_unavailable', 'provider_unavailable'],
    ['provider_error', 'provider_error'],
    ['provider_malformed_response', 'provider_error'],
    ['provider_unauthorized', 'provider_error'],
    ['provider_wallet_empty', 'provider_error'],
    ['insufficient_balance', 'insufficient_balance'],
    ['portrait_storage_failed', 'internal_error'],
    ['recovered_timeout', 'internal_error'],
    ['internal_error', 'internal_error'],
    ['a_code_of_a_later_version', 'provider_error'],
  ])('the reason code %s reads as %s', (code, reason) => expect(failureReasonOf(code)).toBe(reason));

  it('a check that did not fail has none', () => {
    expect(failureReasonOf(null)).toBeNull();
    const completed = evolve(evolve(initialVerificationState, requested), {
      type: 'VerificationCompleted',
      data: { reference: requested.data.reference, outcome: 'found', result: {}, completedAt: '2026-11-22T08:00:01.000Z', schemaVersion: 1 },
    });
    expect(verificationView(completed).failureReason).toBeNull();
  });

  it("a failure stored without a reason code still folds, and reads as the provider's", () => {
    const old = {
      type: 'VerificationFailed',
      data: { reference: requested.data.reference, errorMessage: 'failed', failedAt: '2026-11-22T08:00:01.000Z', schemaVersion: 1 },
    } as unknown as VerificationEvent;
    const state = evolve(evolve(initialVerificationState, requested), old);
    expect(state).toMatchObject({ status: 'failed', reasonCode: null });
    expect(verificationView(state)).toMatchObject({ status: 'failed', failureReason: 'provider_error', errorMessage: 'failed' });
  });

  it('a failure shows the reason of its code', () => {
    const state = evolve(evolve(initialVerificationState, requested), {
      type: 'VerificationFailed',
      data: { reference: requested.data.reference, reasonCode: 'provider_circuit_open', errorMessage: 'failed', failedAt: '2026-11-22T08:00:01.000Z', schemaVersion: 1 },
    });
    expect(verificationView(state).failureReason).toBe('provider_unavailable');
  });
});
