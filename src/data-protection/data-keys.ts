import type pg from 'pg';
import { Forbidden, InvariantViolated, NotFound } from '../common/errors.js';
import { pooledRandomBytes } from '../common/random.js';
import { isConnectionError } from '../database/connection-errors.js';
import { GroupCommit } from '../database/group-commit.js';
import { prepared } from '../database/prepared.js';
import { inTransaction } from '../database/transaction.js';
import type { KeyRows } from '../event-store/event-store.port.js';
import type { KeyManagement } from './key-management.port.js';
import { KeyCache } from './lru.js';
import { KEY_BYTES, openBytes, sealBytes, SealOpenFailed } from './sealing.js';

/** A verification's data key as it stands: usable, destroyed (erased; when), or never made (a log from before sealing). */
export type DataKeyState =
  | { readonly status: 'open'; readonly key: Buffer }
  | { readonly status: 'destroyed'; readonly destroyedAt: Date }
  | { readonly status: 'missing' }
  /** Its row does not unwrap under its organization, environment and reference: tampered with, or moved. */
  | { readonly status: 'unopenable' };

export interface DataKeyCacheLimits {
  /** Unwrapped keys held at once, per kind (organization keys, data keys). */
  readonly maxEntries: number;
  /** How long an unwrapped key stays in memory after it was unwrapped. */
  readonly ttlMs: number;
  /** The clock of the expiry (tests control it); Date.now by default. */
  readonly now?: () => number;
}

export const DEFAULT_CACHE_LIMITS: DataKeyCacheLimits = { maxEntries: 10_000, ttlMs: 60_000 };

/**
 * How many keys an organization's key-encryption key wraps before a new version replaces it:
 * AES-GCM with random 96-bit nonces allows 2^32 encryptions under one key (NIST SP 800-38D); the
 * margin covers wraps counted in a process that stopped before it recorded them.
 */
export const DEFAULT_MAX_WRAPS_PER_KEK = 2 ** 32 - 2 ** 26;

export interface DataKeyOptions {
  /** ORGANIZATION_KEY_MAX_WRAPS: wraps under one version of an organization's KEK before a new version. */
  readonly maxWrapsPerKek?: number;
}

interface OrganizationKeys {
  readonly kek: Buffer;
  readonly indexKey: Buffer;
  /** The KEK's version (1 for keys made before versions). */
  readonly version: number;
  /** The index key's version (1 for keys made before versions). */
  readonly indexVersion: number;
  /** The index key a rotation is retiring, while its pass re-tokenises: lookups try it too. */
  readonly retiringIndex?: { readonly key: Buffer; readonly version: number };
}

/** A version of an organization's blind-index key (a copy, the caller's to wipe). */
export interface IndexKeyVersion {
  readonly version: number;
  readonly key: Buffer;
}

/** A verification's row of `verification_keys`, as stored. */
export interface StoredDataKey {
  readonly organization_id: string;
  readonly wrapped_key: string | null;
  readonly destroyed_at: Date | null;
  /** The environment the key was wrapped for (bound into its wrapping); null on keys wrapped before that binding. */
  readonly environment?: string | null;
  /** When the organization's keys were destroyed (offboarding), when the caller read it with the row; null or absent otherwise. */
  readonly organization_destroyed_at?: Date | null;
}

/** One check's rows for the key tables: its wrapped data key (null when only tokens are added) and blind-index tokens. */
type KeyWrite = KeyRows;

interface OrganizationKeyRow {
  organization_id: string;
  master_key_id: string;
  wrapped_kek: string | null;
  wrapped_index_key: string | null;
  destroyed_at: Date | null;
  kek_version: number;
  index_version: number;
  retiring_index_key: string | null;
  retiring_index_version: number | null;
  index_rotated_at: Date | null;
  retokenised_through: string | null;
}

const ORGANIZATION_KEY_COLUMNS =
  'organization_id, master_key_id, wrapped_kek, wrapped_index_key, destroyed_at, kek_version, index_version, retiring_index_key, retiring_index_version, index_rotated_at, retokenised_through';

/** Wipes an organization's keys a caller holds (its copy; the cache keeps its own). */
const wipe = (keys: OrganizationKeys): void => {
  keys.kek.fill(0);
  keys.indexKey.fill(0);
  keys.retiringIndex?.key.fill(0);
};

/** An organization's keys in one buffer (one cache lookup for all): KEK, index key, KEK version, index version, retiring index version (0: none), retiring index key. */
function toCacheEntry(keys: OrganizationKeys): Buffer {
  const versions = Buffer.alloc(12);
  versions.writeUInt32BE(keys.version, 0);
  versions.writeUInt32BE(keys.indexVersion, 4);
  versions.writeUInt32BE(keys.retiringIndex?.version ?? 0, 8);
  return Buffer.concat([keys.kek, keys.indexKey, versions, ...(keys.retiringIndex === undefined ? [] : [keys.retiringIndex.key])]);
}

