import { describe, expect, it } from '@jest/globals';
import { MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from './retry-schedule.js';

const at = new Date('2026-11-01T00:00:00Z');

describe('Given a failed attempt of a delivery', () => {
  it('the next is due after the pause of the schedule, within ±10 %', () => {
    expect(nextAttemptAt(1, at, 0.5)?.getTime()).toBe(at.getTime() + 5_000);
    expect(nextAttemptAt(1, at, 0)?.getTime()).toBe(at.getTime() + 4_500);
    expect(nextAttemptAt(2, at, 0.999_999)?.getTime()).toBe(at.getTime() + 330_000);
  });
  it('the pauses grow and add up to about three days', () => {
    for (let index = 1; index < RETRY_DELAYS_MS.length; index++) expect(RETRY_DELAYS_MS[index]).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[index - 1]);
    const totalHours = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0) / 3_600_000;
    expect(totalHours).toBeGreaterThan(66);
    expect(totalHours).toBeLessThan(78);
  });
  it('after the last attempt there is none', () => {
    expect(MAX_ATTEMPTS).toBe(10);
    expect(nextAttemptAt(9, at, 0.5)).not.toBeNull();
    expect(nextAttemptAt(10, at, 0.5)).toBeNull();
  });
});
