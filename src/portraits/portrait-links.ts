import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Portrait ids: `prt_` + a segment file (16 hex characters, 64 random bits), the record's offset and
 * its length in hex (see FilePortraitStore); or, stored before segments, `prt_` + 32 hex characters
 * naming a file of its own.
 */
export const PORTRAIT_ID = /^prt_(?:[0-9a-f]{32}|[0-9a-f]{16}_[0-9a-f]{1,10}_[0-9a-f]{1,6})$/;
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

export interface PortraitLink {
  readonly path: string;
  readonly expiresAt: Date;
}

/**
 * The message is the portrait id and the expiry: both are in the link, so a signature is checked
 * before anything is read. The id names one record the service stored (a random segment name, an
 * offset and a length), and the service signs it only when showing the verification that holds it
 * to its own organization, so the organization need not be part of the message.
 */
function signature(secret: Buffer, portraitId: string, expiresUnix: number): string {
  return createHmac('sha256', secret).update(`portrait-link-v2\n${portraitId}\n${expiresUnix}`).digest('base64url');
}

/**
 * A link that serves one portrait until `now + ttlSeconds`. The HMAC binds the portrait and the
 * expiry, so a link can be neither stretched nor moved to another portrait.
 */
export function signPortraitLink(secret: Buffer, portraitId: string, now: Date, ttlSeconds: number): PortraitLink {
  const expiresUnix = Math.floor(now.getTime() / 1000) + ttlSeconds;
  const query = new URLSearchParams({ expires: String(expiresUnix), signature: signature(secret, portraitId, expiresUnix) });
  return { path: `/v1/portraits/${portraitId}?${query.toString()}`, expiresAt: new Date(expiresUnix * 1000) };
}

export type LinkCheck = 'valid' | 'malformed' | 'expired' | 'bad_signature';

/**
 * The whole check of a link, with no I/O: its shape, then its signature (compared in constant
 * time), then its expiry. Only a link this service signed gets past it to the store.
 */
export function checkPortraitLink(secret: Buffer, portraitId: string, expires: unknown, given: unknown, now: Date): LinkCheck {
  if (!PORTRAIT_ID.test(portraitId) || typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof given !== 'string' || !SIGNATURE.test(given)) return 'malformed';
  const expected = Buffer.from(signature(secret, portraitId, Number(expires)));
  const actual = Buffer.from(given);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return 'bad_signature';
  if (Number(expires) * 1000 <= now.getTime()) return 'expired';
  return 'valid';
}
