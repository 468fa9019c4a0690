import { Conflict, Forbidden, InvariantViolated, NotFound } from '../common/errors.js';
import type { Decider } from '../event-sourcing/decider.js';
import { DOCUMENT_SIDES, type DocumentKind } from './flow-definition.js';
import type { FlowOwner } from './verification-flow.decider.js';
import type { VerificationSessionCreated, VerificationSessionEvent } from './verification-session.events.js';

const SCHEMA_VERSION = 1;
/** Identity checks one session may run (each is charged): a person who mistyped may try again, a script may not try numbers. */
export const MAX_IDENTITY_CHECKS = 3;
export const MAX_SELFIES = 5;
/** Document images one session may take: every side of a two-sided document, each retaken a few times. */
export const MAX_DOCUMENT_IMAGES = 8;

export type SessionStatus = 'none' | 'created' | 'in_progress' | 'submitted' | 'approved' | 'declined' | 'needs_review' | 'expired' | 'cancelled';
export type Decision = 'approved' | 'declined' | 'needs_review';
const DECIDED: readonly SessionStatus[] = ['approved', 'declined', 'needs_review'];
const ENDED: readonly SessionStatus[] = [...DECIDED, 'expired', 'cancelled'];

/** The browser may act on the session no longer: expired, cancelled, submitted or decided. */
export class SessionClosed extends Conflict {
  override readonly code = 'session_closed';
}

/** A step asked for before the one it needs (nothing before consent; no submission without the checks). */
export class StepOutOfOrder extends Conflict {
  override readonly code = 'step_out_of_order';
}

/** A decision asked of a session that is not waiting for one (only `needs_review` is). */
export class SessionNotInReview extends Conflict {
  override readonly code = 'session_not_in_review';
}

/** The reasons a reviewer may give, by decision: a fixed list, never free text (it would invite personal data). */
export const REVIEW_REASONS = {
  approved: ['faces_match', 'identity_confirmed_otherwise'],
  declined: ['faces_differ', 'selfie_unusable', 'suspected_spoof', 'record_doubtful'],
} as const satisfies Record<'approved' | 'declined', readonly string[]>;
export type ReviewDecision = keyof typeof REVIEW_REASONS;
export type ReviewReason = (typeof REVIEW_REASONS)[ReviewDecision][number];
export type Reviewer = 'organization' | 'operator';

export interface IdentityCheck {
  readonly reference: string;
  readonly kind: string;
  readonly outcome: 'found' | 'not_found';
}

export interface VerificationSessionState {
  readonly status: SessionStatus;
  readonly created: VerificationSessionCreated['data'] | null;
  readonly consented: boolean;
  readonly identityChecks: number;
  readonly identity: IdentityCheck | null;
  /** The sealed `{kind, number}` of the latest identity check, for the face match. */
  readonly sealedIdentity: VerificationSessionCreated['data']['customer'] | null;
  readonly selfies: number;
  readonly selfieId: string | null;
  /** Every selfie stored, the latest last: erasure deletes them all. */
  readonly selfieIds: readonly string[];
  /** Every document image stored, in order: erasure deletes them all. */
  readonly documents: readonly CapturedDocument[];
  /** The liveness step the server saw with the latest selfie, or null. */
  readonly liveness: string | null;
  readonly decision: {
    readonly decision: Decision;
    readonly reasons: readonly string[];
    readonly faceMatchReference: string | null;
    readonly faceMatchConfidence: number | null;
  } | null;
  readonly review: { readonly decision: ReviewDecision; readonly reason: string; readonly reviewedBy: Reviewer; readonly reviewedAt: string } | null;
  readonly personalDataErasedAt: string | null;
}

export interface CapturedDocument {
  readonly documentId: string;
  readonly document: string;
  readonly side: string;
}

/** Whether every side of one document was taken. */
export const hasWholeDocument = (documents: readonly CapturedDocument[]): boolean =>
  Object.entries(DOCUMENT_SIDES).some(([document, sides]) => sides.every((side) => documents.some((taken) => taken.document === document && taken.side === side)));

/** The face match a submission ran: null when the identity kind has no portrait to compare with. */
export interface FaceMatchOutcome {
  readonly reference: string;
  readonly match: boolean;
  readonly confidence: number;
}

