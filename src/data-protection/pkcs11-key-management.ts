import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Pkcs11Types from 'pkcs11js';
import type { Pkcs11Config } from '../config/config.js';
import { KeyManagement } from './key-management.port.js';

/** One version of the master key in the token. */
interface KeyVersion {
  readonly version: number;
  /** CKA_ID, hex: names the key in wrapped values, so two keys given one label by accident stay apart. */
  readonly id: string;
  readonly label: string;
  readonly handle: Pkcs11Types.Handle;
}

const WRAPPED_PREFIX = 'p11:1:';
const IV_BYTES = 12;
const TAG_BITS = 128;

type Pkcs11Module = typeof Pkcs11Types;
const requireNative = createRequire(import.meta.url);
/**
 * pkcs11js, loaded only when this adapter is configured. A native addon, so an optional dependency:
 * where it cannot build (no python3, make or g++, as in the slim Docker image) npm skips it and only
 * KEY_MANAGEMENT=pkcs11 needs it.
 */
const pkcs11js = (): Pkcs11Module => {
  try {
    return requireNative('pkcs11js') as Pkcs11Module;
  } catch {
    throw new Pkcs11Unavailable('KEY_MANAGEMENT=pkcs11 needs the pkcs11js package, which builds with node-gyp (python3, make, g++): install them and run npm ci');
  }
};

/** A PKCS#11 library loaded and initialised once per process, shared by every adapter on it. */
const libraries = new Map<string, { pkcs11: Pkcs11Types.PKCS11; users: number }>();

function openLibrary(path: string): Pkcs11Types.PKCS11 {
  const loaded = libraries.get(path);
  if (loaded !== undefined) {
    loaded.users++;
    return loaded.pkcs11;
  }
  const lib = pkcs11js();
  const pkcs11 = new lib.PKCS11();
  pkcs11.load(path);
  try {
    pkcs11.C_Initialize();
  } catch (error) {
    if (!(error instanceof lib.Pkcs11Error && error.code === lib.CKR_CRYPTOKI_ALREADY_INITIALIZED)) throw error;
  }
  libraries.set(path, { pkcs11, users: 1 });
  return pkcs11;
}

function closeLibrary(path: string): void {
  const loaded = libraries.get(path);
  if (loaded === undefined || --loaded.users > 0) return;
  libraries.delete(path);
  loaded.pkcs11.C_Finalize();
  loaded.pkcs11.close();
}

/** The token or its key cannot be used as configured (never names the PIN). */
export class Pkcs11Unavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Pkcs11Unavailable';
  }
}

/**
 * The master key in a PKCS#11 token (an HSM; SoftHSM2 in tests), through pkcs11js: it never leaves
 * the token, which wraps and unwraps organization keys with CKM_AES_GCM (a random 96-bit IV per
 * wrap, the context as additional data). The key has versions (`<keyLabel>.<n>`): wraps use the
 * newest the token holds, and a wrapped value names its version, so every older one still
 * unwraps. `rotate()` adds a version; other processes find it on their next search (every
 * `refreshMs` before a wrap, and at once when they meet a value wrapped under it), so instances
 * follow a rotation without a restart. Calls are synchronous: SoftHSM2 answers in microseconds and
 * only organization keys (cached) go through it.
 */
export class Pkcs11KeyManagement extends KeyManagement {
  private readonly pkcs11: Pkcs11Types.PKCS11;
  private readonly lib: Pkcs11Module;
  private session: Pkcs11Types.Handle;
  private readonly slot: Pkcs11Types.Handle;
  private versions: KeyVersion[] = [];
  private searchedAt = 0;
  private closed = false;

  private constructor(
    private readonly config: Pkcs11Config,
    private readonly now: () => number,
  ) {
    super();
    this.lib = pkcs11js();
    this.pkcs11 = openLibrary(config.module);
    try {
      const slot = this.pkcs11.C_GetSlotList(true).find((candidate) => this.pkcs11.C_GetTokenInfo(candidate).label.trim() === config.tokenLabel);
      if (slot === undefined) throw new Pkcs11Unavailable(`no PKCS#11 token labelled "${config.tokenLabel}" in ${config.module}`);
      this.slot = slot;
      this.session = this.openSession();
    } catch (error) {
      closeLibrary(config.module);
      throw error;
    }
  }

