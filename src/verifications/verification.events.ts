import type { JsonObject } from '../event-store/event-store.port.js';
import type { Event } from '../common/event.js';

/**
 * Events of `verification-{reference}`. Revision 0 is always VerificationRequested; exactly one
 * terminal event follows at revision 1, appended with expected revision 0 so that the request
 * and the recovery process can never both finish one verification.
 */
export type VerificationRequested = Event<
  'VerificationRequested',
  {
    reference: string;
    organizationId: string;
    environment: string;
    keyId: string;
    scope: string;
    category: string;
    countryCode: string;
    /** The inputs as submitted (personal data: never logged; stored sealed, see verification.codec.ts). */
    request: JsonObject;
    priceKobo: number;
    /** ISO 8601 UTC: when the check ran (the spec's createdAt). */
    requestedAt: string;
    /** Set by the codec on read when the sealed fields could not be opened (erased); never stored. */
    personalDataErasedAt?: string;
  }
>;
/** `result` is personal data, stored sealed; `personalDataErasedAt` as on the request. */
export type VerificationCompleted = Event<
  'VerificationCompleted',
  { reference: string; outcome: 'found' | 'not_found'; result: JsonObject; completedAt: string; personalDataErasedAt?: string }
>;
export type VerificationFailed = Event<'VerificationFailed', { reference: string; reasonCode: string; errorMessage: string; failedAt: string }>;
/** Refused before any provider call: the wallet's available balance was below the price. */
export type VerificationRejected = Event<
  'VerificationRejected',
  { reference: string; reasonCode: 'insufficient_balance'; errorMessage: string; priceKobo: number; balanceKobo: number; rejectedAt: string }
>;

/**
 * The verification's personal data was erased: its data key destroyed and its portrait deleted
 * (by its organization, by data subject, or by the retention sweep; the actor is in the metadata).
 * Carries no personal data. Appended after the terminal event, at most once.
 */
export type VerificationPersonalDataErased = Event<'VerificationPersonalDataErased', { reference: string; erasedAt: string }>;

export type VerificationEvent = VerificationRequested | VerificationCompleted | VerificationFailed | VerificationRejected | VerificationPersonalDataErased;

export const VERIFICATION_EVENT_TYPES: readonly VerificationEvent['type'][] = [
  'VerificationRequested',
  'VerificationCompleted',
  'VerificationFailed',
  'VerificationRejected',
  'VerificationPersonalDataErased',
];
