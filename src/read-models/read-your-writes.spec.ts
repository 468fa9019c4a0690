import { describe, expect, it } from '@jest/globals';
import { ValidationFailed } from '../common/errors.js';
import type { ProjectionWaiter } from './projection-waiter.js';
import { formatConsistencyToken, parseConsistencyToken, ReadYourWrites } from './read-your-writes.js';

const owner = (i: number) => ({ organizationId: `org_${i}`, environment: 'test' });

describe('ReadYourWrites positions', () => {
  const positions = () => new ReadYourWrites(undefined as unknown as ProjectionWaiter);

  it('keeps the newest position per category and merges a token in', () => {
    const reads = positions();
    reads.noteWrite(owner(1), 'wallet', 10n);
    reads.noteWrite(owner(1), 'wallet', 7n);
    reads.noteWrite(owner(1), 'verification', 9n);
    expect(reads.positions(owner(1))).toEqual({ wallet: 10n, verification: 9n });
    expect(reads.positions(owner(1), { wallet: 12n, verification: 3n })).toEqual({ wallet: 12n, verification: 9n });
    expect(reads.positions({ organizationId: 'org_1', environment: 'live' })).toEqual({});
  });

  it('never forgets what a pair must wait for: pairs dropped past 10,000 fold into a floor', () => {
    const reads = positions();
    reads.noteWrite(owner(0), 'verification', 5n);
    reads.noteWrite(owner(0), 'wallet', 50n);
    for (let i = 1; i <= 10_000; i++) reads.noteWrite(owner(i), 'wallet', BigInt(i));
    expect(reads.positions(owner(0))).toEqual({ verification: 5n, wallet: 50n });
    // Written again after being dropped, it still waits for its old verification position.
    reads.noteWrite(owner(0), 'wallet', 20_000n);
    expect(reads.positions(owner(0))).toEqual({ verification: 5n, wallet: 20_000n });
  });
});

describe('X-Consistency-Token', () => {
  it('round-trips, and is absent when nothing is known', () => {
    expect(formatConsistencyToken({})).toBeUndefined();
    const token = formatConsistencyToken({ verification: 3n, wallet: 2n ** 64n - 2n });
    expect(token).toBe('wallet:18446744073709551614,verification:3');
    expect(parseConsistencyToken(token)).toEqual({ wallet: 2n ** 64n - 2n, verification: 3n });
    expect(parseConsistencyToken(undefined)).toEqual({});
  });

  it.each(['', 'wallet', 'wallet:', 'wallet:-1', 'wallet:1,', 'wallet:1,wallet:2', 'organization:1', 'wallet:1 ,verification:2', `wallet:${2n ** 64n}`, ['wallet:1']])(
    'refuses %p as 422 naming the header',
    (value) => {
      expect(() => parseConsistencyToken(value)).toThrow(ValidationFailed);
    },
  );
});
