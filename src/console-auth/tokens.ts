import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

/** 32 random bytes, base64url: session tokens, CSRF tokens and one-time links. */
export function secretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Only hashes of session and one-time tokens are stored. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function consoleId(prefix: 'usr' | 'ses' | 'tok'): string {
  return `${prefix}_${ulid()}`;
}

/** Emails compare without case and surrounding spaces. */
export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}
