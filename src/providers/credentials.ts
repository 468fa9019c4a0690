import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { FieldError } from '../common/errors.js';
import type { AppConfig } from '../config/config.js';
import { generatedKey, parseKey } from '../portraits/portrait.store.js';
import { CREDENTIAL_FIELDS, type ProviderName } from './capabilities.js';

export type Credentials = Readonly<Record<string, string>>;

/** Longest credential value accepted: keys and app ids are far shorter. */
const MAX_CREDENTIAL_LENGTH = 500;
const VERSION = 'v1';

/** What a ciphertext is bound to: copied onto another organization, environment, role or provider, it does not decrypt. */
export interface CredentialsBinding {
  readonly organizationId: string;
  readonly environment: string;
  readonly role: 'primary' | 'fallback';
  readonly provider: string;
}

/**
 * The provider's credentials from a request body: exactly its fields, non-empty strings. Field
 * errors name fields only; a value never appears in a message.
 */
export function parseCredentials(provider: ProviderName, value: unknown, field: string): { credentials: Credentials | null; errors: FieldError[] } {
  const wanted = CREDENTIAL_FIELDS[provider];
  if (wanted.length === 0) {
    const empty = value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);
    return empty ? { credentials: null, errors: [] } : { credentials: null, errors: [{ field, message: `must be left out: ${provider} needs no credentials` }] };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { credentials: null, errors: [{ field, message: `must be an object with ${wanted.join(' and ')}` }] };
  }
  const errors: FieldError[] = [];
  const credentials: Record<string, string> = {};
  const given = value as Record<string, unknown>;
  for (const name of Object.keys(given).slice(0, 20)) {
    if (!wanted.includes(name)) errors.push({ field: `${field}.${name.slice(0, 50)}`, message: `is not a credential of ${provider} (expected ${wanted.join(', ')})` });
  }
  for (const name of wanted) {
    const item = given[name];
    if (typeof item !== 'string' || item.trim() === '') errors.push({ field: `${field}.${name}`, message: 'is required (a non-empty string)' });
    else if (item.length > MAX_CREDENTIAL_LENGTH) errors.push({ field: `${field}.${name}`, message: `must be at most ${MAX_CREDENTIAL_LENGTH} characters` });
    else credentials[name] = item.trim();
  }
  return errors.length > 0 ? { credentials: null, errors } : { credentials, errors: [] };
}

function aad(binding: CredentialsBinding): Buffer {
  return Buffer.from(`provider-credentials\n${binding.organizationId}\n${binding.environment}\n${binding.role}\n${binding.provider}`, 'utf8');
}

/**
 * Upstream credentials at rest: AES-256-GCM under PROVIDER_CREDENTIALS_KEY (or, when unset, a key
 * generated once under DATA_DIR, like the portrait key). The ciphertext is what events and read
 * models hold; the plain credentials exist only in memory, on the way to the upstream.
 * Format: `v1.<iv>.<tag>.<ciphertext>` in base64url.
 */
export class CredentialsCipher {
  private constructor(private readonly key: Buffer) {}

  static async open(config: AppConfig): Promise<CredentialsCipher> {
    const variable = 'PROVIDER_CREDENTIALS_KEY';
    const key =
      config.providers.credentialsKey !== undefined
        ? parseKey(config.providers.credentialsKey, variable)
        : await generatedKey(join(config.dataDir, 'provider-credentials.key'), variable);
    return new CredentialsCipher(key);
  }

  static fromKey(key: Buffer): CredentialsCipher {
    if (key.length !== 32) throw new RangeError('a credentials key is 32 bytes');
    return new CredentialsCipher(key);
  }

  encrypt(credentials: Credentials, binding: CredentialsBinding): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(aad(binding));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** Throws when the ciphertext was made under another key or binding, or was altered. */
  decrypt(blob: string, binding: CredentialsBinding): Credentials {
    const [version, iv, tag, ciphertext, ...rest] = blob.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) throw new Error('not a credentials ciphertext');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(aad(binding));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    const parsed: unknown = JSON.parse(plain);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a credentials object');
    const credentials: Record<string, string> = {};
    for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') credentials[name] = value;
    return credentials;
  }
}