/** The keys of a cache entry (a copy, the caller's: views of it). */
function fromCacheEntry(entry: Buffer): OrganizationKeys {
  const at = 2 * KEY_BYTES;
  const retiringVersion = entry.readUInt32BE(at + 8);
  return {
    kek: entry.subarray(0, KEY_BYTES),
    indexKey: entry.subarray(KEY_BYTES, at),
    version: entry.readUInt32BE(at),
    indexVersion: entry.readUInt32BE(at + 4),
    ...(retiringVersion === 0 ? {} : { retiringIndex: { key: entry.subarray(at + 12, at + 12 + KEY_BYTES), version: retiringVersion } }),
  };
}

/** A blind-index token under version n > 1 of an organization's index key is `v<n>:<token>`; a plain token is version 1. */
export const versionedToken = (version: number, token: string): string => (version === 1 ? token : `v${version}:${token}`);

/** What an organization's KEK is wrapped under the master key with: its organization, and its version from 2 on. */
const kekContext = (organizationId: string, version = 1) => (version === 1 ? `kek\n${organizationId}` : `kek\n${organizationId}\nv${version}`);

/** A value wrapped or sealed under version n > 1 of an organization's KEK is `v<n>:<base64>`; plain base64 is version 1. */
const versioned = (version: number, base64: string): string => (version === 1 ? base64 : `v${version}:${base64}`);
function kekVersionOf(value: string): { readonly version: number; readonly bytes: Buffer } {
  const match = /^v(\d{1,9}):/.exec(value);
  return match === null ? { version: 1, bytes: Buffer.from(value, 'base64') } : { version: Number(match[1]), bytes: Buffer.from(value.slice(match[0].length), 'base64') };
}
/** What an organization's blind-index key is wrapped under the master key with: its organization, and its version from 2 on. */
const indexContext = (organizationId: string, version = 1) => (version === 1 ? `index\n${organizationId}` : `index\n${organizationId}\nv${version}`);
/**
 * What a data key's wrapping is bound to: its organization, its environment and its reference (a
 * key wrapped before environments were bound, with no environment in its row, to the other two).
 */
const dataKeyAad = (organizationId: string, environment: string | null, reference: string) =>
  Buffer.from(environment === null ? `ivl-dek/1\n${organizationId}\n${reference}` : `ivl-dek/2\n${organizationId}\n${environment}\n${reference}`, 'utf8');

/**
 * What a value sealed directly under an organization's key-encryption key is bound to: the
 * organization and the caller's context (a webhook endpoint's target, one of its secrets). Its own
 * prefix, so such a value and a wrapped data key can never be taken for one another.
 */
const organizationSealAad = (organizationId: string, context: string) => Buffer.from(`ivl-org-seal/1\n${organizationId}\n${context}`, 'utf8');

/** The organization's keys were destroyed (offboarding): nothing of it can be sealed or opened any more. */
export class OrganizationKeysDestroyed extends Error {
  constructor(readonly destroyedAt: Date) {
    super("the organization's keys were destroyed");
    this.name = 'OrganizationKeysDestroyed';
  }
}

/**
 * The key hierarchy, in PostgreSQL beside the read models (never in the event log, whichever
 * store holds it): master key (KeyManagement) → one key-encryption key and one blind-index key per
 * organization (`organization_keys`) → one data key per verification (`verification_keys`, wrapped
 * by its organization's KEK). Destroying a row's wrapped key (setting it null with `destroyed_at`)
 * makes everything sealed under it unreadable for good. Unwrapped keys live only in the bounded
 * caches below.
 */
export class DataKeys {
  /** An organization's two keys in one buffer: the KEK, then the index key (one lookup for both). */
  private readonly organizations: KeyCache<string, Buffer>;
  private readonly dataKeys: KeyCache<string, Buffer>;
  /** Older versions of organizations' KEKs, by `<organization>\n<version>`, to unwrap what they wrapped. */
  private readonly retiredKeks: KeyCache<string, Buffer>;
  private readonly maxWrapsPerKek: number;
  /** Wraps recorded in `organization_keys.kek_wraps` in batches of this many (one statement per batch). */
  private readonly wrapBatch: number;
  /** Wraps under each organization's current KEK version not yet recorded. */
  private readonly unrecordedWraps = new Map<string, { version: number; count: number }>();

  /**
   * Keys and tokens written on their own (create, index: on EventStoreDB, whose appends cannot carry
   * them, and the result's tokens after a terminal event written outside its pair) cost a commit
   * each: under load they go through a group commit, many checks' rows in one statement, as the
   * event log's appends do. On PostgreSQL a check's rows normally ride on its appends instead
   * (make, tokenRows, StreamAppend.keyRows) and cost no commit of their own.
   */
  private readonly writes = new GroupCommit<KeyWrite, boolean>({
    maxInFlight: 2,
    maxItems: 200,
    // Written first, then answered: a write of tokens alone (no key) is written too, and answers false.
    writeOne: async (write) => (await this.writeKeys([write])).has(write.reference) && write.wrappedKey !== null,
    writeMany: async (batch) => {
      const created = await this.writeKeys(batch);
      // Two keys made for one reference in one batch: the first in the batch is the one stored.
      return batch.map((write) => ({ status: 'fulfilled', value: write.wrappedKey !== null && created.delete(write.reference) }));
    },
    fatal: (error) => (isConnectionError(error) ? error : undefined),
  });

