import { hash, verify } from '@node-rs/argon2';

/** Argon2id (`@node-rs/argon2`'s Algorithm.Argon2id; a const enum, so its value here). */
const ARGON2ID = 2;
/** OWASP's first Argon2id setting: 19 MiB, 2 passes, 1 lane. */
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/**
 * Checks a password against its hash. With no hash (an unknown account, or one whose password is
 * not set yet) a dummy hash is still verified, so that the answer takes as long either way.
 */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  const target = stored ?? (await dummyHash());
  const matches = await verify(target, password).catch(() => false);
  return stored !== null && matches;
}

let dummy: Promise<string> | undefined;
function dummyHash(): Promise<string> {
  dummy ??= hash('not a password of anyone', OPTIONS);
  return dummy;
}
