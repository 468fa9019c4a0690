import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { isSealed, open, openBytes, seal, sealBytes, SealOpenFailed, type SealBinding, type SealedEnvelope } from './sealing.js';

const key = randomBytes(32);
const binding: SealBinding = { reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', eventType: 'VerificationRequested', field: 'request' };
const request = { nin: '21440414976', phone: '08150292236', image: { sha256: 'ab'.repeat(32), sizeBytes: 1234 } };

describe('Sealing a personal field', () => {
  it('round-trips the value under the same key and binding, as a versioned JSON envelope of base64 fields', () => {
    const sealed = seal(key, request, binding);
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).toMatchObject({ sealed: 'aes-256-gcm', v: 1 });
    expect(JSON.parse(JSON.stringify(sealed))).toEqual(sealed);
    for (const field of ['nonce', 'data', 'tag'] as const) expect(sealed[field]).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(JSON.stringify(sealed)).not.toContain('21440414976');
    expect(open(key, sealed, binding)).toEqual(request);
  });

  it('uses a fresh nonce each time: the same value sealed twice gives different ciphertexts', () => {
    const nonces = new Set(Array.from({ length: 1_000 }, () => seal(key, request, binding).nonce));
    expect(nonces.size).toBe(1_000);
    expect(Buffer.from([...nonces][0], 'base64')).toHaveLength(12);
  });

  it.each([
    ['another verification', { ...binding, reference: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TS' }],
    ['another event type', { ...binding, eventType: 'VerificationCompleted' }],
    ['another field', { ...binding, field: 'result' }],
  ])('fails to open when moved to %s (associated data)', (_what, other) => {
    expect(() => open(key, seal(key, request, binding), other)).toThrow(SealOpenFailed);
  });

  it('fails to open under another key', () => {
    expect(() => open(randomBytes(32), seal(key, request, binding), binding)).toThrow(SealOpenFailed);
  });

  it.each(['data', 'tag', 'nonce'] as const)('fails to open when a bit of its %s is flipped', (field) => {
    const sealed = seal(key, request, binding);
    const bytes = Buffer.from(sealed[field], 'base64');
    bytes[bytes.length - 1] ^= 0x01;
    const tampered: SealedEnvelope = { ...sealed, [field]: bytes.toString('base64') };
    expect(() => open(key, tampered, binding)).toThrow(SealOpenFailed);
  });

  it('fails to open an envelope of an unknown version, or with a truncated nonce or tag', () => {
    const sealed = seal(key, request, binding);
    expect(() => open(key, { ...sealed, v: 2 as 1 }, binding)).toThrow(SealOpenFailed);
    expect(() => open(key, { ...sealed, tag: sealed.tag.slice(0, 8) }, binding)).toThrow(SealOpenFailed);
  });

  it('refuses a key that is not 256 bits', () => {
    expect(() => seal(randomBytes(16), request, binding)).toThrow(RangeError);
  });

  it('seals raw bytes the same way, bound to their associated data', () => {
    const plain = randomBytes(100);
    const sealed = sealBytes(key, plain, Buffer.from('a'));
    expect(openBytes(key, sealed, Buffer.from('a'))).toEqual(plain);
    expect(() => openBytes(key, sealed, Buffer.from('b'))).toThrow(SealOpenFailed);
  });

  it('does not take plain JSON for an envelope', () => {
    expect(isSealed(request)).toBe(false);
    expect(isSealed({})).toBe(false);
    expect(isSealed(null)).toBe(false);
  });
});
