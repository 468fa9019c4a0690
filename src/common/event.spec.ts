import { describe, expect, it } from '@jest/globals';
import { occurredAt, occurredAtText } from './event.js';

const createdAt = new Date('2026-03-01T12:00:00.000Z');

describe('occurredAtText', () => {
  it.each([
    '2026-01-01T00:00:00.007Z',
    '2026-12-31T23:59:59.999Z',
    '2026-02-28T10:00:00.000Z',
    // Days a month may not have: the Date rolls them over, and so must the text.
    '2026-02-29T10:00:00.000Z',
    '2026-02-30T10:00:00.000Z',
    '2026-04-31T10:00:00.000Z',
    '2024-02-29T10:00:00.000Z',
    // Not the form toISOString writes: read through a Date.
    '2026-03-03T14:00:00+01:00',
    '2026-03-03T14:00:00Z',
    '2026-03-03T24:00:00.000Z',
    '2026-03-03',
  ])('gives what occurredAt(event).toISOString() gives for %s', (stamped) => {
    const event = { metadata: { occurredAt: stamped }, createdAt };
    expect(occurredAtText(event)).toBe(occurredAt(event).toISOString());
  });

  it('falls back to the commit time when the metadata has no time', () => {
    expect(occurredAtText({ metadata: {}, createdAt })).toBe('2026-03-01T12:00:00.000Z');
    expect(occurredAtText({ metadata: { occurredAt: 5 }, createdAt })).toBe('2026-03-01T12:00:00.000Z');
  });

  it('throws as toISOString does on a time that is no time', () => {
    expect(() => occurredAtText({ metadata: { occurredAt: 'soon' }, createdAt })).toThrow(RangeError);
  });
});
