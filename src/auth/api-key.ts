import { hash } from 'node:crypto';
import { InvariantViolated } from '../common/errors.js';
import type { Environment } from '../common/environment.js';
import type { IdGenerator } from '../common/ids.js';

/** 32 random bytes: 256 bits, far beyond guessing, and 43 base64url characters. */
export const API_KEY_RANDOM_BYTES = 32;
/** Characters of the random part kept in the prefix, so an operator can recognise a key without it. */
export const API_KEY_PREFIX_CHARS = 4;

export interface GeneratedApiKey {
  /** Shown once, in the response that created it; never stored, never logged. */
  readonly key: string;
  /** SHA-256 of the full key, hex: all the service keeps. */
  readonly keyHash: string;
  readonly prefix: string;
  readonly last4: string;
}

export function apiKeyPrefix(environment: Environment): string {
  return `service_${environment}_`;
}

export function generateApiKey(environment: Environment, ids: IdGenerator): GeneratedApiKey {
  const random = ids.secret(API_KEY_RANDOM_BYTES);
  if (random.length < 43) throw new InvariantViolated('an API key needs at least 32 random bytes');
  const key = `${apiKeyPrefix(environment)}${random}`;
  return { key, keyHash: hashApiKey(key), prefix: `${apiKeyPrefix(environment)}${random.slice(0, API_KEY_PREFIX_CHARS)}`, last4: random.slice(-4) };
}

/**
 * Keys carry 256 random bits, so a plain SHA-256 is enough (no salt or slow hash needed) and lets
 * the guard look a key up by its hash in one indexed query.
 */
export function hashApiKey(key: string): string {
  // One-shot: every keyed request hashes its key, and a Hash object per call cost several times more.
  return hash('sha256', key, 'hex');
}
