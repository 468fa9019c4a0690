import { createCipheriv, createDecipheriv } from 'node:crypto';
import { pooledRandomBytes } from '../common/random.js';

/**
 * A sealed field as it is stored, in events and read models alike: plain JSON, base64 fields.
 * `v` versions the format (1: AES-256-GCM, 96-bit nonce, 128-bit tag, the value as UTF-8 JSON).
 */
export interface SealedEnvelope {
  readonly sealed: 'aes-256-gcm';
  readonly v: 1;
  readonly nonce: string;
  readonly data: string;
  readonly tag: string;
}

/** What a ciphertext is bound to: opened under any other binding, it fails. */
export interface SealBinding {
  readonly reference: string;
  readonly eventType: string;
  readonly field: string;
}

export const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The ciphertext could not be opened: wrong key, tampered bytes, or a binding it was not sealed under. */
export class SealOpenFailed extends Error {
  constructor() {
    super('a sealed field could not be opened');
    this.name = 'SealOpenFailed';
  }
}

function associatedData({ reference, eventType, field }: SealBinding): Buffer {
  return Buffer.from(`ivl-seal/1\n${reference}\n${eventType}\n${field}`, 'utf8');
}

export function isSealed(value: unknown): value is SealedEnvelope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const candidate = value as Record<string, unknown>;
  return candidate.sealed === 'aes-256-gcm' && typeof candidate.nonce === 'string' && typeof candidate.data === 'string' && typeof candidate.tag === 'string';
}

function assertKey(key: Buffer): void {
  if (key.length !== KEY_BYTES) throw new RangeError(`a data key is ${KEY_BYTES} bytes`);
}

/** Seals a JSON value under `key` with a fresh random nonce, bound to `binding`. */
export function seal(key: Buffer, value: unknown, binding: SealBinding): SealedEnvelope {
  assertKey(key);
  const nonce = pooledRandomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(binding));
  const data = withFinal(cipher.update(JSON.stringify(value), 'utf8'), cipher.final());
  return { sealed: 'aes-256-gcm', v: 1, nonce: nonce.toString('base64'), data: data.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}

/** Opens what `seal` sealed under the same key and binding; anything else throws SealOpenFailed. */
export function open(key: Buffer, envelope: SealedEnvelope, binding: SealBinding): unknown {
  assertKey(key);
  if (envelope.v !== 1) throw new SealOpenFailed();
  const nonce = Buffer.from(envelope.nonce, 'base64');
  const tag = Buffer.from(envelope.tag, 'base64');
  if (nonce.length !== NONCE_BYTES || tag.length !== TAG_BYTES) throw new SealOpenFailed();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(associatedData(binding));
    decipher.setAuthTag(tag);
    const plain = withFinal(decipher.update(Buffer.from(envelope.data, 'base64')), decipher.final());
    return JSON.parse(plain.toString('utf8'));
  } catch {
    throw new SealOpenFailed();
  }
}

/** `update`'s output and `final`'s, which for GCM is empty: no copy then. */
const withFinal = (head: Buffer, tail: Buffer): Buffer => (tail.length === 0 ? head : Buffer.concat([head, tail]));

/** Raw bytes under a key, for keys wrapped by keys and portrait files: nonce | tag | ciphertext. */
export function sealBytes(key: Buffer, plain: Buffer, associated: Buffer): Buffer {
  assertKey(key);
  const nonce = pooledRandomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(associated);
  const data = withFinal(cipher.update(plain), cipher.final());
  return Buffer.concat([nonce, cipher.getAuthTag(), data]);
}

export function openBytes(key: Buffer, sealed: Buffer, associated: Buffer): Buffer {
  assertKey(key);
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new SealOpenFailed();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(associated);
    decipher.setAuthTag(sealed.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    return withFinal(decipher.update(sealed.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final());
  } catch {
    throw new SealOpenFailed();
  }
}
