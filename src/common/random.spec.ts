import { describe, expect, it } from '@jest/globals';
import { pooledRandomBytes } from './random.js';

describe('Pooled random bytes', () => {
  it('answers the size asked, a fresh copy each time, never the same bytes twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i += 1) {
      const bytes = pooledRandomBytes(12);
      expect(bytes.length).toBe(12);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(2_000);
    const kept = pooledRandomBytes(32);
    const copy = Buffer.from(kept);
    for (let i = 0; i < 1_000; i += 1) pooledRandomBytes(32);
    expect(kept.equals(copy)).toBe(true);
  });

  it('answers sizes larger than its pool, and nothing for zero', () => {
    expect(pooledRandomBytes(10_000).length).toBe(10_000);
    expect(pooledRandomBytes(0).length).toBe(0);
    expect(() => pooledRandomBytes(-1)).toThrow(RangeError);
  });
});
