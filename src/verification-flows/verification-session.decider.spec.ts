import { describe, expect, it } from '@jest/globals';
import { Forbidden, InvariantViolated, NotFound } from '../common/errors.js';
import { givenFor } from '../event-sourcing/decider.testing.js';
import {
  MAX_DOCUMENT_IMAGES,
  MAX_IDENTITY_CHECKS,
  SessionClosed,
  SessionNotInReview,
  StepOutOfOrder,
  verificationSessionDecider,
  type VerificationSessionCommand,
} from './verification-session.decider.js';
import type { VerificationSessionEvent } from './verification-session.events.js';

const sessionId = 'vss_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const organizationId = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const owner = { organizationId, environment: 'test' as const };
const ids = { schemaVersion: 1, sessionId, organizationId, environment: 'test' };
const sealed = { sealed: 'aes-256-gcm', v: 1, nonce: 'n', data: 'd', tag: 't' } as const;
const before = new Date('2026-11-01T10:00:00Z');
const after = new Date('2026-11-01T10:31:00Z');
const given = givenFor(verificationSessionDecider);

const createdData = {
  sessionId,
  organizationId,
  environment: 'test',
  flowId: 'vfl_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
  flowVersion: 2,
  keyId: 'key_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
  secretHash: 'ab'.repeat(32),
  expiresAt: '2026-11-01T10:30:00.000Z',
  steps: ['consent', 'identity_number', 'selfie'],
  faceMatchThreshold: 80,
  reviewMarginPoints: 10,
  customer: { ...sealed },
};
const created: VerificationSessionEvent = { type: 'VerificationSessionCreated', data: { ...createdData, schemaVersion: 1 } };
const consented: VerificationSessionEvent = { type: 'VerificationSessionConsentGiven', data: { ...ids, consent: { ...sealed } } };
const found: VerificationSessionEvent = {
  type: 'VerificationSessionIdentityChecked',
  data: { ...ids, verificationReference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', kind: 'nin', outcome: 'found', identity: { ...sealed } },
};
const notFound: VerificationSessionEvent = { type: 'VerificationSessionIdentityChecked', data: { ...found.data, outcome: 'not_found' } as never };
const selfie: VerificationSessionEvent = { type: 'VerificationSessionSelfieCaptured', data: { ...ids, selfieId: 'selfie-1', liveness: 'head_turn' } };
const stillSelfie: VerificationSessionEvent = { type: 'VerificationSessionSelfieCaptured', data: { ...ids, selfieId: 'selfie-2', liveness: null } };
const submitted: VerificationSessionEvent = { type: 'VerificationSessionSubmitted', data: ids };
const checkNin: VerificationSessionCommand = {
  type: 'RecordIdentityCheck',
  at: before,
  check: { reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', kind: 'nin', outcome: 'found' },
  identity: { ...sealed },
};
const decided = (decision: string, reasons: string[], faceMatchConfidence: number | null) => ({
  type: 'VerificationSessionDecided',
  data: { ...ids, decision, reasons, faceMatchReference: faceMatchConfidence === null ? null : 'vrf_face', faceMatchConfidence },
});

describe('verification session decider', () => {
  it('creates the session with the flow version it started with', () => {
    given([]).when({ type: 'CreateSession', data: createdData }).then([created]);
    expect(given([created]).state).toMatchObject({ status: 'created', created: { flowVersion: 2 } });
  });

  describe('Given a created session, when the browser acts before consent', () => {
    it('refuses the identity number', () => given([created]).when(checkNin).thenThrows(StepOutOfOrder));
    it('refuses the selfie', () => given([created]).when({ type: 'RecordSelfie', at: before, selfieId: 's', liveness: null }).thenThrows(StepOutOfOrder));
    it('refuses the submission', () => given([created]).when({ type: 'Submit', at: before }).thenThrows(StepOutOfOrder));
  });

  describe('consent', () => {
    it('moves the session in progress, sealed', () => {
      given([created])
        .when({ type: 'GiveConsent', at: before, consent: { ...sealed } })
        .then([consented]);
      expect(given([created, consented]).state.status).toBe('in_progress');
    });
    it('is recorded once', () =>
      given([created, consented])
        .when({ type: 'GiveConsent', at: before, consent: { ...sealed } })
        .thenNothing());
    it('is refused past the session’s time', () =>
      given([created])
        .when({ type: 'GiveConsent', at: after, consent: { ...sealed } })
        .thenThrows(SessionClosed));
  });

  describe('the identity number and the selfie', () => {
    it('records the ordinary verification it ran', () => given([created, consented]).when(checkNin).then([found]));
    it(`allows at most ${MAX_IDENTITY_CHECKS} checks (each is charged)`, () => given([created, consented, notFound, notFound, notFound]).when(checkNin).thenThrows(SessionClosed));
    it('takes the selfie only after the identity number', () => {
      given([created, consented]).when({ type: 'RecordSelfie', at: before, selfieId: 'selfie-1', liveness: 'head_turn' }).thenThrows(StepOutOfOrder);
      given([created, consented, found]).when({ type: 'RecordSelfie', at: before, selfieId: 'selfie-1', liveness: 'head_turn' }).then([selfie]);
    });
    it('refuses a submission without the selfie the flow asks for', () => given([created, consented, found]).when({ type: 'Submit', at: before }).thenThrows(StepOutOfOrder));
    it('submits once everything is there', () => given([created, consented, found, selfie]).when({ type: 'Submit', at: before }).then([submitted]));
  });

  describe('Given a submitted session, when it is decided', () => {
    const history = [created, consented, found, selfie, submitted];
    it('approves a face match at or above the threshold', () =>
      given(history)
        .when({ type: 'Decide', faceMatch: { reference: 'vrf_face', match: true, confidence: 80 } })
        .then([decided('approved', [], 80) as VerificationSessionEvent]));
    it('keeps the liveness step the server saw with the latest selfie, for the integrator to read beside the decision', () => {
      expect(given([created, consented, found, selfie]).state.liveness).toBe('head_turn');
      expect(given([created, consented, found, selfie, stillSelfie]).state.liveness).toBeNull();
    });
    it('sends one within the margin below it to review', () =>
      given(history)
        .when({ type: 'Decide', faceMatch: { reference: 'vrf_face', match: false, confidence: 70 } })
        .then([decided('needs_review', ['face_match_close'], 70) as VerificationSessionEvent]));
    it('declines one below the margin', () =>
      given(history)
        .when({ type: 'Decide', faceMatch: { reference: 'vrf_face', match: false, confidence: 69.9 } })
        .then([decided('declined', ['face_mismatch'], 69.9) as VerificationSessionEvent]));
    it('sends it to review when the identity kind has no portrait to compare with', () =>
      given(history)
        .when({ type: 'Decide', faceMatch: null })
        .then([decided('needs_review', ['face_match_unavailable'], null) as VerificationSessionEvent]));
    it('declines when the identity record was not found', () =>
      given([created, consented, notFound, selfie, submitted])
        .when({ type: 'Decide', faceMatch: null })
        .then([decided('declined', ['identity_not_found'], null) as VerificationSessionEvent]));
    it('refuses the browser anything more, decided or not', () => {
      given(history).when({ type: 'RecordSelfie', at: before, selfieId: 'again', liveness: null }).thenThrows(SessionClosed);
      given([...history, decided('approved', [], 90) as VerificationSessionEvent])
        .when({ type: 'Submit', at: before })
        .thenThrows(SessionClosed);
    });
    it('is decided once', () =>
      given([...history, decided('approved', [], 90) as VerificationSessionEvent])
        .when({ type: 'Decide', faceMatch: null })
        .thenNothing());
  });

  describe('Given a session created before the liveness rule (none recorded), when it is decided without an active step', () => {
    it('approves on the face match alone, as it was decided then', () =>
      given([created, consented, found, stillSelfie, submitted])
        .when({ type: 'Decide', faceMatch: { reference: 'vrf_face', match: true, confidence: 95 } })
        .then([decided('approved', [], 95) as VerificationSessionEvent]));
  });

  describe('Given a flow whose decision requires liveness', () => {
    const strict: VerificationSessionEvent = { type: 'VerificationSessionCreated', data: { ...createdData, livenessRule: 'required', schemaVersion: 1 } };
    const match = { reference: 'vrf_face', match: true, confidence: 95 };
    it('approves a matching face whose frames showed an active step', () =>
      given([strict, consented, found, selfie, submitted])
        .when({ type: 'Decide', faceMatch: match })
        .then([decided('approved', [], 95) as VerificationSessionEvent]));
    it('sends a matching face without an active step (a chosen file, or frames that showed none) to review, saying why', () =>
      given([strict, consented, found, stillSelfie, submitted])
        .when({ type: 'Decide', faceMatch: match })
        .then([decided('needs_review', ['liveness_not_shown'], 95) as VerificationSessionEvent]));
    it('judges the latest selfie only: an earlier one with a head turn does not count for a later one without', () =>
      given([strict, consented, found, selfie, stillSelfie, submitted])
        .when({ type: 'Decide', faceMatch: match })
        .then([decided('needs_review', ['liveness_not_shown'], 95) as VerificationSessionEvent]));
    it('names both rules when the face match is close too', () =>
      given([strict, consented, found, stillSelfie, submitted])
        .when({ type: 'Decide', faceMatch: { reference: 'vrf_face', match: false, confidence: 75 } })
        .then([decided('needs_review', ['face_match_close', 'liveness_not_shown'], 75) as VerificationSessionEvent]));
    it('names both rules when there is no portrait to compare with', () =>
      given([strict, consented, found, stillSelfie, submitted])
        .when({ type: 'Decide', faceMatch: null })
        .then([decided('needs_review', ['face_match_unavailable', 'liveness_not_shown'], null) as VerificationSessionEvent]));
    it('declines a face that does not match, with or without an active step: the mismatch is the reason', () => {
      const mismatch = { reference: 'vrf_face', match: false, confidence: 12 };
      given([strict, consented, found, selfie, submitted])
        .when({ type: 'Decide', faceMatch: mismatch })
        .then([decided('declined', ['face_mismatch'], 12) as VerificationSessionEvent]);
      given([strict, consented, found, stillSelfie, submitted])
        .when({ type: 'Decide', faceMatch: mismatch })
        .then([decided('declined', ['face_mismatch'], 12) as VerificationSessionEvent]);
    });
  });

  describe('Given a flow whose decision has liveness off, when a matching face showed no active step', () => {
    it('approves it', () =>
      given([{ type: 'VerificationSessionCreated', data: { ...createdData, livenessRule: 'off', schemaVersion: 1 } }, consented, found, stillSelfie, submitted])
        .when({ type: 'Decide', faceMatch: { reference: 'vrf_face', match: true, confidence: 95 } })
        .then([decided('approved', [], 95) as VerificationSessionEvent]));
  });

  describe('expiry and cancellation', () => {
    it('expires an open session past its time, and nothing before', () => {
      given([created, consented])
        .when({ type: 'Expire', at: after })
        .then([{ type: 'VerificationSessionExpired', data: ids }]);
      given([created, consented]).when({ type: 'Expire', at: before }).thenNothing();
    });
    it('never expires a decided one', () =>
      given([created, consented, found, selfie, submitted, decided('declined', [], 1) as VerificationSessionEvent])
        .when({ type: 'Expire', at: after })
        .thenNothing());
    it('cancels an open session for its owner only', () => {
      given([created])
        .when({ type: 'Cancel', owner })
        .then([{ type: 'VerificationSessionCancelled', data: ids }]);
      given([created])
        .when({ type: 'Cancel', owner: { ...owner, environment: 'live' } })
        .thenThrows(NotFound);
    });
    it('refuses the browser on a cancelled session', () =>
      given([created, { type: 'VerificationSessionCancelled', data: ids }])
        .when({ type: 'GiveConsent', at: before, consent: { ...sealed } })
        .thenThrows(SessionClosed));
  });

  describe('Given a session in review, when a person decides it', () => {
    const inReview = [created, consented, found, selfie, submitted, decided('needs_review', ['face_match_close'], 74.5) as VerificationSessionEvent];
    const review = (decision: 'approved' | 'declined', reason: string, by: 'organization' | 'operator' = 'organization'): VerificationSessionCommand =>
      ({ type: 'Review', owner, at: before, decision, reason, reviewedBy: by }) as VerificationSessionCommand;
    const reviewed = (decision: string, reason: string, reviewedBy = 'organization'): VerificationSessionEvent =>
      ({ type: 'VerificationSessionReviewed', data: { ...ids, decision, reason, reviewedBy, reviewedAt: before.toISOString() } }) as VerificationSessionEvent;

    it('records an approval with its reason, and the session is approved', () => {
      given(inReview)
        .when(review('approved', 'faces_match'))
        .then([reviewed('approved', 'faces_match')]);
      expect(given([...inReview, reviewed('approved', 'faces_match')]).state).toMatchObject({
        status: 'approved',
        decision: { decision: 'needs_review', reasons: ['face_match_close'] },
        review: { decision: 'approved', reason: 'faces_match', reviewedBy: 'organization' },
      });
    });
    it('records a decline by an operator', () =>
      given(inReview)
        .when(review('declined', 'suspected_spoof', 'operator'))
        .then([reviewed('declined', 'suspected_spoof', 'operator')]));
    it('decides it once: a reviewed session is no longer in review', () =>
      given([...inReview, reviewed('declined', 'faces_differ')])
        .when(review('approved', 'faces_match'))
        .thenThrows(SessionNotInReview));
    it('refuses a session that is not in review (open, submitted, approved, declined, expired, cancelled)', () => {
      given([created, consented]).when(review('approved', 'faces_match')).thenThrows(SessionNotInReview);
      given([created, consented, found, selfie, submitted]).when(review('approved', 'faces_match')).thenThrows(SessionNotInReview);
      given([created, consented, found, selfie, submitted, decided('approved', [], 91) as VerificationSessionEvent])
        .when(review('declined', 'faces_differ'))
        .thenThrows(SessionNotInReview);
      given([created, consented, found, selfie, submitted, decided('declined', ['face_mismatch'], 12) as VerificationSessionEvent])
        .when(review('approved', 'faces_match'))
        .thenThrows(SessionNotInReview);
      given([created, { type: 'VerificationSessionExpired', data: ids }])
        .when(review('approved', 'faces_match'))
        .thenThrows(SessionNotInReview);
      given([created, { type: 'VerificationSessionCancelled', data: ids }])
        .when(review('approved', 'faces_match'))
        .thenThrows(SessionNotInReview);
    });
    it('refuses an erased session: its evidence can no longer be looked at', () =>
      given([...inReview, { type: 'VerificationSessionPersonalDataErased', data: { ...ids, erasedAt: before.toISOString() } }])
        .when(review('approved', 'faces_match'))
        .thenThrows(Forbidden, (error) => expect(error.code).toBe('personal_data_destroyed')));
    it('is not found for another organization or environment', () =>
      given(inReview)
        .when({ ...review('approved', 'faces_match'), owner: { ...owner, environment: 'live' } } as VerificationSessionCommand)
        .thenThrows(NotFound));
    it('never takes a reason of the other decision', () => given(inReview).when(review('approved', 'faces_differ')).thenThrows(InvariantViolated));
  });

  describe('Given a flow that takes documents after the identity number', () => {
    const withDocuments: VerificationSessionEvent = { type: 'VerificationSessionCreated', data: { ...created.data, steps: ['consent', 'identity_number', 'documents'] } };
    const take = (document: 'passport' | 'voters_card' | 'drivers_licence', side: string, documentId = `doc-${side}`): VerificationSessionCommand => ({
      type: 'RecordDocument',
      at: before,
      documentId,
      document,
      side,
    });
    const captured = (document: string, side: string, documentId = `doc-${side}`): VerificationSessionEvent => ({
      type: 'VerificationSessionDocumentCaptured',
      data: { ...ids, documentId, document, side },
    });

    it('refuses a document before consent, and before the identity number', () => {
      given([withDocuments]).when(take('passport', 'data_page')).thenThrows(StepOutOfOrder);
      given([withDocuments, consented]).when(take('passport', 'data_page')).thenThrows(StepOutOfOrder);
    });
    it('records a side by its id, the document and the side, and no image', () =>
      given([withDocuments, consented, found])
        .when(take('drivers_licence', 'front'))
        .then([captured('drivers_licence', 'front')]));
    it('refuses a side the document does not have', () =>
      expect(() => given([withDocuments, consented, found]).when(take('passport', 'back')).then([])).toThrow('a passport has no side back'));
    it(`takes at most ${MAX_DOCUMENT_IMAGES} images`, () =>
      given([withDocuments, consented, found, ...Array.from({ length: MAX_DOCUMENT_IMAGES }, (_, i) => captured('drivers_licence', 'front', `doc-${i}`))])
        .when(take('drivers_licence', 'back'))
        .thenThrows(SessionClosed));
    it('refuses a submission until every side of one document is there', () => {
      given([withDocuments, consented, found]).when({ type: 'Submit', at: before }).thenThrows(StepOutOfOrder);
      given([withDocuments, consented, found, captured('drivers_licence', 'front')])
        .when({ type: 'Submit', at: before })
        .thenThrows(StepOutOfOrder);
      given([withDocuments, consented, found, captured('drivers_licence', 'front'), captured('drivers_licence', 'back')])
        .when({ type: 'Submit', at: before })
        .then([submitted]);
      given([withDocuments, consented, found, captured('passport', 'data_page')])
        .when({ type: 'Submit', at: before })
        .then([submitted]);
    });
    it('keeps every image taken, retakes included, for erasure', () =>
      expect(
        given([withDocuments, consented, found, captured('voters_card', 'front', 'a'), captured('voters_card', 'front', 'b')]).state.documents.map((d) => d.documentId),
      ).toEqual(['a', 'b']));
    it('refuses a document on a flow without a documents step', () => given([created, consented, found]).when(take('passport', 'data_page')).thenThrows(StepOutOfOrder));
    it('wants the selfie first when the flow puts it before the documents', () => {
      const selfieFirst: VerificationSessionEvent = {
        type: 'VerificationSessionCreated',
        data: { ...created.data, steps: ['consent', 'identity_number', 'selfie', 'documents'] },
      };
      given([selfieFirst, consented, found]).when(take('passport', 'data_page')).thenThrows(StepOutOfOrder);
      given([selfieFirst, consented, found, selfie])
        .when(take('passport', 'data_page'))
        .then([captured('passport', 'data_page')]);
    });
  });
});
