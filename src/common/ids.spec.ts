import { describe, expect, it } from '@jest/globals';
import { bufferedCryptoPrng, RandomIdGenerator } from './ids.js';

describe('RandomIdGenerator', () => {
  it('gives references as vrf_ + a ULID, unique and increasing', () => {
    const ids = new RandomIdGenerator();
    const references = Array.from({ length: 5_000 }, () => ids.reference());
    for (const reference of references) expect(reference).toMatch(/^vrf_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(references).size).toBe(references.length);
    expect([...references].sort()).toEqual(references);
  });

  it('draws ULID randomness in [0, 1), spread over the whole range, across buffer refills', () => {
    const prng = bufferedCryptoPrng();
    const values = Array.from({ length: 10_000 }, prng);
    expect(values.every((value) => value >= 0 && value < 1)).toBe(true);
    const buckets = new Array<number>(10).fill(0);
    for (const value of values) buckets[Math.floor(value * 10)] += 1;
    // 1,000 expected per bucket; a fair source is far inside these bounds.
    for (const count of buckets) expect(count).toBeGreaterThan(800);
    expect(new Set(values).size).toBeGreaterThan(9_900);
  });
});
