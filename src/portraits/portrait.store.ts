import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError, type AppConfig } from '../config/config.js';
import { PORTRAIT_ID } from './portrait-links.js';

export type PortraitContentType = 'image/png' | 'image/jpeg';
/** Portraits above this are refused before storage. */
export const MAX_PORTRAIT_BYTES = 2 * 1024 * 1024;

export interface StoredPortrait {
  readonly organizationId: string;
  readonly contentType: PortraitContentType;
  readonly bytes: Buffer;
}

/** Portrait images, kept outside the event log (which only holds their ids) so they can be deleted. */
export abstract class PortraitStore {
  /** The secret that signs portrait links. */
  abstract readonly linkSecret: Buffer;
  abstract put(organizationId: string, contentType: PortraitContentType, bytes: Buffer): Promise<string>;
  /** The owner is readable without decrypting, so a link's signature can be checked first. */
  abstract owner(portraitId: string): Promise<string | null>;
  abstract get(portraitId: string): Promise<StoredPortrait | null>;
}

const MAGIC = Buffer.from('PRT1');
const TYPES: readonly PortraitContentType[] = ['image/png', 'image/jpeg'];

/**
 * One file per portrait, AES-256-GCM: `PRT1 | type(1) | orgLen(1) | orgId | iv(12) | tag(16) | ciphertext`.
 * The organization id and content type are authenticated as associated data, so a file copied or
 * edited to claim another owner fails to decrypt.
 */
export class FilePortraitStore extends PortraitStore {
  readonly linkSecret: Buffer;

  private constructor(private readonly directory: string, private readonly key: Buffer) {
    super();
    this.linkSecret = createHash('sha256').update('portrait-links\n').update(key).digest();
  }

  static async open(config: AppConfig): Promise<FilePortraitStore> {
    const key = config.portraits.encryptionKey !== undefined ? parseKey(config.portraits.encryptionKey) : await generatedKey(join(config.dataDir, 'portrait.key'));
    await mkdir(config.portraits.directory, { recursive: true, mode: 0o700 });
    return new FilePortraitStore(config.portraits.directory, key);
  }

  async put(organizationId: string, contentType: PortraitContentType, bytes: Buffer): Promise<string> {
    if (bytes.length === 0 || bytes.length > MAX_PORTRAIT_BYTES) throw new RangeError(`a portrait must be 1 to ${MAX_PORTRAIT_BYTES} bytes`);
    const organization = Buffer.from(organizationId, 'utf8');
    if (organization.length === 0 || organization.length > 255) throw new RangeError('invalid organization id');
    const id = `prt_${randomBytes(16).toString('hex')}`;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(aad(id, organizationId, contentType));
    const ciphertext = Buffer.concat([cipher.update(bytes), cipher.final()]);
    const header = Buffer.from([TYPES.indexOf(contentType), organization.length]);
    const file = Buffer.concat([MAGIC, header, organization, iv, cipher.getAuthTag(), ciphertext]);
    const path = this.path(id);
    await writeFile(`${path}.tmp`, file, { mode: 0o600 });
    await rename(`${path}.tmp`, path);
    return id;
  }

  async owner(portraitId: string): Promise<string | null> {
    const file = await this.read(portraitId);
    return file === null ? null : parse(file).organizationId;
  }

  async get(portraitId: string): Promise<StoredPortrait | null> {
    const file = await this.read(portraitId);
    if (file === null) return null;
    const { contentType, organizationId, iv, tag, ciphertext } = parse(file);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(aad(portraitId, organizationId, contentType));
    decipher.setAuthTag(tag);
    return { organizationId, contentType, bytes: Buffer.concat([decipher.update(ciphertext), decipher.final()]) };
  }

  private path(portraitId: string): string {
    if (!PORTRAIT_ID.test(portraitId)) throw new RangeError('invalid portrait id');
    return join(this.directory, `${portraitId}.bin`);
  }

  private async read(portraitId: string): Promise<Buffer | null> {
    if (!PORTRAIT_ID.test(portraitId)) return null;
    try {
      return await readFile(this.path(portraitId));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }
}

function aad(portraitId: string, organizationId: string, contentType: PortraitContentType): Buffer {
  return Buffer.from(`${portraitId}\n${organizationId}\n${contentType}`, 'utf8');
}

function parse(file: Buffer): { contentType: PortraitContentType; organizationId: string; iv: Buffer; tag: Buffer; ciphertext: Buffer } {
  if (file.length < MAGIC.length + 2 || !file.subarray(0, 4).equals(MAGIC)) throw new Error('invariant: not a portrait file');
  const contentType = TYPES[file[4]];
  const organizationLength = file[5];
  if (contentType === undefined) throw new Error('invariant: unknown portrait content type');
  let offset = 6;
  const organizationId = file.subarray(offset, offset + organizationLength).toString('utf8');
  offset += organizationLength;
  const iv = file.subarray(offset, offset + 12);
  const tag = file.subarray(offset + 12, offset + 28);
  return { contentType, organizationId, iv, tag, ciphertext: file.subarray(offset + 28) };
}

/** PORTRAIT_ENCRYPTION_KEY (or another 32-byte key, named by `variable`): 32 bytes as 64 hex characters or as base64. */
export function parseKey(value: string, variable = 'PORTRAIT_ENCRYPTION_KEY'): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const decoded = Buffer.from(value, 'base64');
  if (decoded.length === 32 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return decoded;
  throw new ConfigError(variable, 'must be 32 bytes, as 64 hex characters or base64');
}

/** The embedded default's key: generated once, readable by the owner only. */
export async function generatedKey(path: string, variable = 'PORTRAIT_ENCRYPTION_KEY'): Promise<Buffer> {
  try {
    const existing = (await readFile(path, 'utf8')).trim();
    return parseKey(existing, variable);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    // `wx`: two processes starting together never overwrite each other's key.
    await writeFile(path, key.toString('hex'), { mode: 0o600, flag: 'wx' });
    await chmod(path, 0o600);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return parseKey((await readFile(path, 'utf8')).trim(), variable);
  }
}
