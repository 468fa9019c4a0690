/**
 * The message of a check's 503 whose outcome is not known yet (OutcomeNotKnown): docs/api.md tells
 * integrators that this answer settles either way, and the chaos run's client tells it apart by it.
 * A module of its own, so that a client reads it without loading the service.
 */
export const OUTCOME_NOT_KNOWN_MESSAGE = 'The outcome of this check is not known yet; it is settled shortly and shown by GET /v1/verifications/{reference}';