  constructor(
    private readonly pool: pg.Pool,
    private readonly kms: KeyManagement,
    limits: DataKeyCacheLimits = DEFAULT_CACHE_LIMITS,
    options: DataKeyOptions = {},
  ) {
    this.organizations = new KeyCache(limits.maxEntries, limits.ttlMs, limits.now);
    this.dataKeys = new KeyCache(limits.maxEntries, limits.ttlMs, limits.now);
    this.retiredKeks = new KeyCache(limits.maxEntries, limits.ttlMs, limits.now);
    this.maxWrapsPerKek = options.maxWrapsPerKek ?? DEFAULT_MAX_WRAPS_PER_KEK;
    this.wrapBatch = Math.max(1, Math.min(1_000, Math.floor(this.maxWrapsPerKek / 1_000_000)));
  }

  /**
   * Makes the data key of a new verification and stores it wrapped, with the blind-index tokens of
   * its request (`tokens`), in a commit of its own (EventStoreDB; on PostgreSQL see make), in one statement (shared with the other checks' keys and tokens written at
   * the same moment: see `writes`); answers the key. Called before the request event is
   * appended, so no event is ever sealed under a key that was not stored first. A second call for
   * one reference answers the key already stored.
   */
  async create(organizationId: string, environment: string, reference: string, tokensOf: (indexKey: Buffer) => readonly string[] = () => []): Promise<Buffer> {
    const { key, rows } = await this.newKey(organizationId, environment, reference, tokensOf);
    const created = await this.writes.write(rows);
    if (!created) {
      const existing = await this.sealingKey(reference);
      if (existing.status !== 'open') throw new InvariantViolated(`the data key of ${reference} exists but cannot be used`);
      return existing.key;
    }
    this.dataKeys.set(reference, Buffer.from(key));
    return key;
  }

  /**
   * Makes the data key of a new verification without storing it: answers the rows that store it
   * (with the request's blind-index tokens), for the caller to write in the transaction of the
   * request's append (StreamAppend.keyRows, on a store with atomic multi-stream appends). The key is
   * held in this process's cache so that the request can be sealed under it; the caller must
   * `forget(reference)` when the append was not confirmed written, so that a key never stored is
   * never used to read.
   */
  async make(
    organizationId: string,
    environment: string,
    reference: string,
    tokensOf: (indexKey: Buffer) => readonly string[] = () => [],
  ): Promise<{ readonly key: Buffer; readonly rows: KeyRows }> {
    const made = await this.newKey(organizationId, environment, reference, tokensOf);
    this.dataKeys.set(reference, Buffer.from(made.key));
    return made;
  }

  /** Rows adding blind-index tokens to a verification (no key), for the transaction of an append (see make); undefined when there are none. */
  async tokenRows(organizationId: string, environment: string, reference: string, tokensOf: (indexKey: Buffer) => readonly string[]): Promise<KeyRows | undefined> {
    const tokens = await this.tokensUnder(organizationId, tokensOf);
    return tokens.length === 0 ? undefined : { reference, organizationId, environment, wrappedKey: null, tokens };
  }

