import type pg from 'pg';
import { Forbidden, InvariantViolated } from '../common/errors.js';
import { pooledRandomBytes } from '../common/random.js';
import { isConnectionError } from '../database/connection-errors.js';
import { GroupCommit } from '../database/group-commit.js';
import { prepared } from '../database/prepared.js';
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

interface OrganizationKeys {
  readonly kek: Buffer;
  readonly indexKey: Buffer;
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
}

/** Wipes an organization's keys a caller holds (its copy; the cache keeps its own). */
const wipe = (keys: OrganizationKeys): void => {
  keys.kek.fill(0);
  keys.indexKey.fill(0);
};

const kekContext = (organizationId: string) => `kek\n${organizationId}`;
const indexContext = (organizationId: string) => `index\n${organizationId}`;
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
  ) {
    this.organizations = new KeyCache(limits.maxEntries, limits.ttlMs, limits.now);
    this.dataKeys = new KeyCache(limits.maxEntries, limits.ttlMs, limits.now);
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
  async make(organizationId: string, environment: string, reference: string, tokensOf: (indexKey: Buffer) => readonly string[] = () => []): Promise<{ readonly key: Buffer; readonly rows: KeyRows }> {
    const made = await this.newKey(organizationId, environment, reference, tokensOf);
    this.dataKeys.set(reference, Buffer.from(made.key));
    return made;
  }

  /** Rows adding blind-index tokens to a verification (no key), for the transaction of an append (see make); undefined when there are none. */
  async tokenRows(organizationId: string, environment: string, reference: string, tokensOf: (indexKey: Buffer) => readonly string[]): Promise<KeyRows | undefined> {
    const tokens = await this.withIndexKey(organizationId, tokensOf);
    return tokens.length === 0 ? undefined : { reference, organizationId, environment, wrappedKey: null, tokens };
  }

  private async newKey(organizationId: string, environment: string, reference: string, tokensOf: (indexKey: Buffer) => readonly string[]): Promise<{ key: Buffer; rows: KeyRows }> {
    let organization: OrganizationKeys;
    try {
      organization = await this.organizationKeys(organizationId);
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed) throw new Forbidden('personal_data_destroyed', "This organization's personal data was destroyed (offboarded): it can run no more checks");
      throw error;
    }
    try {
      const key = pooledRandomBytes(KEY_BYTES);
      const wrappedKey = sealBytes(organization.kek, key, dataKeyAad(organizationId, environment, reference)).toString('base64');
      return { key, rows: { reference, organizationId, environment, wrappedKey, tokens: tokensOf(organization.indexKey) } };
    } finally {
      wipe(organization);
    }
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
    try {
      key = openBytes(organization.kek, Buffer.from(row.wrapped_key, 'base64'), dataKeyAad(row.organization_id, row.environment ?? null, reference));
    } catch (error) {
      if (error instanceof SealOpenFailed) return { status: 'unopenable' };
      throw error;
    } finally {
      wipe(organization);
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
    try {
      return values.map(({ plain, context }) => sealBytes(organization.kek, plain, organizationSealAad(organizationId, context)).toString('base64'));
    } finally {
      wipe(organization);
    }
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
    try {
      return values.map(({ sealed, context }) => openBytes(organization.kek, Buffer.from(sealed, 'base64'), organizationSealAad(organizationId, context)));
    } finally {
      wipe(organization);
    }
  }

  /** Adds blind-index tokens for a verification (e.g. the identifiers its result revealed). */
  async index(organizationId: string, environment: string, reference: string, tokensOf: (indexKey: Buffer) => readonly string[]): Promise<void> {
    const tokens = await this.withIndexKey(organizationId, tokensOf);
    if (tokens.length === 0) return;
    await this.writes.write({ reference, organizationId, environment, wrappedKey: null, tokens });
  }

  /** The organization's blind-index key (created with its KEK when first needed): a copy, the caller's. */
  async indexKey(organizationId: string): Promise<Buffer> {
    const keys = await this.organizationKeys(organizationId);
    keys.kek.fill(0);
    return keys.indexKey;
  }

  /** `use` run on the organization's index key, which is wiped after. */
  private async withIndexKey<T>(organizationId: string, use: (indexKey: Buffer) => T): Promise<T> {
    const keys = await this.organizationKeys(organizationId);
    try {
      return use(keys.indexKey);
    } finally {
      wipe(keys);
    }
  }

  /**
   * Erases one verification: its data key destroyed (`at` becomes its erasure time; a key already
   * destroyed keeps its time; a verification with no key, from before sealing, gets a destroyed row)
   * and its blind-index tokens removed, in one statement. Answers when the key was destroyed.
   */
  async destroy(organizationId: string, reference: string, at: Date): Promise<Date> {
    const { rows } = await this.pool.query<{ destroyed_at: Date }>(
      `with destroyed as (
         insert into verification_keys (reference, organization_id, wrapped_key, destroyed_at) values ($1, $2, null, $3)
         on conflict (reference) do update set wrapped_key = null, destroyed_at = coalesce(verification_keys.destroyed_at, excluded.destroyed_at)
         returning destroyed_at),
       unindexed as (delete from verification_subjects where reference = $1)
       select destroyed_at from destroyed`,
      [reference, organizationId, at],
    );
    this.dataKeys.delete(reference);
    return rows[0]?.destroyed_at ?? at;
  }

  /**
   * Offboarding: the organization's key-encryption and index keys destroyed (every data key wrapped
   * by them becomes useless at once) and its blind index removed. Idempotent; answers when.
   */
  async destroyOrganization(organizationId: string, at: Date): Promise<Date> {
    const { rows } = await this.pool.query<{ destroyed_at: Date }>(
      `with destroyed as (
         insert into organization_keys (organization_id, master_key_id, wrapped_kek, wrapped_index_key, destroyed_at) values ($1, $2, null, null, $3)
         on conflict (organization_id) do update set wrapped_kek = null, wrapped_index_key = null, destroyed_at = coalesce(organization_keys.destroyed_at, excluded.destroyed_at)
         returning destroyed_at),
       unindexed as (delete from verification_subjects where organization_id = $1)
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
    // A copy of the cached pair, the caller's: the cache wipes its own when the entry goes.
    const cached = this.organizations.get(organizationId);
    if (cached !== undefined) return { kek: cached.subarray(0, KEY_BYTES), indexKey: cached.subarray(KEY_BYTES) };
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
    if (row.master_key_id !== this.kms.masterKeyId) {
      throw new InvariantViolated(`the keys of ${organizationId} are wrapped under master key ${row.master_key_id}, not the configured ${this.kms.masterKeyId} (finish \`npm run admin -- keys rotate-master\`)`);
    }
    const keys = {
      kek: await this.kms.unwrap(row.wrapped_kek, kekContext(organizationId)),
      indexKey: await this.kms.unwrap(row.wrapped_index_key, indexContext(organizationId)),
    };
    this.organizations.set(organizationId, Buffer.concat([keys.kek, keys.indexKey]));
    return keys;
  }

  private async organizationRow(organizationId: string): Promise<OrganizationKeyRow | undefined> {
    const { rows } = await this.pool.query<OrganizationKeyRow>(
      'select organization_id, master_key_id, wrapped_kek, wrapped_index_key, destroyed_at from organization_keys where organization_id = $1',
      [organizationId],
    );
    return rows[0];
  }
}

export { kekContext, indexContext };