export type VerificationSessionCommand =
  | { readonly type: 'CreateSession'; readonly data: Omit<VerificationSessionCreated['data'], 'schemaVersion'> }
  | { readonly type: 'GiveConsent'; readonly at: Date; readonly consent: VerificationSessionCreated['data']['customer'] }
  | { readonly type: 'RecordIdentityCheck'; readonly at: Date; readonly check: IdentityCheck; readonly identity: VerificationSessionCreated['data']['customer'] }
  | { readonly type: 'RecordSelfie'; readonly at: Date; readonly selfieId: string; readonly liveness: string | null }
  | { readonly type: 'RecordDocument'; readonly at: Date; readonly documentId: string; readonly document: DocumentKind; readonly side: string }
  | { readonly type: 'Submit'; readonly at: Date }
  | { readonly type: 'Decide'; readonly faceMatch: FaceMatchOutcome | null }
  | { readonly type: 'Review'; readonly owner: FlowOwner; readonly at: Date; readonly decision: ReviewDecision; readonly reason: ReviewReason; readonly reviewedBy: Reviewer }
  | { readonly type: 'Cancel'; readonly owner: FlowOwner }
  | { readonly type: 'Expire'; readonly at: Date }
  | { readonly type: 'RecordErasure'; readonly owner: FlowOwner; readonly at: Date };

export const initialSessionState: VerificationSessionState = {
  status: 'none',
  created: null,
  consented: false,
  identityChecks: 0,
  identity: null,
  sealedIdentity: null,
  selfies: 0,
  selfieId: null,
  selfieIds: [],
  documents: [],
  liveness: null,
  decision: null,
  review: null,
  personalDataErasedAt: null,
};

/**
 * The rule of a submitted session: the identity record found and, when the flow takes a selfie,
 * face_match's confidence at or above the threshold approves; within the review margin below it
 * (or no portrait to compare with), review; anything else declines. Under the `required` liveness
 * rule, a selfie without an active step the server saw (a chosen file, or frames that showed none)
 * turns an approval or a review into a review. Each rule that held the session back adds its reason.
 */
export function decisionOf(
  state: Pick<VerificationSessionState, 'identity' | 'liveness'> & {
    readonly created: Pick<VerificationSessionCreated['data'], 'steps' | 'faceMatchThreshold' | 'reviewMarginPoints' | 'livenessRule'>;
  },
  faceMatch: FaceMatchOutcome | null,
): { decision: Decision; reasons: string[] } {
  if (state.identity?.outcome !== 'found') return { decision: 'declined', reasons: ['identity_not_found'] };
  if (!state.created.steps.includes('selfie')) return { decision: 'approved', reasons: [] };
  const { faceMatchThreshold: threshold, reviewMarginPoints: margin } = state.created;
  const face: string | null = faceMatch === null ? 'face_match_unavailable' : faceMatch.match && faceMatch.confidence >= threshold ? null : 'face_match_close';
  if (faceMatch !== null && face !== null && faceMatch.confidence < threshold - margin) return { decision: 'declined', reasons: ['face_mismatch'] };
  const reasons = face === null ? [] : [face];
  if (state.created.livenessRule === 'required' && state.liveness === null) reasons.push('liveness_not_shown');
  return reasons.length === 0 ? { decision: 'approved', reasons } : { decision: 'needs_review', reasons };
}

function ids(state: VerificationSessionState) {
  const created = state.created as VerificationSessionCreated['data'];
  return { sessionId: created.sessionId, organizationId: created.organizationId, environment: created.environment, schemaVersion: SCHEMA_VERSION };
}

/** The browser's steps: only on a session still open, not past its time. */
function assertOpen(state: VerificationSessionState, at: Date): void {
  if (state.status === 'none' || state.created === null) throw new NotFound('No verification session with this id');
  if (state.status !== 'created' && state.status !== 'in_progress') throw new SessionClosed(`This session is ${state.status}`);
  if (at.getTime() >= Date.parse(state.created.expiresAt)) throw new SessionClosed('This session has expired');
}

function assertConsented(state: VerificationSessionState): void {
  if (!state.consented) throw new StepOutOfOrder('Consent comes first: nothing is accepted before the person agrees');
}

