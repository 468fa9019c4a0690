import { describe, expect, it } from '@jest/globals';
import { isoWithOffset, parseIsoInstant } from './time.js';

describe('isoWithOffset', () => {
  it('writes the instant in UTC with an explicit +00:00 offset, milliseconds kept', () => {
    expect(isoWithOffset(new Date(Date.UTC(2026, 10, 23, 9, 5, 7, 12)))).toBe('2026-11-23T09:05:07.012+00:00');
  });

  it('keeps the expanded years of toISOString', () => {
    expect(isoWithOffset(new Date('-000001-01-01T00:00:00Z'))).toBe('-000001-01-01T00:00:00.000+00:00');
  });

  it('round-trips through parseIsoInstant', () => {
    const instant = new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
    expect(parseIsoInstant(isoWithOffset(instant))?.getTime()).toBe(instant.getTime());
  });
});
