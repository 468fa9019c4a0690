/**
 * Why a check failed, as integrators see it (`failureReason` of a verification, `details.failureReason`
 * of a 502): a few stable values, where the events keep the precise internal reason code.
 * - provider_timeout: the provider did not answer within the check's deadline.
 * - provider_unavailable: the provider could not be reached, answered that it is down (5xx), or
 *   was not called at all because its circuit breaker is open after repeated failures.
 * - provider_error: any other provider failure (an error answer, a malformed one, refused credentials, ...).
 * - insufficient_balance: refused before any provider call (402).
 * - internal_error: the service itself could not finish the check (its result could not be stored,
 *   or it was cut short and settled by the recovery process).
 */
export const FAILURE_REASONS = ['provider_error', 'provider_timeout', 'provider_unavailable', 'insufficient_balance', 'internal_error'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

const UNAVAILABLE = new Set(['provider_circuit_open', 'provider_unreachable', 'provider_unavailable']);
const INTERNAL = new Set(['internal_error', 'portrait_storage_failed', 'recovered_timeout']);

/** The public reason of a stored reason code; null for a check that did not fail. Unknown codes (older or newer versions) read as provider_error. */
export function failureReasonOf(reasonCode: string | null | undefined): FailureReason | null {
  if (reasonCode === null || reasonCode === undefined) return null;
  if (reasonCode === 'provider_timeout') return 'provider_timeout';
  if (UNAVAILABLE.has(reasonCode)) return 'provider_unavailable';
  if (reasonCode === 'insufficient_balance') return 'insufficient_balance';
  if (INTERNAL.has(reasonCode)) return 'internal_error';
  return 'provider_error';
}
