import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { CredentialsCipher, parseCredentials } from './credentials.js';

const binding = { organizationId: 'org_A', environment: 'live', role: 'primary', provider: 'dojah' } as const;

describe('provider credentials', () => {
  const cipher = CredentialsCipher.fromKey(randomBytes(32));

  it('round-trips, and the ciphertext shows none of the secret', () => {
    const sealed = cipher.encrypt({ appId: 'app-1', secretKey: 'sk_live_very_secret' }, binding);
    expect(sealed).not.toContain('very_secret');
    expect(cipher.decrypt(sealed, binding)).toEqual({ appId: 'app-1', secretKey: 'sk_live_very_secret' });
  });

  it('does not decrypt for another organization, role or provider, under another key, or altered', () => {
    const sealed = cipher.encrypt({ appId: 'a', secretKey: 'b' }, binding);
    expect(() => cipher.decrypt(sealed, { ...binding, organizationId: 'org_B' })).toThrow();
    expect(() => cipher.decrypt(sealed, { ...binding, role: 'fallback' })).toThrow();
    expect(() => cipher.decrypt(sealed, { ...binding, provider: 'prembly' })).toThrow();
    expect(() => CredentialsCipher.fromKey(randomBytes(32)).decrypt(sealed, binding)).toThrow();
    const parts = sealed.split('.');
    parts[3] = `${parts[3].slice(0, -2)}AA`;
    expect(() => cipher.decrypt(parts.join('.'), binding)).toThrow();
  });

  it("takes exactly each provider's fields and never quotes a value in an error", () => {
    expect(parseCredentials('prembly', { appId: ' a ', apiKey: 'k' }, 'credentials')).toEqual({ credentials: { appId: 'a', apiKey: 'k' }, errors: [] });
    const refused = parseCredentials('dojah', { appId: 'secret-app', apiKey: 'secret-key' }, 'credentials');
    expect(refused.errors.map((error) => error.field)).toEqual(['credentials.apiKey', 'credentials.secretKey']);
    expect(JSON.stringify(refused.errors)).not.toContain('secret-');
    expect(parseCredentials('sandbox', undefined, 'credentials')).toEqual({ credentials: null, errors: [] });
    expect(parseCredentials('sandbox', { a: 'b' }, 'credentials').errors).toHaveLength(1);
  });
});