  private async newKey(organizationId: string, environment: string, reference: string, tokensOf: (indexKey: Buffer) => readonly string[]): Promise<{ key: Buffer; rows: KeyRows }> {
    let organization: OrganizationKeys;
    try {
      organization = await this.organizationKeys(organizationId);
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed)
        throw new Forbidden('personal_data_destroyed', "This organization's personal data was destroyed (offboarded): it can run no more checks");
      throw error;
    }
    let made: { key: Buffer; rows: KeyRows };
    try {
      const key = pooledRandomBytes(KEY_BYTES);
      const wrappedKey = versioned(organization.version, sealBytes(organization.kek, key, dataKeyAad(organizationId, environment, reference)).toString('base64'));
      made = {
        key,
        rows: { reference, organizationId, environment, wrappedKey, tokens: tokensOf(organization.indexKey).map((token) => versionedToken(organization.indexVersion, token)) },
      };
    } finally {
      wipe(organization);
    }
    await this.countWraps(organizationId, organization.version, 1);
    return made;
  }

  /**
   * Counts wraps under an organization's current KEK, recorded in batches (`wrapBatch`); once the
   * recorded count reaches `maxWrapsPerKek`, a new version replaces the key. Never fails the
   * caller: a count or rotation that fails is tried again with the next batch.
   */
  private async countWraps(organizationId: string, version: number, wraps: number): Promise<void> {
    const pending = this.unrecordedWraps.get(organizationId);
    const count = wraps + (pending?.version === version ? pending.count : 0);
    if (count < this.wrapBatch) {
      this.unrecordedWraps.set(organizationId, { version, count });
      return;
    }
    this.unrecordedWraps.delete(organizationId);
    try {
      const { rows } = await this.pool.query<{ kek_wraps: string }>(
        'update organization_keys set kek_wraps = kek_wraps + $3 where organization_id = $1 and kek_version = $2 returning kek_wraps',
        [organizationId, version, count],
      );
      if (rows[0] === undefined) {
        // A version already retired (another process rotated): its count is kept with it.
        await this.pool.query('update organization_kek_versions set wraps = wraps + $3 where organization_id = $1 and version = $2', [organizationId, version, count]);
      } else if (Number(rows[0].kek_wraps) >= this.maxWrapsPerKek) {
        await this.rotateOrganizationKey(organizationId, version);
      }
    } catch {
      const again = this.unrecordedWraps.get(organizationId);
      this.unrecordedWraps.set(organizationId, { version, count: count + (again?.version === version ? again.count : 0) });
    }
  }

  /**
   * A new version of the organization's key-encryption key: new data keys (and sealed values) are
   * wrapped under it, and the old version is kept (`organization_kek_versions`, wrapped under the
   * master key) to unwrap what it wrapped. `ifVersion`: only when that is still the current
   * version (two processes reaching the limit at once make one new version). The index key is
   * re-wrapped beside it, so the row stays under one master key. Answers the current version.
   */
  async rotateOrganizationKey(organizationId: string, ifVersion?: number): Promise<{ readonly version: number; readonly rotated: boolean }> {
    const result = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<OrganizationKeyRow & { kek_wraps: string }>(
        `select ${ORGANIZATION_KEY_COLUMNS}, kek_wraps from organization_keys where organization_id = $1 for update`,
        [organizationId],
      );
      const row = rows[0];
      if (row === undefined) throw new NotFound(`${organizationId} has no keys yet (they are made at its first check)`);
      if (row.wrapped_kek === null || row.wrapped_index_key === null) throw new OrganizationKeysDestroyed(row.destroyed_at ?? new Date(0));
      if (ifVersion !== undefined && row.kek_version !== ifVersion) return { version: row.kek_version, rotated: false };
      if (!this.kms.canUnwrap(row.master_key_id))
        throw new InvariantViolated(`the keys of ${organizationId} are wrapped under master key ${row.master_key_id}, which this process cannot unwrap`);
      const version = row.kek_version + 1;
      const kek = pooledRandomBytes(KEY_BYTES);
      const index = await this.kms.unwrap(row.wrapped_index_key, indexContext(organizationId, row.index_version));
      const retiring = row.retiring_index_key === null ? null : await this.kms.unwrap(row.retiring_index_key, indexContext(organizationId, row.retiring_index_version ?? 1));
      try {
        await client.query('insert into organization_kek_versions (organization_id, version, master_key_id, wrapped_kek, wraps) values ($1, $2, $3, $4, $5)', [
          organizationId,
          row.kek_version,
          row.master_key_id,
          row.wrapped_kek,
          row.kek_wraps,
        ]);
        await client.query(
          'update organization_keys set kek_version = $2, kek_wraps = 0, wrapped_kek = $3, wrapped_index_key = $4, master_key_id = $5, retiring_index_key = $6, rewrapped_at = now() where organization_id = $1',
          [
            organizationId,
            version,
            await this.kms.wrap(kek, kekContext(organizationId, version)),
            await this.kms.wrap(index, indexContext(organizationId, row.index_version)),
            this.kms.masterKeyId,
            retiring === null ? null : await this.kms.wrap(retiring, indexContext(organizationId, row.retiring_index_version ?? 1)),
          ],
        );
      } finally {
        kek.fill(0);
        index.fill(0);
        retiring?.fill(0);
      }
      return { version, rotated: true };
    });
    // This process wraps under the new version from now on; others when their cached pair expires.
    this.organizations.delete(organizationId);
    this.unrecordedWraps.delete(organizationId);
    return result;
  }

  /** An older version of an organization's KEK (a copy, the caller's), or undefined when it is not kept. */
  private async retiredKek(organizationId: string, version: number): Promise<Buffer | undefined> {
    const cacheKey = `${organizationId}\n${version}`;
    const cached = this.retiredKeks.get(cacheKey);
    if (cached !== undefined) return Buffer.from(cached);
    const { rows } = await this.pool.query<{ master_key_id: string; wrapped_kek: string }>(
      'select master_key_id, wrapped_kek from organization_kek_versions where organization_id = $1 and version = $2',
      [organizationId, version],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    if (!this.kms.canUnwrap(row.master_key_id)) {
      throw new InvariantViolated(
        `version ${version} of the key of ${organizationId} is wrapped under master key ${row.master_key_id}, not the configured ${this.kms.masterKeyId} (finish \`npm run admin -- keys rotate-master\`)`,
      );
    }
    const kek = await this.kms.unwrap(row.wrapped_kek, kekContext(organizationId, version));
    this.retiredKeks.set(cacheKey, Buffer.from(kek));
    return kek;
  }

  /** The KEK of `version` for unwrapping: the current one's copy (the caller's) when it is current, else the retired one. */
  private async kekOfVersion(organizationId: string, organization: OrganizationKeys, version: number): Promise<Buffer | undefined> {
    if (version === organization.version) return Buffer.from(organization.kek);
    return this.retiredKek(organizationId, version);
  }

  /**
   * The verification's data key for sealing one of its events (its request, its result): the key of
   * a check under way, from this process's cache when it made the key. A check is erased only once
   * finished, so no key in use for sealing is ever one an erasure destroyed.
   */
  async sealingKey(reference: string): Promise<DataKeyState> {
    const cached = this.dataKeys.get(reference);
    if (cached !== undefined) return { status: 'open', key: cached };
    return this.get(reference);
  }

  /**
   * The verification's data key for reading, or why there is none: always from its row (and its
   * organization's), read now, so that a key destroyed by an erasure or an offboarding in any
   * process reads as destroyed here at once, whatever this process's cache holds. The cache saves
   * only the unwrapping.
   */
  async get(reference: string): Promise<DataKeyState> {
    const { rows } = await this.pool.query<StoredDataKey>(
      prepared(
        `select k.organization_id, k.environment, k.wrapped_key, k.destroyed_at, o.destroyed_at as organization_destroyed_at
         from verification_keys k left join organization_keys o on o.organization_id = k.organization_id where k.reference = $1`,
        [reference],
      ),
    );
    return this.stateOf(reference, rows[0]);
  }

  /**
   * The verification's data key from its `verification_keys` row as the caller read it (with the
   * read model's row, say: one statement for both), or undefined when it has none. The row wins
   * over the cache: a row that says destroyed is destroyed, and the cached key goes. A row read just
   * before an erasure may still open the key for the read that took it, and put it back in the
   * cache; every later read brings a row of its own, which says destroyed.
   */
  async stateOf(reference: string, row: StoredDataKey | undefined): Promise<DataKeyState> {
    if (row === undefined) return { status: 'missing' };
    if (row.wrapped_key === null) {
      this.dataKeys.delete(reference);
      return { status: 'destroyed', destroyedAt: row.destroyed_at ?? new Date(0) };
    }
    if (row.organization_destroyed_at != null) {
      this.dataKeys.delete(reference);
      return { status: 'destroyed', destroyedAt: row.organization_destroyed_at };
    }
    const cached = this.dataKeys.get(reference);
    if (cached !== undefined) return { status: 'open', key: cached };
    let organization: OrganizationKeys;
    try {
      organization = await this.organizationKeys(row.organization_id, { create: false });
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed) return { status: 'destroyed', destroyedAt: error.destroyedAt };
      throw error;
    }
    let key: Buffer;
    const wrapped = kekVersionOf(row.wrapped_key);
    let kek: Buffer | undefined;
    try {
      kek = await this.kekOfVersion(row.organization_id, organization, wrapped.version);
    } finally {
      wipe(organization);
    }
    if (kek === undefined) return { status: 'unopenable' };
    try {
      key = openBytes(kek, wrapped.bytes, dataKeyAad(row.organization_id, row.environment ?? null, reference));
    } catch (error) {
      if (error instanceof SealOpenFailed) return { status: 'unopenable' };
      throw error;
    } finally {
      kek.fill(0);
    }
    this.dataKeys.set(reference, Buffer.from(key));
    return { status: 'open', key };
  }

  /**
   * Seals small secrets of an organization that are not personal data of a check (a webhook
   * endpoint's URL and signing secrets) directly under its key-encryption key, each bound to its
   * `context`: they stay behind the one master-key wrapping that `keys rotate-master` moves, and die
   * with the organization's keys at offboarding. Answers base64, in the order given.
   */
  async sealForOrganization(organizationId: string, values: readonly { readonly plain: Buffer; readonly context: string }[]): Promise<string[]> {
    let organization: OrganizationKeys;
    try {
      organization = await this.organizationKeys(organizationId);
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed) throw new Forbidden('personal_data_destroyed', "This organization's personal data was destroyed (offboarded)");
      throw error;
    }
    let sealed: string[];
    try {
      sealed = values.map(({ plain, context }) =>
        versioned(organization.version, sealBytes(organization.kek, plain, organizationSealAad(organizationId, context)).toString('base64')),
      );
    } finally {
      wipe(organization);
    }
    await this.countWraps(organizationId, organization.version, values.length);
    return sealed;
  }

  /**
   * Opens what sealForOrganization sealed. The organization's row is read now, whatever this
   * process's cache holds, so keys destroyed by an offboarding in any process open nothing here:
   * throws OrganizationKeysDestroyed then, and SealOpenFailed for a value moved or tampered with.
   */
  async openForOrganization(organizationId: string, values: readonly { readonly sealed: string; readonly context: string }[]): Promise<Buffer[]> {
    const row = await this.organizationRow(organizationId);
    if (row !== undefined && (row.wrapped_kek === null || row.destroyed_at !== null)) {
      this.organizations.delete(organizationId);
      throw new OrganizationKeysDestroyed(row.destroyed_at ?? new Date(0));
    }
    const organization = await this.organizationKeys(organizationId, { create: false });
    const keks = new Map<number, Buffer>();
    try {
      const opened: Buffer[] = [];
      for (const { sealed, context } of values) {
        const { version, bytes } = kekVersionOf(sealed);
        let kek = keks.get(version);
        if (kek === undefined) {
          kek = await this.kekOfVersion(organizationId, organization, version);
          if (kek === undefined) throw new SealOpenFailed();
          keks.set(version, kek);
        }
        opened.push(openBytes(kek, bytes, organizationSealAad(organizationId, context)));
      }
      return opened;
    } finally {
      wipe(organization);
      for (const kek of keks.values()) kek.fill(0);
    }
  }

  /** Adds blind-index tokens for a verification (e.g. the identifiers its result revealed). */
  async index(organizationId: string, environment: string, reference: string, tokensOf: (indexKey: Buffer) => readonly string[]): Promise<void> {
    const tokens = await this.tokensUnder(organizationId, tokensOf);
    if (tokens.length === 0) return;
    await this.writes.write({ reference, organizationId, environment, wrappedKey: null, tokens });
  }

  /** The organization's blind-index key (created with its KEK when first needed): a copy, the caller's. */
  async indexKey(organizationId: string): Promise<Buffer> {
    const keys = await this.organizationKeys(organizationId);
    keys.kek.fill(0);
    return keys.indexKey;
  }

  /** The tokens `tokensOf` computes under the organization's current index key, tagged with its version (the key is wiped after). */
  private async tokensUnder(organizationId: string, tokensOf: (indexKey: Buffer) => readonly string[]): Promise<string[]> {
    const keys = await this.organizationKeys(organizationId);
    try {
      return tokensOf(keys.indexKey).map((token) => versionedToken(keys.indexVersion, token));
    } finally {
      wipe(keys);
    }
  }

  /**
   * The tokens a lookup of one identifier tries (`tokenOf` computes it under a key): under the
   * current index key, and under the one a rotation is retiring while its pass runs, each tagged
   * with its version. The versions are read from the row now, so a rotation made by another
   * process is seen at once whatever this process's cache holds.
   */
  async subjectTokens(organizationId: string, tokenOf: (indexKey: Buffer) => string): Promise<string[]> {
    const row = await this.organizationRow(organizationId);
    if (row !== undefined && (row.wrapped_index_key === null || row.destroyed_at !== null)) {
      this.organizations.delete(organizationId);
      throw new OrganizationKeysDestroyed(row.destroyed_at ?? new Date(0));
    }
    let keys = await this.organizationKeys(organizationId);
    if (row !== undefined && (keys.indexVersion !== row.index_version || (keys.retiringIndex?.version ?? null) !== row.retiring_index_version)) {
      wipe(keys);
      this.organizations.delete(organizationId);
      keys = await this.organizationKeys(organizationId);
    }
    try {
      const versions = [{ version: keys.indexVersion, key: keys.indexKey }, ...(keys.retiringIndex === undefined ? [] : [keys.retiringIndex])];
      return versions.map(({ version, key }) => versionedToken(version, tokenOf(key)));
    } finally {
      wipe(keys);
    }
  }

  /**
   * Starts a rotation of the organization's blind-index key: a new version for every token written
   * from now on, the current one kept as retiring (lookups try both) until IndexKeyRotation has
   * re-tokenised the organization's index and retires it. A rotation already under way is left
   * as it is (`started` false): run its pass to finish it.
   */
  async rotateIndexKey(organizationId: string, at: Date): Promise<{ readonly version: number; readonly started: boolean }> {
    // `console:contacts`'s index key is the console's contact lookup key (contact-data.ts); its pass is console-auth/contact-key-rotation.ts.
    if (!organizationId.startsWith('org_') && organizationId !== 'console:contacts')
      throw new NotFound(`${organizationId} is no organization: only an organization's index key, or console:contacts's, is rotated`);
    const result = await inTransaction(this.pool, async (client) => {
      const row = await this.organizationRow(organizationId, client, 'for update');
      if (row === undefined) throw new NotFound(`${organizationId} has no keys yet (they are made at its first check)`);
      if (row.wrapped_kek === null || row.wrapped_index_key === null) throw new OrganizationKeysDestroyed(row.destroyed_at ?? new Date(0));
      if (row.retiring_index_key !== null) return { version: row.index_version, started: false };
      if (!this.kms.canUnwrap(row.master_key_id))
        throw new InvariantViolated(`the keys of ${organizationId} are wrapped under master key ${row.master_key_id}, which this process cannot unwrap`);
      const version = row.index_version + 1;
      // The row stays under one master key: all three keys are wrapped again under the current one.
      const kek = await this.kms.unwrap(row.wrapped_kek, kekContext(organizationId, row.kek_version));
      const retiring = await this.kms.unwrap(row.wrapped_index_key, indexContext(organizationId, row.index_version));
      const index = pooledRandomBytes(KEY_BYTES);
      try {
        await client.query(
          `update organization_keys set master_key_id = $2, wrapped_kek = $3, wrapped_index_key = $4, index_version = $5, retiring_index_key = $6, retiring_index_version = $7,
             index_rotated_at = $8, retokenised_through = null, rewrapped_at = now() where organization_id = $1`,
          [
            organizationId,
            this.kms.masterKeyId,
            await this.kms.wrap(kek, kekContext(organizationId, row.kek_version)),
            await this.kms.wrap(index, indexContext(organizationId, version)),
            version,
            await this.kms.wrap(retiring, indexContext(organizationId, row.index_version)),
            row.index_version,
            at,
          ],
        );
      } finally {
        kek.fill(0);
        retiring.fill(0);
        index.fill(0);
      }
      return { version, started: true };
    });
    this.organizations.delete(organizationId);
    return result;
  }

  /** The index-key rotation under way in an organization (read now, keys unwrapped afresh: copies, the caller's), or undefined when none is. */
  async indexRotation(organizationId: string): Promise<{ current: IndexKeyVersion; retiring: IndexKeyVersion; rotatedAt: Date; cursor: string | null } | undefined> {
    const row = await this.organizationRow(organizationId);
    if (row === undefined || row.retiring_index_key === null || row.wrapped_index_key === null || row.retiring_index_version === null) return undefined;
    if (!this.kms.canUnwrap(row.master_key_id))
      throw new InvariantViolated(`the keys of ${organizationId} are wrapped under master key ${row.master_key_id}, not the configured ${this.kms.masterKeyId}`);
    return {
      current: { version: row.index_version, key: await this.kms.unwrap(row.wrapped_index_key, indexContext(organizationId, row.index_version)) },
      retiring: { version: row.retiring_index_version, key: await this.kms.unwrap(row.retiring_index_key, indexContext(organizationId, row.retiring_index_version)) },
      rotatedAt: row.index_rotated_at ?? new Date(0),
      cursor: row.retokenised_through,
    };
  }

  /**
   * Ends a rotation: the retiring index key destroyed, once no token under any other version than
   * `version` is left in the organization's index (answers false, retiring nothing, otherwise).
   * `leftOver` answers, within the transaction, whether such a token is left elsewhere (the console's contact lookups).
   */
  async retireIndexKey(organizationId: string, version: number, leftOver?: (client: pg.PoolClient) => Promise<boolean>): Promise<boolean> {
    const retired = await inTransaction(this.pool, async (client) => {
      const row = await this.organizationRow(organizationId, client, 'for update');
      if (row === undefined || row.retiring_index_key === null) return true;
      if (row.index_version !== version) return false;
      const { rows } = await client.query('select 1 from verification_subjects where organization_id = $1 and left(token, $3) <> $2 limit 1', [
        organizationId,
        `v${version}:`,
        `v${version}:`.length,
      ]);
      if (rows.length > 0 || (leftOver !== undefined && (await leftOver(client)))) return false;
      await client.query('update organization_keys set retiring_index_key = null, retiring_index_version = null, retokenised_through = null where organization_id = $1', [
        organizationId,
      ]);
      return true;
    });
    this.organizations.delete(organizationId);
    return retired;
  }

  /**
   * Erases one verification: its data key destroyed (`at` becomes its erasure time; a key already
   * destroyed keeps its time; a verification with no key, from before sealing, gets a destroyed row)
   * and its blind-index tokens removed, in one transaction. Answers when the key was destroyed.
   * Two statements: the tokens are removed under a snapshot taken once the key's row is ours, so
   * tokens a re-tokenising pass (index-key-rotation.ts) wrote while it held the row go too.
   */
  async destroy(organizationId: string, reference: string, at: Date): Promise<Date> {
    const [destroyedAt] = await this.destroyMany([{ organizationId, reference, at }]);
    return destroyedAt;
  }

  /** destroy for many verifications in one transaction (the retention sweep's batch: one commit); answers each one's erasure time, in order. */
  async destroyMany(erasures: readonly { readonly organizationId: string; readonly reference: string; readonly at: Date }[]): Promise<Date[]> {
    if (erasures.length === 0) return [];
    const references = erasures.map((erasure) => erasure.reference);
    const rows = await inTransaction(this.pool, async (client) => {
      const destroyed = await client.query<{ reference: string; destroyed_at: Date }>(
        `insert into verification_keys (reference, organization_id, wrapped_key, destroyed_at)
         select u.reference, u.organization_id, null, u.at from unnest($1::text[], $2::text[], $3::timestamptz[]) as u(reference, organization_id, at)
         on conflict (reference) do update set wrapped_key = null, destroyed_at = coalesce(verification_keys.destroyed_at, excluded.destroyed_at)
         returning reference, destroyed_at`,
        [references, erasures.map((erasure) => erasure.organizationId), erasures.map((erasure) => erasure.at)],
      );
      await client.query('delete from verification_subjects where reference = any($1::text[])', [references]);
      return destroyed.rows;
    });
    for (const reference of references) this.dataKeys.delete(reference);
    const destroyedAt = new Map(rows.map((row) => [row.reference, row.destroyed_at]));
    return erasures.map((erasure) => destroyedAt.get(erasure.reference) ?? erasure.at);
  }

  /**
   * Offboarding: the organization's key-encryption and index keys destroyed (every data key wrapped
   * by them becomes useless at once) and its blind index removed. Idempotent; answers when.
   */
  async destroyOrganization(organizationId: string, at: Date): Promise<Date> {
    const { rows } = await this.pool.query<{ destroyed_at: Date }>(
      `with destroyed as (
         insert into organization_keys (organization_id, master_key_id, wrapped_kek, wrapped_index_key, destroyed_at) values ($1, $2, null, null, $3)
         on conflict (organization_id) do update set wrapped_kek = null, wrapped_index_key = null, retiring_index_key = null, retiring_index_version = null,
           destroyed_at = coalesce(organization_keys.destroyed_at, excluded.destroyed_at)
         returning destroyed_at),
       unindexed as (delete from verification_subjects where organization_id = $1),
       unlinked as (delete from subject_token_successors where organization_id = $1),
       forgotten as (delete from subject_identifiers where organization_id = $1),
       retired as (delete from organization_kek_versions where organization_id = $1)
       select destroyed_at from destroyed`,
      [organizationId, this.kms.masterKeyId, at],
    );
    // Which data keys were wrapped by this KEK is not known in memory: forget them all.
    this.forget();
    return rows[0]?.destroyed_at ?? at;
  }

  /** References of an organization and environment whose identifiers include one of `tokens` (at most `limit`). */
  async referencesOf(organizationId: string, environment: string, tokens: readonly string[], limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ reference: string }>(
      `select distinct reference from verification_subjects where organization_id = $1 and environment = $2 and token = any($3::text[]) order by reference limit $4`,
      [organizationId, environment, tokens, limit],
    );
    return rows.map((row) => row.reference);
  }

  /** Forgets every unwrapped key this process holds (after a destruction elsewhere, or at shutdown). */
  forget(reference?: string): void {
    if (reference !== undefined) {
      this.dataKeys.delete(reference);
      return;
    }
    this.dataKeys.clear();
    this.organizations.clear();
    this.retiredKeks.clear();
  }

  /**
   * Stores data keys (those with a `wrappedKey`; an existing key of the same reference is kept) and
   * blind-index tokens in one statement; answers the references whose key this statement created.
   */
  private async writeKeys(batch: readonly KeyWrite[]): Promise<Set<string>> {
    const keys = batch.filter((write) => write.wrappedKey !== null);
    const tokens = batch.flatMap((write) => write.tokens.map((token) => ({ write, token })));
    const { rows } = await this.pool.query<{ reference: string }>(
      prepared(
        `with created as (
           insert into verification_keys (reference, organization_id, environment, wrapped_key)
           select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])
           on conflict (reference) do nothing returning reference),
         indexed as (
           insert into verification_subjects (organization_id, environment, token, reference)
           select * from unnest($5::text[], $6::text[], $7::text[], $8::text[])
           on conflict do nothing)
         select reference from created`,
        [
          keys.map((write) => write.reference),
          keys.map((write) => write.organizationId),
          keys.map((write) => write.environment),
          keys.map((write) => write.wrappedKey),
          tokens.map(({ write }) => write.organizationId),
          tokens.map(({ write }) => write.environment),
          tokens.map(({ token }) => token),
          tokens.map(({ write }) => write.reference),
        ],
      ),
    );
    return new Set(rows.map((row) => row.reference));
  }

  private async organizationKeys(organizationId: string, { create = true } = {}): Promise<OrganizationKeys> {
    // A copy of the cached keys, the caller's: the cache wipes its own when the entry goes.
    const cached = this.organizations.get(organizationId);
    if (cached !== undefined) return fromCacheEntry(cached);
    let row = await this.organizationRow(organizationId);
    if (row === undefined) {
      if (!create) throw new InvariantViolated(`a data key of ${organizationId} exists without its organization key`);
      const [kek, index] = [pooledRandomBytes(KEY_BYTES), pooledRandomBytes(KEY_BYTES)];
      let wrappedKek: string;
      let wrappedIndex: string;
      try {
        [wrappedKek, wrappedIndex] = await Promise.all([this.kms.wrap(kek, kekContext(organizationId)), this.kms.wrap(index, indexContext(organizationId))]);
      } finally {
        // Stored only wrapped: the keys used from now on are those unwrapped from the row below.
        kek.fill(0);
        index.fill(0);
      }
      // Two processes creating the same organization's keys at once: the first insert wins, both read it.
      await this.pool.query(
        `insert into organization_keys (organization_id, master_key_id, wrapped_kek, wrapped_index_key) values ($1, $2, $3, $4)
         on conflict (organization_id) do nothing`,
        [organizationId, this.kms.masterKeyId, wrappedKek, wrappedIndex],
      );
      row = await this.organizationRow(organizationId);
      if (row === undefined) throw new InvariantViolated(`the keys of ${organizationId} were not stored`);
    }
    if (row.wrapped_kek === null || row.wrapped_index_key === null) throw new OrganizationKeysDestroyed(row.destroyed_at ?? new Date(0));
    if (!this.kms.canUnwrap(row.master_key_id)) {
      throw new InvariantViolated(
        `the keys of ${organizationId} are wrapped under master key ${row.master_key_id}, not the configured ${this.kms.masterKeyId} (finish \`npm run admin -- keys rotate-master\`)`,
      );
    }
    const keys: OrganizationKeys = {
      kek: await this.kms.unwrap(row.wrapped_kek, kekContext(organizationId, row.kek_version)),
      indexKey: await this.kms.unwrap(row.wrapped_index_key, indexContext(organizationId, row.index_version)),
      version: row.kek_version,
      indexVersion: row.index_version,
      ...(row.retiring_index_key === null
        ? {}
        : {
            retiringIndex: {
              key: await this.kms.unwrap(row.retiring_index_key, indexContext(organizationId, row.retiring_index_version ?? 1)),
              version: row.retiring_index_version ?? 1,
            },
          }),
    };
    this.organizations.set(organizationId, toCacheEntry(keys));
    return keys;
  }

  private async organizationRow(organizationId: string, db: pg.Pool | pg.PoolClient = this.pool, lock = ''): Promise<OrganizationKeyRow | undefined> {
    const { rows } = await db.query<OrganizationKeyRow>(`select ${ORGANIZATION_KEY_COLUMNS} from organization_keys where organization_id = $1 ${lock}`, [organizationId]);
    return rows[0];
  }
}

export { kekContext, indexContext };
