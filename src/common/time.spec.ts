import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isoWithOffset, parseIsoInstant } from './time.js';

describe('isoWithOffset', () => {
  it('writes the instant in UTC with an explicit +00:00 offset, milliseconds kept', () => {
    expect(isoWithOffset(new Date(Date.UTC(2026, 10, 23, 9, 5, 7, 12)))).toBe('2026-11-23T09:05:07.012+00:00');
  });

  it('keeps the expanded years of toISOString', () => {
    expect(isoWithOffset(new Date('-000001-01-01T00:00:00Z'))).toBe('-000001-01-01T00:00:00.000+00:00');
  });

  it('writes the characters of toISOString with +00:00 for its Z, for any instant, one after another on the same day or not', () => {
    const reference = (date: Date) => `${date.toISOString().slice(0, -1)}+00:00`;
    fc.assert(
      fc.property(fc.array(fc.date({ noInvalidDate: true }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 86_400_000 }), (dates, step) => {
        // Neighbours a step apart, as the rows of a list are, as well as instants anywhere in the range.
        for (const date of dates.flatMap((date) => [date, new Date(Math.min(date.getTime() + step, 8.64e15))])) expect(isoWithOffset(date)).toBe(reference(date));
      }),
      { numRuns: 2_000 },
    );
    for (const edge of [0, -1, 8.64e15, -8.64e15, Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), Date.UTC(0, 0, 1) - 1, Date.UTC(1969, 11, 31, 23, 59, 59, 999)]) {
      expect(isoWithOffset(new Date(edge))).toBe(reference(new Date(edge)));
    }
    expect(() => isoWithOffset(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('round-trips through parseIsoInstant', () => {
    const instant = new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
    expect(parseIsoInstant(isoWithOffset(instant))?.getTime()).toBe(instant.getTime());
  });
});
