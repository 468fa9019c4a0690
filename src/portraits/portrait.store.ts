import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { type FileHandle, mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { generatedKeyFile } from '../common/key-file.js';
import { ConfigError, type AppConfig } from '../config/config.js';
import { PORTRAIT_ID } from './portrait-links.js';

export type PortraitContentType = 'image/png' | 'image/jpeg';
/** Portraits above this are refused before storage. */
export const MAX_PORTRAIT_BYTES = 2 * 1024 * 1024;

/** The verification a portrait belongs to and its data key: the portrait is sealed under that key. */
export interface PortraitSealing {
  readonly reference: string;
  readonly key: Buffer;
}

/** The data key of a verification, or null when it was destroyed (the portrait is then erased). */
export type PortraitKeyOf = (reference: string) => Promise<Buffer | null>;

export interface StoredPortrait {
  readonly organizationId: string;
  readonly contentType: PortraitContentType;
  readonly bytes: Buffer;
}

/** Portrait images, kept outside the event log (which only holds their ids) so they can be deleted. */
export abstract class PortraitStore {
  /** The secret that signs portrait links. */
  abstract readonly linkSecret: Buffer;
  /** With `sealing`, under the verification's data key; without, under the store's own key (portraits stored before data keys). */
  abstract put(organizationId: string, contentType: PortraitContentType, bytes: Buffer, sealing?: PortraitSealing): Promise<string>;
  /** The organization a record names, read without decrypting it (null when unknown or erased). */
  abstract owner(portraitId: string): Promise<string | null>;
  /** Null when unknown, or when its verification's data key is gone (`keyOf` answers null: erased). */
  abstract get(portraitId: string, keyOf?: PortraitKeyOf): Promise<StoredPortrait | null>;
  /** Overwrites the portrait's bytes (erasure); afterwards it reads as unknown. Idempotent. */
  abstract delete(portraitId: string): Promise<void>;
  /** Lets go of open files once the writes in flight are done. */
  abstract close(): Promise<void>;
}

const MAGIC = Buffer.from('PRT1');
/** A record sealed under its verification's data key: the reference follows the organization. */
const MAGIC_SEALED = Buffer.from('PRT2');
const ERASED = Buffer.alloc(4);
const TYPES: readonly PortraitContentType[] = ['image/png', 'image/jpeg'];

/**
 * The longest record a portrait can have: header, the longest organization id and reference, iv,
 * tag and the largest image. A read never allocates more, whatever length an id claims.
 */
export const MAX_PORTRAIT_RECORD_BYTES = MAGIC_SEALED.length + 2 + 255 + 1 + 255 + 12 + 16 + MAX_PORTRAIT_BYTES;

/** A segment is retired for a new one past this size (unless told otherwise, for tests). */
const SEGMENT_MAX_BYTES = 64 * 1024 * 1024;
const SEGMENT_ID = /^prt_([0-9a-f]{16})_([0-9a-f]{1,10})_([0-9a-f]{1,6})$/;

interface Segment {
  readonly id: string;
  readonly handle: FileHandle;
  size: number;
  retired: boolean;
}

/**
 * Portraits in append-only segment files, AES-256-GCM, one record per portrait:
 * `PRT2 | type(1) | orgLen(1) | orgId | refLen(1) | reference | iv(12) | tag(16) | ciphertext`,
 * sealed under the data key of the verification `reference` (src/data-protection), so destroying
 * that key erases the portrait with the rest of the verification's personal data. Records of
 * earlier versions, `PRT1 | type | orgLen | orgId | iv | tag | ciphertext`, were sealed under the
 * store's own key and are still read with it. The organization id, the content type, the
 * reference and the portrait id (which names the segment, offset and length of its record) are
 * authenticated as associated data, so a record copied or edited to claim another owner or
 * verification, or read under another id, fails to decrypt.
 *
 * Why segments and not a file per portrait: creating a file costs the kernel far more system CPU
 * than appending to an open one, enough to take a large share of a core at the check rates the
 * service sustains. Each process appends to segments of its own (64 random bits
 * in the name), writing each record synchronously at the segment's end, so concurrent puts never
 * overlap. A record is referenced only once `put` has resolved, so a torn write at a
 * crash leaves bytes no event names. Portraits stored as one file each by earlier versions are read
 * as before.
 */
export class FilePortraitStore extends PortraitStore {
  readonly linkSecret: Buffer;
  private current: Promise<Segment> | undefined;

  private constructor(
    private readonly directory: string,
    private readonly key: Buffer,
    private readonly segmentMaxBytes: number,
  ) {
    super();
    this.linkSecret = createHash('sha256').update('portrait-links\n').update(key).digest();
  }

  static async open(config: AppConfig, options: { segmentMaxBytes?: number } = {}): Promise<FilePortraitStore> {
    const key = config.portraits.encryptionKey !== undefined ? parseKey(config.portraits.encryptionKey) : await generatedKey(join(config.dataDir, 'portrait.key'));
    await mkdir(config.portraits.directory, { recursive: true, mode: 0o700 });
    return new FilePortraitStore(config.portraits.directory, key, options.segmentMaxBytes ?? SEGMENT_MAX_BYTES);
  }

  async put(organizationId: string, contentType: PortraitContentType, bytes: Buffer, sealing?: PortraitSealing): Promise<string> {
    if (bytes.length === 0 || bytes.length > MAX_PORTRAIT_BYTES) throw new RangeError(`a portrait must be 1 to ${MAX_PORTRAIT_BYTES} bytes`);
    const organization = Buffer.from(organizationId, 'utf8');
    if (organization.length === 0 || organization.length > 255) throw new RangeError('invalid organization id');
    const reference = sealing === undefined ? undefined : Buffer.from(sealing.reference, 'utf8');
    if (reference !== undefined && (reference.length === 0 || reference.length > 255)) throw new RangeError('invalid reference');
    if (sealing !== undefined && sealing.key.length !== 32) throw new RangeError('a data key is 32 bytes');
    // GCM's ciphertext is as long as the plaintext, so the record's length is known before encrypting.
    const referencePart = reference === undefined ? Buffer.alloc(0) : Buffer.concat([Buffer.from([reference.length]), reference]);
    const length = MAGIC.length + 2 + organization.length + referencePart.length + 12 + 16 + bytes.length;
    return this.append(length, (segmentId, offset) => {
      const id = `prt_${segmentId}_${offset.toString(16)}_${length.toString(16)}`;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealing?.key ?? this.key, iv);
      cipher.setAAD(aad(id, organizationId, contentType, sealing?.reference));
      const ciphertext = Buffer.concat([cipher.update(bytes), cipher.final()]);
      const header = Buffer.from([TYPES.indexOf(contentType), organization.length]);
      return { id, record: Buffer.concat([reference === undefined ? MAGIC : MAGIC_SEALED, header, organization, referencePart, iv, cipher.getAuthTag(), ciphertext]) };
    });
  }

  /**
   * Appends the record `build` makes for its place (`length` bytes) to the current segment, or to a
   * new one when it is full. From the check for room to the write everything is synchronous, so no
   * other put or close can come in between: a segment is closed only when no write can be under way.
   */
  private async append(length: number, build: (segmentId: string, offset: number) => { id: string; record: Buffer }): Promise<string> {
    for (;;) {
      const pending = (this.current ??= this.openSegment());
      const segment = await pending;
      if (!segment.retired && (segment.size === 0 || segment.size + length <= this.segmentMaxBytes)) {
        const { id, record } = build(segment.id, segment.size);
        if (record.length !== length) throw new Error('invariant: portrait record length');
        // A synchronous write of a few hundred bytes to the page cache takes microseconds, less
        // than handing it to the thread pool and waiting for the callback.
        const bytesWritten = writeSync(segment.handle.fd, record, 0, length, segment.size);
        if (bytesWritten !== length) throw new Error('short write to a portrait segment');
        segment.size += length;
        return id;
      }
      if (this.current === pending) await this.retire(pending);
    }
  }

  private async openSegment(): Promise<Segment> {
    const id = randomBytes(8).toString('hex');
    const handle = await open(join(this.directory, `${id}.seg`), 'wx', 0o600);
    return { id, handle, size: 0, retired: false };
  }

  /** Stops appending to the current segment and closes it. */
  private async retire(pending: Promise<Segment>): Promise<void> {
    this.current = undefined;
    const segment = await pending.catch(() => undefined);
    if (segment === undefined || segment.retired) return;
    segment.retired = true;
    await segment.handle.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.current !== undefined) await this.retire(this.current);
  }

  /** A record in a segment is zeroed in place (the segment's other records and ids stay); a file of its own is removed. */
  async delete(portraitId: string): Promise<void> {
    if (!PORTRAIT_ID.test(portraitId)) return;
    const inSegment = SEGMENT_ID.exec(portraitId);
    try {
      if (inSegment === null) {
        await unlink(join(this.directory, `${portraitId}.bin`));
        return;
      }
      const [, segmentId, offsetHex, lengthHex] = inSegment;
      const handle = await open(join(this.directory, `${segmentId}.seg`), 'r+');
      try {
        await handle.write(Buffer.alloc(Number.parseInt(lengthHex, 16)), 0, Number.parseInt(lengthHex, 16), Number.parseInt(offsetHex, 16));
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  async owner(portraitId: string): Promise<string | null> {
    const file = await this.read(portraitId);
    return file === null ? null : parse(file).organizationId;
  }

  async get(portraitId: string, keyOf?: PortraitKeyOf): Promise<StoredPortrait | null> {
    const file = await this.read(portraitId);
    if (file === null) return null;
    const { contentType, organizationId, reference, iv, tag, ciphertext } = parse(file);
    let key = this.key;
    if (reference !== undefined) {
      if (keyOf === undefined) throw new Error('invariant: a portrait sealed under a data key was read without one');
      const dataKey = await keyOf(reference);
      if (dataKey === null) return null;
      key = dataKey;
    }
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(aad(portraitId, organizationId, contentType, reference));
    decipher.setAuthTag(tag);
    return { organizationId, contentType, bytes: Buffer.concat([decipher.update(ciphertext), decipher.final()]) };
  }

  /** The record an id names; null when there is none, or when the id claims more than a record can hold. */
  private async read(portraitId: string): Promise<Buffer | null> {
    if (!PORTRAIT_ID.test(portraitId)) return null;
    try {
      const inSegment = SEGMENT_ID.exec(portraitId);
      if (inSegment === null) return await readBounded(join(this.directory, `${portraitId}.bin`));
      const [, segmentId, offsetHex, lengthHex] = inSegment;
      const length = Number.parseInt(lengthHex, 16);
      if (length > MAX_PORTRAIT_RECORD_BYTES) return null;
      const handle = await open(join(this.directory, `${segmentId}.seg`), 'r');
      try {
        const record = Buffer.alloc(length);
        const { bytesRead } = await handle.read(record, 0, length, Number.parseInt(offsetHex, 16));
        // A zeroed record is an erased portrait.
        return bytesRead === length && !record.subarray(0, 4).equals(ERASED) ? record : null;
      } finally {
        await handle.close();
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}

/** A portrait stored as a file of its own (earlier versions), read only when its size is one a record can have. */
async function readBounded(path: string): Promise<Buffer | null> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size > MAX_PORTRAIT_RECORD_BYTES) return null;
    const file = Buffer.alloc(size);
    const { bytesRead } = await handle.read(file, 0, size, 0);
    return bytesRead === size ? file : null;
  } finally {
    await handle.close();
  }
}

function aad(portraitId: string, organizationId: string, contentType: PortraitContentType, reference?: string): Buffer {
  return Buffer.from(`${portraitId}\n${organizationId}\n${contentType}${reference === undefined ? '' : `\n${reference}`}`, 'utf8');
}

function parse(file: Buffer): { contentType: PortraitContentType; organizationId: string; reference: string | undefined; iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  const sealed = file.length >= 4 && file.subarray(0, 4).equals(MAGIC_SEALED);
  if (file.length < MAGIC.length + 2 || !(sealed || file.subarray(0, 4).equals(MAGIC))) throw new Error('invariant: not a portrait file');
  const contentType = TYPES[file[4]];
  const organizationLength = file[5];
  if (contentType === undefined) throw new Error('invariant: unknown portrait content type');
  let offset = 6;
  const organizationId = file.subarray(offset, offset + organizationLength).toString('utf8');
  offset += organizationLength;
  let reference: string | undefined;
  if (sealed) {
    const referenceLength = file[offset];
    reference = file.subarray(offset + 1, offset + 1 + referenceLength).toString('utf8');
    offset += 1 + referenceLength;
  }
  const iv = file.subarray(offset, offset + 12);
  const tag = file.subarray(offset + 12, offset + 28);
  return { contentType, organizationId, reference, iv, tag, ciphertext: file.subarray(offset + 28) };
}

/** PORTRAIT_ENCRYPTION_KEY (or another 32-byte key, named by `variable`): 32 bytes as 64 hex characters or as base64. */
export function parseKey(value: string, variable = 'PORTRAIT_ENCRYPTION_KEY'): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const decoded = Buffer.from(value, 'base64');
  if (decoded.length === 32 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return decoded;
  throw new ConfigError(variable, 'must be 32 bytes, as 64 hex characters or base64');
}

/** The embedded default's key: generated once, readable by the owner only. */
export function generatedKey(path: string, variable = 'PORTRAIT_ENCRYPTION_KEY'): Promise<Buffer> {
  return generatedKeyFile(
    path,
    (key) => key.toString('hex'),
    (text) => parseKey(text, variable),
  );
}
