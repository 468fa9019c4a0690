import { describe, expect, it } from '@jest/globals';
import { KeyCache } from './lru.js';

const buffer = (byte: number) => Buffer.alloc(32, byte);

describe('The cache of unwrapped keys', () => {
  it('holds at most maxEntries, dropping the least recently used', () => {
    const cache = new KeyCache<string, Buffer>(2, 60_000);
    cache.set('a', buffer(1));
    cache.set('b', buffer(2));
    expect(cache.get('a')).toEqual(buffer(1));
    cache.set('c', buffer(3));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual(buffer(1));
    expect(cache.get('c')).toEqual(buffer(3));
  });

  it('forgets a key ttlMs after it was put, and wipes its bytes', () => {
    let now = 1_000;
    const cache = new KeyCache<string, Buffer>(10, 500, () => now);
    const key = buffer(7);
    cache.set('a', key);
    now += 499;
    expect(cache.get('a')).toEqual(buffer(7));
    now += 1;
    expect(cache.get('a')).toBeUndefined();
    expect(key.equals(Buffer.alloc(32))).toBe(true);
    expect(cache.size).toBe(0);
  });

  it("answers keys its caller owns: expiry wipes the cache's own bytes, never a key handed out before", () => {
    let now = 1_000;
    const cache = new KeyCache<string, Buffer>(10, 500, () => now);
    const given = buffer(7);
    cache.set('a', given);
    const handedOut = cache.get('a');
    now += 500;
    expect(cache.get('a')).toBeUndefined();
    expect(given.equals(Buffer.alloc(32))).toBe(true);
    expect(handedOut).toEqual(buffer(7));
  });

  it('wipes what it lets go of: on delete, clear, replacement and eviction past maxEntries', () => {
    const cache = new KeyCache<string, Buffer>(2, 60_000);
    const [deleted, cleared, replaced, evicted] = [buffer(1), buffer(2), buffer(3), buffer(4)];
    cache.set('a', deleted);
    cache.delete('a');
    cache.set('b', replaced);
    cache.set('b', buffer(5));
    cache.set('c', evicted);
    cache.set('d', buffer(6));
    cache.set('e', cleared);
    cache.clear();
    for (const wiped of [deleted, cleared, replaced, evicted]) expect(wiped.equals(Buffer.alloc(32))).toBe(true);
    expect(cache.size).toBe(0);
  });

  it('refuses unbounded limits', () => {
    expect(() => new KeyCache(0, 1_000)).toThrow(RangeError);
    expect(() => new KeyCache(10, Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
