import { describe, expect, it } from '@jest/globals';
import { anonymisedAddress } from './request-log.js';

describe('anonymisedAddress: the network, never the host', () => {
  it.each([
    ['198.51.100.73', '198.51.100.0'],
    ['::ffff:203.0.113.7', '203.0.113.0'],
    ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3::'],
    ['2001:db8::1', '2001:db8:0::'],
    ['::1', '0:0:0::'],
    [undefined, undefined],
    ['not an address', undefined],
  ])('%s → %s', (given, expected) => {
    expect(anonymisedAddress(given)).toBe(expected);
  });
});