export function decide(command: VerificationSessionCommand, state: VerificationSessionState): VerificationSessionEvent[] {
  switch (command.type) {
    case 'CreateSession':
      if (state.status !== 'none') throw new Conflict('A session with this id exists');
      return [{ type: 'VerificationSessionCreated', data: { ...command.data, schemaVersion: SCHEMA_VERSION } }];
    case 'GiveConsent':
      assertOpen(state, command.at);
      if (state.consented) return [];
      return [{ type: 'VerificationSessionConsentGiven', data: { ...ids(state), consent: command.consent } }];
    case 'RecordIdentityCheck':
      assertOpen(state, command.at);
      assertConsented(state);
      if (state.identityChecks >= MAX_IDENTITY_CHECKS) throw new SessionClosed(`A session runs at most ${MAX_IDENTITY_CHECKS} identity checks`);
      return [
        {
          type: 'VerificationSessionIdentityChecked',
          data: { ...ids(state), verificationReference: command.check.reference, kind: command.check.kind, outcome: command.check.outcome, identity: command.identity },
        },
      ];
    case 'RecordSelfie':
      assertOpen(state, command.at);
      assertConsented(state);
      if (state.identity === null) throw new StepOutOfOrder('The identity number comes before the selfie');
      if (state.selfies >= MAX_SELFIES) throw new SessionClosed(`A session takes at most ${MAX_SELFIES} selfies`);
      return [{ type: 'VerificationSessionSelfieCaptured', data: { ...ids(state), selfieId: command.selfieId, liveness: command.liveness } }];
    case 'RecordDocument': {
      assertOpen(state, command.at);
      assertConsented(state);
      const steps = (state.created as VerificationSessionCreated['data']).steps;
      if (!steps.includes('documents')) throw new StepOutOfOrder('This flow takes no documents');
      const before = steps.slice(0, steps.indexOf('documents'));
      if (before.includes('identity_number') && state.identity === null) throw new StepOutOfOrder('The identity number comes before the documents');
      if (before.includes('selfie') && state.selfieId === null) throw new StepOutOfOrder('The selfie comes before the documents');
      if (!(DOCUMENT_SIDES[command.document] ?? []).includes(command.side)) throw new InvariantViolated(`a ${command.document} has no side ${command.side}`);
      if (state.documents.length >= MAX_DOCUMENT_IMAGES) throw new SessionClosed(`A session takes at most ${MAX_DOCUMENT_IMAGES} document images`);
      return [{ type: 'VerificationSessionDocumentCaptured', data: { ...ids(state), documentId: command.documentId, document: command.document, side: command.side } }];
    }
    case 'Submit': {
      assertOpen(state, command.at);
      assertConsented(state);
      const steps = (state.created as VerificationSessionCreated['data']).steps;
      if (state.identity === null) throw new StepOutOfOrder('The identity number is missing');
      if (steps.includes('selfie') && state.selfieId === null) throw new StepOutOfOrder('The selfie is missing');
      if (steps.includes('documents') && !hasWholeDocument(state.documents)) throw new StepOutOfOrder('Every side of one document is needed');
      return [{ type: 'VerificationSessionSubmitted', data: ids(state) }];
    }
    case 'Decide': {
      if (state.status === 'submitted') {
        const { decision, reasons } = decisionOf(
          { identity: state.identity, liveness: state.liveness, created: state.created as VerificationSessionCreated['data'] },
          command.faceMatch,
        );
        return [
          {
            type: 'VerificationSessionDecided',
            data: { ...ids(state), decision, reasons, faceMatchReference: command.faceMatch?.reference ?? null, faceMatchConfidence: command.faceMatch?.confidence ?? null },
          },
        ];
      }
      if (DECIDED.includes(state.status)) return [];
      throw new InvariantViolated(`a session ${state.status} cannot be decided`);
    }
    case 'Review': {
      if (state.created === null || state.created.organizationId !== command.owner.organizationId || state.created.environment !== command.owner.environment) {
        throw new NotFound('No verification session with this id');
      }
      // Evidence erased is evidence nobody can look at: the session stays as it is.
      if (state.personalDataErasedAt !== null) throw new Forbidden('personal_data_destroyed', "This session's personal data was erased: it can no longer be reviewed");
      if (state.status !== 'needs_review') throw new SessionNotInReview(`Only a session in review can be decided; this one is ${state.status}`);
      if (!(REVIEW_REASONS[command.decision] as readonly string[]).includes(command.reason)) {
        throw new InvariantViolated(`the reason ${command.reason} is not one of a ${command.decision} review's`);
      }
      return [
        {
          type: 'VerificationSessionReviewed',
          data: { ...ids(state), decision: command.decision, reason: command.reason, reviewedBy: command.reviewedBy, reviewedAt: command.at.toISOString() },
        },
      ];
    }
    case 'Cancel':
      if (state.created === null || state.created.organizationId !== command.owner.organizationId || state.created.environment !== command.owner.environment) {
        throw new NotFound('No verification session with this id');
      }
      if (state.status === 'cancelled') return [];
      if (ENDED.includes(state.status) || state.status === 'submitted') throw new SessionClosed(`This session is ${state.status}`);
      return [{ type: 'VerificationSessionCancelled', data: ids(state) }];
    case 'Expire':
      if (state.created === null) throw new NotFound('No verification session with this id');
      if ((state.status !== 'created' && state.status !== 'in_progress') || command.at.getTime() < Date.parse(state.created.expiresAt)) return [];
      return [{ type: 'VerificationSessionExpired', data: ids(state) }];
    case 'RecordErasure':
      if (state.created === null || state.created.organizationId !== command.owner.organizationId || state.created.environment !== command.owner.environment) {
        throw new NotFound('No verification session with this id');
      }
      if (state.personalDataErasedAt !== null) return [];
      if (state.status === 'submitted') throw new Conflict('The session is being decided; erase it once decided');
      return [{ type: 'VerificationSessionPersonalDataErased', data: { ...ids(state), erasedAt: command.at.toISOString() } }];
    default: {
      const _exhaustive: never = command;
      throw new InvariantViolated(`unknown session command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export function evolve(state: VerificationSessionState, event: VerificationSessionEvent): VerificationSessionState {
  switch (event.type) {
    case 'VerificationSessionCreated':
      return { ...initialSessionState, status: 'created', created: event.data };
    case 'VerificationSessionConsentGiven':
      return { ...state, status: 'in_progress', consented: true };
    case 'VerificationSessionIdentityChecked':
      return {
        ...state,
        identityChecks: state.identityChecks + 1,
        identity: { reference: event.data.verificationReference, kind: event.data.kind, outcome: event.data.outcome },
        sealedIdentity: event.data.identity,
      };
    case 'VerificationSessionSelfieCaptured':
      return { ...state, selfies: state.selfies + 1, selfieId: event.data.selfieId, selfieIds: [...state.selfieIds, event.data.selfieId], liveness: event.data.liveness ?? null };
    case 'VerificationSessionDocumentCaptured': {
      const { documentId, document, side } = event.data;
      return { ...state, documents: [...state.documents, { documentId, document, side }] };
    }
    case 'VerificationSessionSubmitted':
      return { ...state, status: 'submitted' };
    case 'VerificationSessionDecided': {
      const { decision, reasons, faceMatchReference, faceMatchConfidence } = event.data;
      return { ...state, status: decision, decision: { decision, reasons, faceMatchReference, faceMatchConfidence } };
    }
    case 'VerificationSessionReviewed': {
      const { decision, reason, reviewedBy, reviewedAt } = event.data;
      return { ...state, status: decision, review: { decision, reason, reviewedBy, reviewedAt } };
    }
    case 'VerificationSessionExpired':
      return { ...state, status: 'expired' };
    case 'VerificationSessionCancelled':
      return { ...state, status: 'cancelled' };
    case 'VerificationSessionPersonalDataErased':
      return { ...state, personalDataErasedAt: event.data.erasedAt };
    default: {
      const _exhaustive: never = event;
      throw new InvariantViolated(`unknown session event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export const verificationSessionDecider: Decider<VerificationSessionState, VerificationSessionCommand, VerificationSessionEvent> = {
  initialState: initialSessionState,
  decide,
  evolve,
};
