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

function signature(secret: Buffer, portraitId: string, organizationId: string, expiresUnix: number): string {
  return createHmac('sha256', secret).update(`portrait\n${portraitId}\n${organizationId}\n${expiresUnix}`).digest('base64url');
}

/**
 * A link that serves one portrait until `now + ttlSeconds`. The HMAC binds the portrait, the
 * organization that owns it and the expiry, so a link cannot be stretched, moved to another
 * portrait, or used for another organization's image.
 */
export function signPortraitLink(secret: Buffer, portraitId: string, organizationId: string, now: Date, ttlSeconds: number): PortraitLink {
  const expiresUnix = Math.floor(now.getTime() / 1000) + ttlSeconds;
  const query = new URLSearchParams({ expires: String(expiresUnix), signature: signature(secret, portraitId, organizationId, expiresUnix) });
  return { path: `/v1/portraits/${portraitId}?${query.toString()}`, expiresAt: new Date(expiresUnix * 1000) };
}

export type LinkCheck = 'valid' | 'malformed' | 'expired' | 'bad_signature';

/** Checks the shape and expiry first (no I/O), then the signature against the owner read from the store. */
export function checkLinkShape(portraitId: string, expires: unknown, given: unknown, now: Date): LinkCheck {
  if (!PORTRAIT_ID.test(portraitId) || typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) || typeof given !== 'string' || !SIGNATURE.test(given)) return 'malformed';
  if (Number(expires) * 1000 <= now.getTime()) return 'expired';
  return 'valid';
}

export function checkLinkSignature(secret: Buffer, portraitId: string, organizationId: string, expires: string, given: string): LinkCheck {
  const expected = Buffer.from(signature(secret, portraitId, organizationId, Number(expires)));
  const actual = Buffer.from(given);
  return expected.length === actual.length && timingSafeEqual(expected, actual) ? 'valid' : 'bad_signature';
}
