import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { isoWithOffset, parseInstantText, parseIsoInstant } from './time.js';

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

describe('parseInstantText', () => {
  it('is Date.parse for canonical texts one after another, on the same day or not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.date({ noInvalidDate: true, min: new Date(Date.UTC(0, 0, 1)), max: new Date(Date.UTC(9999, 11, 31)) }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 86_400_000 }),
        (dates, step) => {
          for (const date of dates.flatMap((date) => [date, new Date(date.getTime() + step)])) {
            const text = date.toISOString();
            expect(parseInstantText(text)).toBe(Date.parse(text));
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('is Date.parse for a text of the day last parsed that is not a time of day, and for any other text', () => {
    const texts = [
      '2026-03-03T24:00:00.000Z',
      '2026-03-03T23:60:00.000Z',
      '2026-03-03T23:59:60.000Z',
      '2026-03-03T2a:00:00.000Z',
      '2026-03-03T10:00:00.00aZ',
      '2026-03-03T10:00:00.000+01:00',
      '2026-03-03T10:00:00Z',
      '2026-03-03 10:00:00.000Z',
      '2026-02-30T10:00:00.000Z',
      '2026-02-30T23:59:59.999Z',
      '2026-13-01T10:00:00.000Z',
      'not a date',
      '',
    ];
    for (const text of texts) {
      // Each after a canonical text of its own day, so that the day is the one remembered.
      parseInstantText(`${text.slice(0, 11)}00:00:00.000Z`);
      expect({ text, parsed: parseInstantText(text) }).toEqual({ text, parsed: Date.parse(text) });
    }
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.date({ noInvalidDate: true, min: new Date(Date.UTC(0, 0, 1)), max: new Date(Date.UTC(9999, 11, 31)) }), (tail, date) => {
        const day = date.toISOString().slice(0, 11);
        parseInstantText(`${day}00:00:00.000Z`);
        expect(parseInstantText(day + tail)).toBe(Date.parse(day + tail));
      }),
      { numRuns: 2_000 },
    );
  });
});
