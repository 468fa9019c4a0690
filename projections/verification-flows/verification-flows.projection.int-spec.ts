import { describe, expect, it } from '@jest/globals';
import { applyEvents, recorded, rowsOf, type GivenEvent, useProjectionDatabase } from '../../test/support/projection-harness.js';
import { verificationFlowsProjection } from './verification-flows.projection.js';

const flowId = 'vfl_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const sessionId = 'vss_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const owner = { schemaVersion: 1, organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR', environment: 'test' };
const sealed = { sealed: 'aes-256-gcm', v: 1, nonce: 'bg==', data: 'ZA==', tag: 'dA==' };
const t0 = new Date('2026-12-01T10:00:00Z');
const at = (minutes: number) => ({ occurredAt: new Date(t0.getTime() + minutes * 60_000).toISOString() });
const flow = (type: string, version: number, minutes: number): GivenEvent => ({
  streamId: `verificationFlow-${flowId}`,
  type,
  data: { ...owner, flowId, version, definition: `sealed-${version}` },
  metadata: at(minutes),
});
const session = (type: string, data: Record<string, unknown>, minutes: number): GivenEvent => ({
  streamId: `verificationSession-${sessionId}`,
  type,
  data: { ...owner, sessionId, ...data },
  metadata: at(minutes),
});
const history = [
  flow('VerificationFlowCreated', 1, 0),
  session(
    'VerificationSessionCreated',
    {
      flowId,
      flowVersion: 1,
      keyId: 'key_1',
      secretHash: 'ab',
      expiresAt: '2026-12-01T10:30:00.000Z',
      steps: ['consent', 'identity_number', 'selfie'],
      faceMatchThreshold: 80,
      reviewMarginPoints: 10,
      customer: sealed,
    },
    1,
  ),
  flow('VerificationFlowVersionPublished', 2, 2),
  {
    streamId: `verificationFlow-${flowId}`,
    type: 'VerificationFlowLinkCreated',
    data: { ...owner, flowId, linkId: 'vln_01JD3Q9ZK8W6V2C4X7N5B0M1TR', keyId: 'key_1' },
    metadata: at(2),
  },
  session('VerificationSessionConsentGiven', { consent: sealed }, 3),
  session('VerificationSessionIdentityChecked', { verificationReference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', kind: 'nin', outcome: 'found', identity: sealed }, 4),
  session('VerificationSessionSelfieCaptured', { selfieId: 'selfie-1' }, 5),
  session('VerificationSessionDocumentCaptured', { documentId: 'doc-1', document: 'drivers_licence', side: 'front' }, 5),
  session('VerificationSessionDocumentCaptured', { documentId: 'doc-2', document: 'drivers_licence', side: 'front' }, 5),
  session('VerificationSessionDocumentCaptured', { documentId: 'doc-3', document: 'drivers_licence', side: 'back' }, 5),
  session('VerificationSessionSubmitted', {}, 6),
  session(
    'VerificationSessionDecided',
    { decision: 'needs_review', reasons: ['face_match_close'], faceMatchReference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TS', faceMatchConfidence: 74.5 },
    7,
  ),
];

describe('verification flows projection', () => {
  const db = useProjectionDatabase(verificationFlowsProjection);

  it('given a flow at two versions and a session taken to review (a licence’s front retaken), then the newest version, both sealed definitions, and the session as decided on its first version', async () => {
    await applyEvents(db.pool, verificationFlowsProjection, recorded(history));
    expect(await rowsOf(db.pool, 'verification_flows', 'id')).toEqual([expect.objectContaining({ id: flowId, version: 2, created_at: t0 })]);
    expect((await rowsOf(db.pool, 'verification_flow_versions', 'version')).map((row) => row.definition)).toEqual(['sealed-1', 'sealed-2']);
    expect(await rowsOf(db.pool, 'verification_flow_links', 'id')).toEqual([expect.objectContaining({ id: 'vln_01JD3Q9ZK8W6V2C4X7N5B0M1TR', flow_id: flowId, key_id: 'key_1' })]);
    expect(await rowsOf(db.pool, 'verification_sessions', 'id')).toEqual([
      expect.objectContaining({
        id: sessionId,
        flow_version: 1,
        status: 'needs_review',
        customer: sealed,
        identity_reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
        face_match_confidence: 74.5,
        reasons: ['face_match_close'],
        documents: [
          { document: 'drivers_licence', side: 'front' },
          { document: 'drivers_licence', side: 'back' },
        ],
        revision: '8',
      }),
    ]);
  });

  it('given a review of the session, then the status is the reviewer’s decision, with its reason, the reviewer’s kind and time, the rule’s reasons kept', async () => {
    const reviewedAt = '2026-12-01T10:08:00.000Z';
    await applyEvents(
      db.pool,
      verificationFlowsProjection,
      recorded([...history, session('VerificationSessionReviewed', { decision: 'declined', reason: 'faces_differ', reviewedBy: 'operator', reviewedAt }, 9)]),
    );
    expect(await rowsOf(db.pool, 'verification_sessions', 'id')).toEqual([
      expect.objectContaining({
        status: 'declined',
        reasons: ['face_match_close'],
        review_decision: 'declined',
        review_reason: 'faces_differ',
        reviewed_by: 'operator',
        reviewed_at: new Date(reviewedAt),
        revision: '9',
      }),
    ]);
  });

  it('replayed twice, same rows', async () => {
    const events = recorded([
      ...history,
      session('VerificationSessionReviewed', { decision: 'approved', reason: 'faces_match', reviewedBy: 'organization', reviewedAt: '2026-12-01T10:08:00.000Z' }, 8),
    ]);
    await applyEvents(db.pool, verificationFlowsProjection, events);
    const rows = async () =>
      Promise.all(
        [
          ['verification_flows', 'id'],
          ['verification_flow_versions', 'version'],
          ['verification_flow_links', 'id'],
          ['verification_sessions', 'id'],
        ].map(([table, key]) => rowsOf(db.pool, table, key)),
      );
    const once = await rows();
    await applyEvents(db.pool, verificationFlowsProjection, events);
    expect(await rows()).toEqual(once);
  });
});
