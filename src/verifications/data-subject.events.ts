import type { Event } from '../common/event.js';

/** Why a hold keeps a subject's or a check's personal data: a code, never free text (which could carry personal data). */
export const HOLD_REASONS = ['aml_record_keeping', 'litigation', 'regulator_request', 'fraud_investigation', 'restriction_requested'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/**
 * Events of `dataHold-{holdId}`: a hold stops the erasure (by key, by subject, by retention) of a
 * check, or of every check carrying a data subject's identifier, until lifted or until `until`.
 * A subject is named by its blind-index token and a masked identifier (the last 3 characters),
 * never in clear.
 */
export type DataHoldPlaced = Event<
  'DataHoldPlaced',
  {
    holdId: string;
    organizationId: string;
    environment: string;
    /** Set for a hold on one check. */
    reference: string | null;
    /** Set for a hold on a data subject: the identifier's kind, masked form and blind-index token. */
    subjectKind: string | null;
    maskedIdentifier: string | null;
    subjectToken: string | null;
    reason: HoldReason;
    /** ISO 8601; null: until lifted. */
    until: string | null;
    placedAt: string;
  }
>;
export type DataHoldLifted = Event<'DataHoldLifted', { holdId: string; liftedAt: string }>;
export type DataHoldEvent = DataHoldPlaced | DataHoldLifted;
export const DATA_HOLD_EVENT_TYPES: readonly DataHoldEvent['type'][] = ['DataHoldPlaced', 'DataHoldLifted'];

/**
 * Events of `dataRequest-{requestId}`, one each: a data subject's export, or an erasure asked for
 * through the API (by reference or by subject), for the record integrators and operators read.
 * The subject appears only as kind, masked identifier and blind-index token; the actor is in the
 * metadata.
 */
export type DataSubjectExported = Event<
  'DataSubjectExported',
  {
    requestId: string;
    organizationId: string;
    environment: string;
    subjectKind: string;
    maskedIdentifier: string;
    subjectToken: string | null;
    references: string[];
    format: 'json' | 'zip';
    at: string;
  }
>;
export type DataErasureRecorded = Event<
  'DataErasureRecorded',
  {
    requestId: string;
    organizationId: string;
    environment: string;
    /** Null for an erasure by reference. */
    subjectKind: string | null;
    maskedIdentifier: string | null;
    subjectToken: string | null;
    references: string[];
    /** Checks of the subject still running, not erased. */
    pending: string[];
    at: string;
  }
>;
export type DataRequestEvent = DataSubjectExported | DataErasureRecorded;
export const DATA_REQUEST_EVENT_TYPES: readonly DataRequestEvent['type'][] = ['DataSubjectExported', 'DataErasureRecorded'];

export const DATA_SUBJECT_CATEGORIES = { hold: 'dataHold', request: 'dataRequest' } as const;
export const dataSubjectStreams = {
  hold: (holdId: string) => `${DATA_SUBJECT_CATEGORIES.hold}-${holdId}`,
  request: (requestId: string) => `${DATA_SUBJECT_CATEGORIES.request}-${requestId}`,
} as const;
