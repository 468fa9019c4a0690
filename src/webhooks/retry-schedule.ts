/**
 * The pause after each failed attempt of a delivery, before the next: the first attempt goes at
 * once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 20 h, ten attempts over about three
 * days (71 h 35 min plus jitter), after which the delivery is failed. Each pause is drawn within
 * ±JITTER of its figure, so that an endpoint's deliveries that failed together do not all come back
 * at the same instant.
 */
export const RETRY_DELAYS_MS: readonly number[] = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 72_000_000];
export const JITTER = 0.1;
/** Attempts in all: the first and one after each pause. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/**
 * When the next attempt is due after `attempt` (1 for the first) failed at `failedAt`, or null when
 * that was the last. `random` is a number in [0, 1) (injected: tests pin it).
 */
export function nextAttemptAt(attempt: number, failedAt: Date, random: number): Date | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError('attempt counts from 1');
  if (attempt >= MAX_ATTEMPTS) return null;
  const base = RETRY_DELAYS_MS[attempt - 1];
  return new Date(failedAt.getTime() + Math.round(base * (1 - JITTER + 2 * JITTER * random)));
}
