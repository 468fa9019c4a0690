import { describe, expect, it } from '@jest/globals';
import { lowBalanceCrossed, lowBalanceMessage, wants, webhookMessageFor, type LogEvent, type StreamFacts } from './webhook-messages.js';

const org = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const at = new Date('2026-11-22T07:15:00.123Z');
const event = (type: string, data: Record<string, unknown>, id = '0193a1b2-0000-7000-8000-000000000001'): LogEvent => ({
  id,
  type,
  data: { schemaVersion: 1, ...data },
  occurredAt: at,
});
const requested: StreamFacts = { organizationId: org, environment: 'live', scope: 'nin' };

describe('Given a log event, when it is mapped to a webhook message', () => {
  it('a completed check becomes verification.completed with its request facts, charged, and the webhook-id from the event id', () => {
    const completed = event('VerificationCompleted', { reference: 'vrf_1', outcome: 'found', result: { firstName: 'Ada' }, completedAt: '2026-11-22T07:15:00.100Z' });
    expect(webhookMessageFor(completed, requested)).toEqual({
      id: 'msg_0193a1b2-0000-7000-8000-000000000001',
      type: 'verification.completed',
      organizationId: org,
      environment: 'live',
      body: {
        type: 'verification.completed',
        timestamp: '2026-11-22T07:15:00.123Z',
        data: { organizationId: org, environment: 'live', reference: 'vrf_1', scope: 'nin', status: 'found', charged: true, completedAt: '2026-11-22T07:15:00.100Z' },
      },
    });
  });

  it('never carries the result (personal data) of a check', () => {
    const completed = event('VerificationCompleted', { reference: 'vrf_1', outcome: 'found', result: { firstName: 'Ada', nin: '12345678901' }, completedAt: at.toISOString() });
    const text = JSON.stringify(webhookMessageFor(completed, requested));
    expect(text).not.toContain('Ada');
    expect(text).not.toContain('12345678901');
  });

  it('a failed check becomes verification.failed, not charged, with its reason code and no error message', () => {
    const failed = event('VerificationFailed', {
      reference: 'vrf_2',
      reasonCode: 'provider_timeout',
      errorMessage: 'upstream said something',
      failedAt: '2026-11-22T07:15:01.000Z',
    });
    expect(webhookMessageFor(failed, { ...requested, environment: 'test' })?.body).toEqual({
      type: 'verification.failed',
      timestamp: at.toISOString(),
      data: { organizationId: org, environment: 'test', reference: 'vrf_2', scope: 'nin', reasonCode: 'provider_timeout', charged: false, failedAt: '2026-11-22T07:15:01.000Z' },
    });
  });

  it('a terminal event whose request was never seen announces nothing', () => {
    expect(webhookMessageFor(event('VerificationCompleted', { reference: 'vrf_1', outcome: 'found', result: {}, completedAt: at.toISOString() }))).toBeNull();
  });

  it('a funding becomes wallet.funded in its wallet environment', () => {
    expect(webhookMessageFor(event('WalletFunded', { organizationId: org, environment: 'test', fundingReference: 'sandbox-credit', amountKobo: 100_000 }))?.body.data).toEqual({
      organizationId: org,
      environment: 'test',
      fundingReference: 'sandbox-credit',
      amountKobo: 100_000,
    });
  });

  it('a key issued becomes key.created with its prefix and scopes, never its hash', () => {
    const issued = event('ApiKeyIssued', {
      organizationId: org,
      keyId: 'key_1',
      name: 'ci',
      keyHash: 'ab'.repeat(32),
      prefix: 'service_live_abcd',
      last4: 'wxyz',
      environment: 'live',
      scopes: null,
    });
    const built = webhookMessageFor(issued);
    expect(built?.body.data).toEqual({ organizationId: org, environment: 'live', keyId: 'key_1', prefix: 'service_live_abcd', scopes: null });
    expect(JSON.stringify(built)).not.toContain('abab');
  });

  it('a key revoked becomes key.revoked in the environment its issue recorded', () => {
    const revoked = event('ApiKeyRevoked', { organizationId: org, keyId: 'key_1' });
    expect(webhookMessageFor(revoked, { organizationId: org, environment: 'test', scope: null })?.body.data).toEqual({ organizationId: org, environment: 'test', keyId: 'key_1' });
  });

  it('approval and suspension are organization-wide (environment null) and carry nothing more, not the suspension reason', () => {
    expect(webhookMessageFor(event('OrganizationApproved', { organizationId: org }))?.body.data).toEqual({ organizationId: org, environment: null });
    const suspended = webhookMessageFor(event('OrganizationSuspended', { organizationId: org, reason: 'unpaid invoices' }));
    expect(suspended?.environment).toBeNull();
    expect(suspended?.body.data).toEqual({ organizationId: org, environment: null });
  });

  it("an erasure is personal_data.erased with the reference; an organization's destruction with reference null", () => {
    expect(webhookMessageFor(event('VerificationPersonalDataErased', { reference: 'vrf_1', erasedAt: '2026-11-23T00:00:00.000Z' }), requested)?.body.data).toEqual({
      organizationId: org,
      environment: 'live',
      reference: 'vrf_1',
      erasedAt: '2026-11-23T00:00:00.000Z',
    });
    expect(webhookMessageFor(event('PersonalDataDestroyed', { organizationId: org, destroyedAt: '2026-11-23T00:00:00.000Z' }))?.body.data).toEqual({
      organizationId: org,
      environment: null,
      reference: null,
      erasedAt: '2026-11-23T00:00:00.000Z',
    });
  });

  it('events that announce nothing map to null', () => {
    for (const type of ['VerificationRequested', 'WalletFundsReserved', 'WalletDebited', 'ScopeActivated', 'OrganizationRegistered']) {
      expect(webhookMessageFor(event(type, { organizationId: org, reference: 'vrf_1' }), requested)).toBeNull();
    }
  });
});

