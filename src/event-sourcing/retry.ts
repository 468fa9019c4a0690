/**
 * How a command handler answers an append refused because another writer moved the stream:
 * refold the stream and decide again, up to `maxAttempts` appends in all, pausing
 * `backoffMs(refusals)` before each new attempt.
 */
export interface RetryPolicy {
  /** Appends tried before the command gives up; 1 is no retry. */
  readonly maxAttempts: number;
  /** The pause after `refusals` refused appends (1 after the first), before the next attempt. */
  backoffMs(refusals: number): number;
}

/** A bound on every policy: a command that loses this many races is better answered than retried. */
export const MAX_ATTEMPTS = 100;
export const MAX_BACKOFF_MS = 5_000;

/** One append: a refusal is answered with the stream as the winner left it. */
export const NO_RETRY: RetryPolicy = { maxAttempts: 1, backoffMs: () => 0 };

/** A random pause up to `stepMs` per refusal so far: writers that collided spread out. */
export function linearJitter(maxAttempts: number, stepMs: number): RetryPolicy {
  return { maxAttempts, backoffMs: (refusals) => Math.random() * stepMs * refusals };
}

/** A random pause up to `baseMs`, doubling per refusal up to `maxMs` (full jitter). */
export function exponentialJitter(maxAttempts: number, baseMs: number, maxMs: number): RetryPolicy {
  return { maxAttempts, backoffMs: (refusals) => Math.random() * Math.min(maxMs, baseMs * 2 ** (refusals - 1)) };
}

export function assertRetryPolicy(policy: RetryPolicy): void {
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1 || policy.maxAttempts > MAX_ATTEMPTS) {
    throw new RangeError(`maxAttempts must be an integer from 1 to ${MAX_ATTEMPTS}, got ${policy.maxAttempts}`);
  }
}

/** The policy's pause, held to 0..MAX_BACKOFF_MS whatever the policy computes. */
export function boundedBackoffMs(policy: RetryPolicy, refusals: number): number {
  const backoffMs = policy.backoffMs(refusals);
  return Number.isFinite(backoffMs) ? Math.min(Math.max(backoffMs, 0), MAX_BACKOFF_MS) : MAX_BACKOFF_MS;
}
