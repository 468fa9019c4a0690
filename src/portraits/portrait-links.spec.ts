import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { checkPortraitLink, signPortraitLink } from './portrait-links.js';

const secret = randomBytes(32);
const id = 'prt_0123456789abcdef0123456789abcdef';
const now = new Date('2026-11-22T08:00:00Z');

function parts(path: string): { id: string; expires: string; signature: string } {
  const url = new URL(path, 'http://x');
  return { id: url.pathname.split('/').pop() ?? '', expires: url.searchParams.get('expires') ?? '', signature: url.searchParams.get('signature') ?? '' };
}

describe('Signed portrait links', () => {
  const link = signPortraitLink(secret, id, now, 900);
  const p = parts(link.path);

  it('are valid until they expire', () => {
    expect(link.expiresAt.toISOString()).toBe('2026-11-22T08:15:00.000Z');
    expect(checkPortraitLink(secret, p.id, p.expires, p.signature, now)).toBe('valid');
  });
  it('expire', () => expect(checkPortraitLink(secret, p.id, p.expires, p.signature, new Date('2026-11-22T08:15:00Z'))).toBe('expired'));
  it('do not work for another portrait, expiry or secret', () => {
    expect(checkPortraitLink(secret, 'prt_ffffffffffffffffffffffffffffffff', p.expires, p.signature, now)).toBe('bad_signature');
    expect(checkPortraitLink(secret, p.id, String(Number(p.expires) + 3600), p.signature, now)).toBe('bad_signature');
    expect(checkPortraitLink(randomBytes(32), p.id, p.expires, p.signature, now)).toBe('bad_signature');
    expect(checkPortraitLink(secret, p.id, p.expires, 'A'.repeat(43), now)).toBe('bad_signature');
  });
  it('check the signature before the expiry: a forged link is invalid, not expired', () => {
    expect(checkPortraitLink(secret, p.id, '1000', 'A'.repeat(43), now)).toBe('bad_signature');
  });
  it('refuse malformed parameters', () => {
    expect(checkPortraitLink(secret, '../etc/passwd', p.expires, p.signature, now)).toBe('malformed');
    expect(checkPortraitLink(secret, p.id, undefined, p.signature, now)).toBe('malformed');
    expect(checkPortraitLink(secret, p.id, p.expires, 'short', now)).toBe('malformed');
  });
});
