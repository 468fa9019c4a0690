import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4_096;
const pool = Buffer.alloc(POOL_BYTES);
let next = POOL_BYTES;

/**
 * `size` bytes from the system CSPRNG, drawn from a pool refilled 4 KiB at a time (as Node's own
 * randomUUID does): a check seals three values (its data key, its request, its result), each asking
 * for a nonce, and one call into crypto per value cost more than the sealing itself. Each answer is
 * a copy, and the pool's bytes are wiped as they are handed out, so no key material stays behind.
 */
export function pooledRandomBytes(size: number): Buffer {
  if (!Number.isInteger(size) || size < 0) throw new RangeError('size must be a non-negative integer');
  if (size > POOL_BYTES / 4) return randomFillSync(Buffer.alloc(size));
  if (next + size > POOL_BYTES) {
    randomFillSync(pool);
    next = 0;
  }
  const bytes = Buffer.from(pool.subarray(next, next + size));
  pool.fill(0, next, next + size);
  next += size;
  return bytes;
}
