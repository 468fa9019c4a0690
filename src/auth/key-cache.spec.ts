import { describe, expect, it } from '@jest/globals';
import { AuthenticatedKeyCache, KEY_CACHE_TTL_MS } from './key-cache.js';

describe('AuthenticatedKeyCache', () => {
  it('answers a key it was given until its TTL has passed, then forgets it', () => {
    const cache = new AuthenticatedKeyCache<string>();
    cache.set('hash-a', 'row-a', 1_000);
    expect(cache.get('hash-a', 1_000)).toBe('row-a');
    expect(cache.get('hash-a', 1_000 + KEY_CACHE_TTL_MS - 1)).toBe('row-a');
    expect(cache.get('hash-a', 1_000 + KEY_CACHE_TTL_MS)).toBeUndefined();
    expect(cache.get('hash-b', 1_000)).toBeUndefined();
  });

  it('forgets everything on invalidate, so a change made through this instance applies to the next request', () => {
    const cache = new AuthenticatedKeyCache<string>();
    cache.set('hash-a', 'row-a', 0);
    cache.set('hash-b', 'row-b', 0);
    cache.invalidate();
    expect(cache.get('hash-a', 1)).toBeUndefined();
    expect(cache.get('hash-b', 1)).toBeUndefined();
  });

  it('drops a value read before an invalidate, so a read racing a revocation cannot bring the key back', () => {
    const cache = new AuthenticatedKeyCache<string>();
    const readStartedIn = cache.generation;
    cache.invalidate();
    cache.set('hash-a', 'stale', 0, readStartedIn);
    expect(cache.get('hash-a', 1)).toBeUndefined();
    cache.set('hash-a', 'fresh', 0, cache.generation);
    expect(cache.get('hash-a', 1)).toBe('fresh');
  });

  it('stays bounded: past 10,000 keys it starts again from empty', () => {
    const cache = new AuthenticatedKeyCache<number>();
    for (let index = 0; index < 10_000; index += 1) cache.set(`hash-${index}`, index, 0);
    expect(cache.get('hash-9999', 1)).toBe(9_999);
    cache.set('hash-new', -1, 0);
    expect(cache.get('hash-0', 1)).toBeUndefined();
    expect(cache.get('hash-new', 1)).toBe(-1);
  });

  it('keeps its TTL well inside the documented 1 s revocation bound', () => {
    expect(KEY_CACHE_TTL_MS).toBeLessThanOrEqual(500);
  });
});
