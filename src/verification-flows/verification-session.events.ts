import type { Event } from '../common/event.js';
import type { SealedEnvelope } from '../data-protection/sealing.js';

/**
 * Events of `verificationSession-{sessionId}`: one person's pass through a flow. Every event names
 * its organization and environment (the webhooks and the read model need no other stream). What the
 * person or the integrator chose freely (the customer id, metadata, the consent, the identity
 * number) is sealed under the session's own data key; the selfie and each document image are sealed files named by id.
 */
type SessionIds = { sessionId: string; organizationId: string; environment: string };
type Sealed = SealedEnvelope & Record<string, string | number>;

export type VerificationSessionCreated = Event<
  'VerificationSessionCreated',
  SessionIds & {
    flowId: string;
    flowVersion: number;
    /** The key that created it: the session's checks run on it, as POST /v1/{scope} would. */
    keyId: string;
    /** SHA-256 (hex) of the client secret, shown once; never the secret. */
    secretHash: string;
    expiresAt: string;
    /** The flow version's step types, in order, and its decision rule: the session keeps them whatever later versions say. */
    steps: string[];
    faceMatchThreshold: number;
    reviewMarginPoints: number;
    /** `required` or `off`; absent on sessions created before the rule, which decide without it (off). */
    livenessRule?: 'required' | 'off';
    /** Sealed `{customerId, metadata}`. */
    customer: Sealed;
  }
>;
/** Sealed `{textVersion, textHash, agreedAt}`: what the person agreed to, and when. */
export type VerificationSessionConsentGiven = Event<'VerificationSessionConsentGiven', SessionIds & { consent: Sealed }>;
/** An ordinary verification the session ran; the number itself sealed (`{kind, number}`). */
export type VerificationSessionIdentityChecked = Event<
  'VerificationSessionIdentityChecked',
  SessionIds & { verificationReference: string; kind: string; outcome: 'found' | 'not_found'; identity: Sealed }
>;
/** `liveness`: the active step (head_turn, blink) the server saw across the frames the page sent with the selfie; null when none (a chosen file, or no step shown). */
export type VerificationSessionSelfieCaptured = Event<'VerificationSessionSelfieCaptured', SessionIds & { selfieId: string; liveness?: string | null }>;
/** One side of a document photographed and accepted: the image a sealed file named by `documentId`, never in the event. */
export type VerificationSessionDocumentCaptured = Event<'VerificationSessionDocumentCaptured', SessionIds & { documentId: string; document: string; side: string }>;
export type VerificationSessionSubmitted = Event<'VerificationSessionSubmitted', SessionIds>;
export type VerificationSessionDecided = Event<
  'VerificationSessionDecided',
  SessionIds & { decision: 'approved' | 'declined' | 'needs_review'; reasons: string[]; faceMatchReference: string | null; faceMatchConfidence: number | null }
>;
/**
 * A person's decision on a session in review: approved or declined, with a reason from a fixed list
 * (no free text: it would invite personal data), by the organization (`organization`) or an operator.
 */
export type VerificationSessionReviewed = Event<
  'VerificationSessionReviewed',
  SessionIds & { decision: 'approved' | 'declined'; reason: string; reviewedBy: 'organization' | 'operator'; reviewedAt: string }
>;
export type VerificationSessionExpired = Event<'VerificationSessionExpired', SessionIds>;
export type VerificationSessionCancelled = Event<'VerificationSessionCancelled', SessionIds>;
export type VerificationSessionPersonalDataErased = Event<'VerificationSessionPersonalDataErased', SessionIds & { erasedAt: string }>;

export type VerificationSessionEvent =
  | VerificationSessionCreated
  | VerificationSessionConsentGiven
  | VerificationSessionIdentityChecked
  | VerificationSessionSelfieCaptured
  | VerificationSessionDocumentCaptured
  | VerificationSessionSubmitted
  | VerificationSessionDecided
  | VerificationSessionReviewed
  | VerificationSessionExpired
  | VerificationSessionCancelled
  | VerificationSessionPersonalDataErased;

export const VERIFICATION_SESSION_CATEGORY = 'verificationSession';
export const verificationSessionStream = (sessionId: string): string => `${VERIFICATION_SESSION_CATEGORY}-${sessionId}`;

/** The stream's events as the history's steps. */
export const SESSION_HISTORY_STEPS: Readonly<Record<VerificationSessionEvent['type'], string>> = {
  VerificationSessionCreated: 'created',
  VerificationSessionConsentGiven: 'consent_given',
  VerificationSessionIdentityChecked: 'identity_checked',
  VerificationSessionSelfieCaptured: 'selfie_captured',
  VerificationSessionDocumentCaptured: 'document_captured',
  VerificationSessionSubmitted: 'submitted',
  VerificationSessionDecided: 'decided',
  VerificationSessionReviewed: 'reviewed',
  VerificationSessionExpired: 'expired',
  VerificationSessionCancelled: 'cancelled',
  VerificationSessionPersonalDataErased: 'personal_data_erased',
};
