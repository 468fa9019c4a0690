import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { checkLinkShape, checkLinkSignature, signPortraitLink } from './portrait-links.js';

const secret = randomBytes(32);
const id = 'prt_0123456789abcdef0123456789abcdef';
const now = new Date('2026-11-22T08:00:00Z');

function parts(path: string): { id: string; expires: string; signature: string } {
  const url = new URL(path, 'http://x');
  return { id: url.pathname.split('/').pop() ?? '', expires: url.searchParams.get('expires') ?? '', signature: url.searchParams.get('signature') ?? '' };
}

describe('Signed portrait links', () => {
  const link = signPortraitLink(secret, id, 'org_A', now, 900);
  const p = parts(link.path);

  it('are valid for their organization until they expire', () => {
    expect(link.expiresAt.toISOString()).toBe('2026-11-22T08:15:00.000Z');
    expect(checkLinkShape(p.id, p.expires, p.signature, now)).toBe('valid');
    expect(checkLinkSignature(secret, p.id, 'org_A', p.expires, p.signature)).toBe('valid');
  });
  it('expire', () => expect(checkLinkShape(p.id, p.expires, p.signature, new Date('2026-11-22T08:15:00Z'))).toBe('expired'));
  it('do not work for another organization, portrait, expiry or secret', () => {
    expect(checkLinkSignature(secret, p.id, 'org_B', p.expires, p.signature)).toBe('bad_signature');
    expect(checkLinkSignature(secret, 'prt_ffffffffffffffffffffffffffffffff', 'org_A', p.expires, p.signature)).toBe('bad_signature');
    expect(checkLinkSignature(secret, p.id, 'org_A', String(Number(p.expires) + 3600), p.signature)).toBe('bad_signature');
    expect(checkLinkSignature(randomBytes(32), p.id, 'org_A', p.expires, p.signature)).toBe('bad_signature');
  });
  it('refuse malformed parameters before any lookup', () => {
    expect(checkLinkShape('../etc/passwd', p.expires, p.signature, now)).toBe('malformed');
    expect(checkLinkShape(p.id, undefined, p.signature, now)).toBe('malformed');
    expect(checkLinkShape(p.id, p.expires, 'short', now)).toBe('malformed');
  });
});
