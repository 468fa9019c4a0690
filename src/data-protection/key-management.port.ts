import { createHmac, hkdfSync } from 'node:crypto';
import { openBytes, sealBytes } from './sealing.js';

/**
 * Wraps and unwraps the organizations' keys under the master key. The master key never leaves
 * the adapter: the local one holds it in memory; a KMS adapter (Vault Transit, AWS KMS) sends the
 * key to wrap to the service and keeps nothing. `context` (the organization and the key's role) is
 * bound to the wrapped form, so a wrapped key moved to another row fails to unwrap.
 */
export abstract class KeyManagement {
  /** Names the master key a key was wrapped under (stored with it; the rotation moves rows from one id to another). */
  abstract readonly masterKeyId: string;
  abstract wrap(plain: Buffer, context: string): Promise<string>;
  abstract unwrap(wrapped: string, context: string): Promise<Buffer>;
  /**
   * 32 bytes for a use of the service's own (`info` names it: the wallet-history checkpoints' MAC),
   * the same on every instance while the master key stays: it changes with a rotation.
   */
  abstract derive(info: string): Promise<Buffer>;

  /**
   * Whether a key recorded as wrapped under `masterKeyId` unwraps here: the current master key, or
   * (an adapter with versions, such as the PKCS#11 one) an older version kept to unwrap.
   */
  canUnwrap(masterKeyId: string): boolean {
    return masterKeyId === this.masterKeyId;
  }
}

/** The master key in this process's memory (DATA_ENCRYPTION_KEY, or the one generated under DATA_DIR). */
export class LocalKeyManagement extends KeyManagement {
  readonly masterKeyId: string;

  constructor(private readonly masterKey: Buffer) {
    super();
    if (masterKey.length !== 32) throw new RangeError('the master key is 32 bytes');
    this.masterKeyId = `local:${createHmac('sha256', masterKey).update('ivl master key id').digest('hex').slice(0, 16)}`;
  }

  async wrap(plain: Buffer, context: string): Promise<string> {
    return sealBytes(this.masterKey, plain, Buffer.from(`ivl-kek/1\n${context}`, 'utf8')).toString('base64');
  }

  async unwrap(wrapped: string, context: string): Promise<Buffer> {
    return openBytes(this.masterKey, Buffer.from(wrapped, 'base64'), Buffer.from(`ivl-kek/1\n${context}`, 'utf8'));
  }

  /** HKDF-SHA-256 of the master key. */
  async derive(info: string): Promise<Buffer> {
    return Buffer.from(hkdfSync('sha256', this.masterKey, Buffer.alloc(0), info, 32));
  }
}