  private openSession(): Pkcs11Types.Handle {
    const session = this.pkcs11.C_OpenSession(this.slot, this.lib.CKF_SERIAL_SESSION | this.lib.CKF_RW_SESSION);
    try {
      this.pkcs11.C_Login(session, this.lib.CKU_USER, this.config.pin);
    } catch (error) {
      if (!(error instanceof this.lib.Pkcs11Error && error.code === this.lib.CKR_USER_ALREADY_LOGGED_IN)) {
        this.pkcs11.C_CloseSession(session);
        throw new Pkcs11Unavailable(
          `the PKCS#11 token "${this.config.tokenLabel}" refused the login (${error instanceof this.lib.Pkcs11Error ? codeName(this.lib, error.code) : 'error'})`,
        );
      }
    }
    return session;
  }

  /**
   * Runs `work` on the session; when the token lost it (an HSM restarted, a network HSM's
   * connection dropped, sessions closed), opens and logs in a new one, finds the keys again and
   * runs `work` once more.
   */
  private withSession<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      const lost = [
        this.lib.CKR_SESSION_HANDLE_INVALID,
        this.lib.CKR_SESSION_CLOSED,
        this.lib.CKR_USER_NOT_LOGGED_IN,
        this.lib.CKR_OBJECT_HANDLE_INVALID,
        this.lib.CKR_KEY_HANDLE_INVALID,
      ];
      if (!(error instanceof this.lib.Pkcs11Error && lost.includes(error.code))) throw error;
      try {
        this.pkcs11.C_CloseSession(this.session);
      } catch {
        // Already gone.
      }
      this.session = this.openSession();
      this.search();
      return work();
    }
  }

  /** Opens the token and finds the master key's versions, making version 1 when there is none. */
  static open(config: Pkcs11Config, now: () => number = Date.now): Pkcs11KeyManagement {
    const kms = new Pkcs11KeyManagement(config, now);
    try {
      kms.search();
      if (kms.versions.length === 0) kms.generate(1);
    } catch (error) {
      kms.close();
      throw error;
    }
    return kms;
  }

  get masterKeyId(): string {
    return keyId(this.current());
  }

  /** Every `pkcs11:` version: unwrap finds it in the token by the id the wrapped value carries. */
  override canUnwrap(masterKeyId: string): boolean {
    return masterKeyId.startsWith(`pkcs11:${this.config.keyLabel}.`);
  }

  async wrap(plain: Buffer, context: string): Promise<string> {
    return this.withSession(() => {
      if (this.now() - this.searchedAt >= this.config.refreshMs) this.search();
      const key = this.current();
      const iv = randomBytes(IV_BYTES);
      this.pkcs11.C_EncryptInit(this.session, this.gcm(iv, context), key.handle);
      const sealed = this.pkcs11.C_Encrypt(this.session, plain, Buffer.alloc(plain.length + TAG_BITS / 8));
      return `${WRAPPED_PREFIX}${key.id}:${Buffer.concat([iv, sealed]).toString('base64')}`;
    });
  }

  async unwrap(wrapped: string, context: string): Promise<Buffer> {
    const match = /^p11:1:([0-9a-f]{2,64}):([A-Za-z0-9+/=]+)$/.exec(wrapped);
    if (match === null) throw new Pkcs11Unavailable('not a value wrapped by the PKCS#11 master key');
    const bytes = Buffer.from(match[2], 'base64');
    return this.withSession(() => {
      const key = this.byId(match[1]);
      this.pkcs11.C_DecryptInit(this.session, this.gcm(bytes.subarray(0, IV_BYTES), context), key.handle);
      return Buffer.from(this.pkcs11.C_Decrypt(this.session, bytes.subarray(IV_BYTES), Buffer.alloc(bytes.length)));
    });
  }

  /** 32 bytes for `info`, the same on every instance under one version: AES-GCM's keystream under it, for an IV fixed by `info`, and no data. */
  async derive(info: string): Promise<Buffer> {
    const iv = createHash('sha256').update(`ivl-derive/1\n${info}`).digest().subarray(0, IV_BYTES);
    return this.withSession(() => {
      this.pkcs11.C_EncryptInit(this.session, this.gcm(iv, ''), this.current().handle);
      const out = this.pkcs11.C_Encrypt(this.session, Buffer.alloc(32), Buffer.alloc(32 + TAG_BITS / 8));
      return Buffer.from(out.subarray(0, 32));
    });
  }

  /** Adds the next version in the token and makes it this process's current one; answers its id. */
  rotate(): string {
    return this.withSession(() => {
      this.search();
      return keyId(this.generate((this.versions.at(-1)?.version ?? 0) + 1));
    });
  }

  /** The versions the token holds, oldest first (their ids). */
  versionIds(): string[] {
    return this.withSession(() => {
      this.search();
      return this.versions.map(keyId);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.pkcs11.C_CloseSession(this.session);
    } catch {
      // The library may be finalised already by another adapter's close.
    }
    closeLibrary(this.config.module);
  }

  /** Nest calls this at shutdown. */
  onApplicationShutdown(): void {
    this.close();
  }

  private current(): KeyVersion {
    const key = this.versions.at(-1);
    if (key === undefined) throw new Pkcs11Unavailable(`no master key labelled ${this.config.keyLabel}.<n> in the token`);
    return key;
  }

  private byId(id: string): KeyVersion {
    let key = this.versions.find((candidate) => candidate.id === id);
    if (key === undefined) {
      // A version another process added since the last search.
      this.search();
      key = this.versions.find((candidate) => candidate.id === id);
    }
    if (key === undefined) throw new Pkcs11Unavailable(`the master key version ${id} is not in the token`);
    return key;
  }

  private gcm(iv: Buffer, context: string): Pkcs11Types.Mechanism {
    return {
      mechanism: this.lib.CKM_AES_GCM,
      parameter: { type: this.lib.CK_PARAMS_AES_GCM, iv, aad: Buffer.from(`ivl-kek/1\n${context}`, 'utf8'), ivBits: iv.length * 8, tagBits: TAG_BITS } as Pkcs11Types.AesGCM,
    };
  }

  /** Every AES secret key labelled `<keyLabel>.<n>`, ordered by version (ties by id). */
  private search(): void {
    const { lib, pkcs11, session } = this;
    pkcs11.C_FindObjectsInit(session, [
      { type: lib.CKA_CLASS, value: lib.CKO_SECRET_KEY },
      { type: lib.CKA_KEY_TYPE, value: lib.CKK_AES },
    ]);
    let handles: Pkcs11Types.Handle[];
    try {
      handles = pkcs11.C_FindObjects(session, 10_000);
    } finally {
      pkcs11.C_FindObjectsFinal(session);
    }
    const prefix = `${this.config.keyLabel}.`;
    const found: KeyVersion[] = [];
    for (const handle of handles) {
      const [label, id] = pkcs11.C_GetAttributeValue(session, handle, [{ type: lib.CKA_LABEL }, { type: lib.CKA_ID }]);
      const text = label?.value instanceof Buffer ? label.value.toString('utf8') : '';
      if (!text.startsWith(prefix) || !/^\d{1,9}$/.test(text.slice(prefix.length))) continue;
      if (!(id?.value instanceof Buffer) || id.value.length === 0) continue;
      found.push({ version: Number(text.slice(prefix.length)), id: id.value.toString('hex'), label: text, handle });
    }
    // Newest last; of two keys with one version (made at once by two processes), the larger id wins everywhere.
    this.versions = found.sort((a, b) => a.version - b.version || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.searchedAt = this.now();
  }

  /** A new AES-256 key in the token: never extractable, nor readable in clear. */
  private generate(version: number): KeyVersion {
    const { lib } = this;
    const label = `${this.config.keyLabel}.${version}`;
    const id = randomBytes(16);
    const handle = this.pkcs11.C_GenerateKey(this.session, { mechanism: lib.CKM_AES_KEY_GEN }, [
      { type: lib.CKA_CLASS, value: lib.CKO_SECRET_KEY },
      { type: lib.CKA_KEY_TYPE, value: lib.CKK_AES },
      { type: lib.CKA_VALUE_LEN, value: 32 },
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_PRIVATE, value: true },
      { type: lib.CKA_SENSITIVE, value: true },
      { type: lib.CKA_EXTRACTABLE, value: false },
      { type: lib.CKA_ENCRYPT, value: true },
      { type: lib.CKA_DECRYPT, value: true },
      { type: lib.CKA_LABEL, value: label },
      { type: lib.CKA_ID, value: id },
    ]);
    this.search();
    const made = this.versions.find((candidate) => candidate.id === id.toString('hex'));
    if (made === undefined) throw new Pkcs11Unavailable(`the token did not keep the new key ${label}`);
    void handle;
    return made;
  }
}

const keyId = (key: KeyVersion): string => `pkcs11:${key.label}:${key.id}`;

function codeName(lib: Pkcs11Module, code: number): string {
  const name = Object.entries(lib).find(([constant, value]) => constant.startsWith('CKR_') && value === code)?.[0];
  return name ?? `0x${code.toString(16)}`;
}