describe('Given a low-balance threshold', () => {
  it('fires once when the balance crosses it downwards, not while it stays below, and again after it rose above', () => {
    expect(lowBalanceCrossed(10_000, 4_000, 5_000)).toBe(true);
    expect(lowBalanceCrossed(4_000, 3_000, 5_000)).toBe(false);
    expect(lowBalanceCrossed(4_000, 6_000, 5_000)).toBe(false);
    expect(lowBalanceCrossed(6_000, 4_999, 5_000)).toBe(true);
    expect(lowBalanceCrossed(5_000, 5_000, 5_000)).toBe(false);
    expect(lowBalanceCrossed(10_000, 0, null)).toBe(false);
  });

  it('the message carries the balance and the threshold, and the id of the wallet event that crossed it', () => {
    const debited = event('WalletDebited', { organizationId: org, environment: 'live', reference: 'vrf_9', amountKobo: 6_000 }, 'e-9');
    expect(lowBalanceMessage(debited, org, 'live', 4_000, 5_000)).toEqual({
      id: 'msg_e-9',
      type: 'wallet.low_balance',
      organizationId: org,
      environment: 'live',
      body: { type: 'wallet.low_balance', timestamp: at.toISOString(), data: { organizationId: org, environment: 'live', balanceKobo: 4_000, thresholdKobo: 5_000 } },
    });
  });
});

describe('Given the event types an endpoint subscribed to', () => {
  it('an empty list wants every type; otherwise only those listed', () => {
    expect(wants([], 'wallet.funded')).toBe(true);
    expect(wants(['verification.completed'], 'wallet.funded')).toBe(false);
    expect(wants(['verification.completed', 'wallet.funded'], 'wallet.funded')).toBe(true);
  });

  describe('a verification session', () => {
    const session = { sessionId: 'vss_01JD3Q9ZK8W6V2C4X7N5B0M1TR', organizationId: org, environment: 'test' };
    const sealed = { sealed: 'aes-256-gcm', v: 1, nonce: 'bm9uY2U=', data: 'Y3VzdG9tZXI=', tag: 'dGFn' };
    it('created: the session, its flow version and expiry, never the sealed customer id or the secret hash', () => {
      const created = event('VerificationSessionCreated', {
        ...session,
        flowId: 'vfl_1',
        flowVersion: 2,
        keyId: 'key_1',
        secretHash: 'ab'.repeat(32),
        expiresAt: '2026-11-22T07:45:00.000Z',
        customer: sealed,
      });
      const message = webhookMessageFor(created);
      expect(message?.body).toEqual({
        type: 'verification_session.created',
        timestamp: at.toISOString(),
        data: { ...session, flowId: 'vfl_1', flowVersion: 2, expiresAt: '2026-11-22T07:45:00.000Z' },
      });
      expect(JSON.stringify(message)).not.toContain('Y3VzdG9tZXI=');
      expect(JSON.stringify(message)).not.toContain('ab'.repeat(32));
    });
    it.each(['approved', 'declined', 'needs_review'])('decided %s: its own type, with the reasons and no face-match score', (decision) => {
      const decided = event('VerificationSessionDecided', { ...session, decision, reasons: ['face_match_close'], faceMatchReference: 'vrf_2', faceMatchConfidence: 72.5 });
      expect(webhookMessageFor(decided)?.body).toEqual({
        type: `verification_session.${decision}`,
        timestamp: at.toISOString(),
        data: { ...session, reasons: ['face_match_close'] },
      });
    });
    it.each(['approved', 'declined'])('reviewed %s: the same type as the rule’s decision, with the review’s reason and the reviewer’s kind only', (decision) => {
      const reviewed = event('VerificationSessionReviewed', { ...session, decision, reason: 'faces_match', reviewedBy: 'operator', reviewedAt: at.toISOString() });
      expect(webhookMessageFor(reviewed)?.body).toEqual({
        type: `verification_session.${decision}`,
        timestamp: at.toISOString(),
        data: { ...session, reasons: [], review: { reason: 'faces_match', reviewedBy: 'operator' } },
      });
    });
    it.each([
      ['VerificationSessionSubmitted', 'verification_session.submitted'],
      ['VerificationSessionExpired', 'verification_session.expired'],
      ['VerificationSessionCancelled', 'verification_session.cancelled'],
    ])('%s becomes %s', (type, webhook) => expect(webhookMessageFor(event(type, session))?.body).toEqual({ type: webhook, timestamp: at.toISOString(), data: session }));
    it('consent, identity number and selfie announce nothing', () => {
      expect(webhookMessageFor(event('VerificationSessionConsentGiven', { ...session, consent: sealed }))).toBeNull();
      expect(webhookMessageFor(event('VerificationSessionSelfieCaptured', { ...session, selfieId: 'p1' }))).toBeNull();
    });
  });
});
