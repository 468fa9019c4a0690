import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { InvariantViolated } from '../common/errors.js';
import { textField } from '../common/event.js';
import { streams } from '../common/streams.js';
import { tokensOf } from '../data-protection/blind-index.js';
import { OrganizationKeysDestroyed, type DataKeys } from '../data-protection/data-keys.js';
import { isSealed, KEY_BYTES, seal } from '../data-protection/sealing.js';
import type { EventStore, JsonObject, LegacyEventLog, SealedField, UnsealedEvent } from '../event-store/event-store.port.js';
import type { PortraitStore } from '../portraits/portrait.store.js';
import { PORTRAIT_ID_FIELD } from '../portraits/portraits.service.js';
import { PERSONAL_FIELDS } from '../verifications/verification.codec.js';
import { inTransaction } from '../database/transaction.js';

/** The command that seals them, as operators type it (the start-up warning names it). */
export const ENCRYPT_LEGACY_EVENTS_COMMAND = 'npm run maintenance -- encrypt-legacy-events';

/** Session-wide lock id, so that two runs never seal the same rows at once (hashtext('encrypt-legacy-events')). */
const LOCK_SQL = "select pg_try_advisory_lock(hashtext('encrypt-legacy-events')) as locked";

export const MAX_BATCH_EVENTS = 5_000;
export const DEFAULT_BATCH_EVENTS = 500;
/** Read-model rows fixed per statement by the final sweep. */
const SWEEP_ROWS = 500;

/**
 * A store without a log reader (EventStoreDB) has no index to ask, so the check samples the oldest
 * VerificationRequested of `$all`: the code before sealing wrote plain requests, the code since seals every one, so the log
 * holds plain text exactly when its oldest request is plain (until the copy procedure of
 * docs/data-protection.md has run and the old streams are scavenged).
 */
export async function oldestRequestIsPlain(store: EventStore): Promise<boolean> {
  const [oldest] = await store.readAll({ maxCount: 1, filter: { eventTypes: ['VerificationRequested'] } });
  return oldest !== undefined && !isSealed((oldest.data as { request?: unknown }).request);
}

export interface SealingProgress {
  readonly done: number;
  readonly total: number;
}

export interface SealingSummary {
  /** Events whose personal field was sealed by this run. */
  readonly events: number;
  /** Of those, sealed under a key that was then thrown away because their verification's keys had been destroyed (erased). */
  readonly shredded: number;
  readonly dataKeysCreated: number;
  readonly portraitsResealed: number;
  /** Read-model fields (request or result) that were plain and now hold their event's sealed one. */
  readonly readModelRows: number;
  /** True when stopped (a signal) before the end: run the command again to go on. */
  readonly interrupted: boolean;
}

export interface SealingOptions {
  readonly batchSize: number;
  /** A pause after each committed batch, to leave room to the service on a busy database. */
  readonly pauseMs: number;
  readonly onProgress?: (progress: SealingProgress) => void;
  /** Checked between batches: the batch under way commits first. */
  readonly signal?: AbortSignal;
}

/** A sealed field, with what the read model's row needs. */
interface Sealed extends SealedField {
  readonly reference: string;
  readonly type: UnsealedEvent['type'];
}

/** Where a verification's data key stands for this run: a usable key, or none left (its data is to be shredded). */
type KeyFor = { readonly key: Buffer; readonly shred: boolean };

const sleep = (ms: number) => new Promise<void>((wake) => setTimeout(wake, ms));

/**
 * Seals, in place, the personal fields of the verification events written in plain text before
 * sealing, exactly as VerificationCodec would have sealed them (same envelope, same associated
 * data): each field under its verification's data key, made (and indexed for the data-subject
 * search) when it has none. Batches of `batchSize` events, each committed on its own with the
 * read-model rows of its verifications, in position order; positions, ids, revisions, types,
 * metadata and the other fields stay as they were (the log's trigger refuses anything else). A
 * field already sealed is never touched, so a run killed at any point is resumed by running it
 * again. A verification whose keys were destroyed (erased) before this ran has its plain fields
 * sealed under a random key that is never stored: they become unreadable, as its erasure meant.
 * Legacy portraits (PRT1, under the store's own key) are sealed again under the data key (PRT2)
 * and the result names the new record; the old record is deleted once its batch commits, and so
 * is the legacy portrait of an erased verification.
 */
export class LegacyEventSealer {
  private readonly keysFor = new Map<string, KeyFor>();
  private dataKeysCreated = 0;
  private portraitsResealed = 0;
  /** Portraits the batch under way no longer names (re-sealed, or of an erased verification): deleted once it commits. */
  private portraitsToDelete: string[] = [];

  constructor(
    private readonly pool: pg.Pool,
    /** The log's side (LogReader.legacyEvents): the PostgreSQL log, in the same database as `pool`'s read models. */
    private readonly log: LegacyEventLog,
    private readonly keys: DataKeys,
    private readonly portraits: PortraitStore | undefined,
  ) {}

  async run(options: SealingOptions): Promise<SealingSummary> {
    if (!Number.isInteger(options.batchSize) || options.batchSize < 1 || options.batchSize > MAX_BATCH_EVENTS) {
      throw new RangeError(`the batch size is 1 to ${MAX_BATCH_EVENTS} events`);
    }
    const lock = await this.pool.connect();
    try {
      const { rows } = await lock.query<{ locked: boolean }>(LOCK_SQL);
      if (!rows[0].locked) throw new AnotherRunInProgress();
      const total = await this.log.countUnsealed();
      let done = 0;
      let shredded = 0;
      let after = '-1';
      let interrupted = false;
      let readModelRows = 0;
      options.onProgress?.({ done, total });
      for (;;) {
        if (options.signal?.aborted === true) {
          interrupted = true;
          break;
        }
        const batch = await this.log.unsealedAfter(after, options.batchSize);
        if (batch.length === 0) break;
        const sealed: Sealed[] = [];
        for (const row of batch) {
          const result = await this.sealRow(row);
          sealed.push(result.sealed);
          if (result.shredded) shredded += 1;
        }
        readModelRows += await this.commit(sealed);
        // Only after the commit: until then the events still name these records.
        for (const portraitId of this.portraitsToDelete) await this.portraits?.delete(portraitId);
        this.portraitsToDelete = [];
        after = batch[batch.length - 1].position;
        done += batch.length;
        // Keys of finished batches are not needed again (one verification's events are next to each other, mostly).
        if (this.keysFor.size > MAX_BATCH_EVENTS) this.keysFor.clear();
        options.onProgress?.({ done, total: Math.max(total, done) });
        if (options.pauseMs > 0) await sleep(options.pauseMs);
      }
      if (!interrupted) readModelRows += await this.sweepReadModel();
      return { events: done, shredded, dataKeysCreated: this.dataKeysCreated, portraitsResealed: this.portraitsResealed, readModelRows, interrupted };
    } finally {
      await lock.query("select pg_advisory_unlock(hashtext('encrypt-legacy-events'))").catch(() => undefined);
      lock.release();
    }
  }

  private async sealRow(row: UnsealedEvent): Promise<{ sealed: Sealed; shredded: boolean }> {
    const field = PERSONAL_FIELDS[row.type];
    if (field === undefined) throw new InvariantViolated(`event at ${row.position} is not a verification event with a personal field`);
    const reference = row.data.reference;
    if (typeof reference !== 'string' || row.streamId !== streams.verification(reference)) {
      throw new InvariantViolated(`event at ${row.position} names a reference that is not its stream's`);
    }
    let value = (row.data[field] ?? {}) as JsonObject;
    const { key, shred } = await this.keyFor(row, reference);
    if (row.type === 'VerificationCompleted') {
      if (shred) {
        const portraitId = value[PORTRAIT_ID_FIELD];
        if (typeof portraitId === 'string') this.portraitsToDelete.push(portraitId);
      } else {
        value = await this.resealPortrait(reference, key, value);
        await this.indexResult(row, reference, value);
      }
    }
    return {
      sealed: { position: row.position, field, reference, type: row.type, sealed: seal(key, value, { reference, eventType: row.type, field }) as unknown as JsonObject },
      shredded: shred,
    };
  }

  /** The verification's data key; made when it has none (with the blind-index tokens of a plain request). */
  private async keyFor(row: UnsealedEvent, reference: string): Promise<KeyFor> {
    const known = this.keysFor.get(reference);
    if (known !== undefined) return known;
    const state = await this.keys.get(reference);
    let keyFor: KeyFor;
    if (state.status === 'open') keyFor = { key: state.key, shred: false };
    else if (state.status === 'destroyed') keyFor = { key: randomBytes(KEY_BYTES), shred: true };
    else if (state.status === 'unopenable') throw new InvariantViolated(`the data key of ${reference} does not unwrap (tampered with, or moved): nothing is sealed under it`);
    else {
      const requested = row.type === 'VerificationRequested' ? row.data : await this.requestOf(row.streamId);
      const organizationId = textField(requested, 'organizationId');
      const environment = textField(requested, 'environment');
      const request = isSealed(requested.request) ? {} : ((requested.request ?? {}) as JsonObject);
      try {
        keyFor = { key: await this.keys.create(organizationId, environment, reference, (indexKey) => tokensOf(indexKey, request)), shred: false };
        this.dataKeysCreated += 1;
      } catch (error) {
        if (!(error instanceof OrganizationKeysDestroyed)) throw error;
        // Offboarded: its verifications read as erased; a destroyed key row says so without an incident on each read.
        await this.pool.query(
          `insert into verification_keys (reference, organization_id, wrapped_key, destroyed_at) values ($1, $2, null, $3) on conflict (reference) do nothing`,
          [reference, organizationId, error.destroyedAt],
        );
        keyFor = { key: randomBytes(KEY_BYTES), shred: true };
      }
    }
    this.keysFor.set(reference, keyFor);
    return keyFor;
  }

  private async requestOf(streamId: string): Promise<JsonObject> {
    const requested = await this.log.requestOf(streamId);
    if (requested === undefined) throw new InvariantViolated(`${streamId} has a terminal event without its request`);
    return requested;
  }

  private async indexResult(row: UnsealedEvent, reference: string, result: JsonObject): Promise<void> {
    const requested = await this.requestOf(row.streamId);
    await this.keys.index(textField(requested, 'organizationId'), textField(requested, 'environment'), reference, (indexKey) => tokensOf(indexKey, result));
  }

  /**
   * A portrait stored under the store's own key (PRT1) is stored again under the data key (PRT2);
   * the result then names the new record. A record already under the data key, or gone, is left.
   */
  private async resealPortrait(reference: string, key: Buffer, result: JsonObject): Promise<JsonObject> {
    const portraitId = result[PORTRAIT_ID_FIELD];
    if (this.portraits === undefined || typeof portraitId !== 'string') return result;
    let underDataKey = false;
    const stored = await this.portraits.get(portraitId, async () => {
      underDataKey = true;
      return null;
    });
    if (underDataKey || stored === null) return result;
    const resealed = await this.portraits.put(stored.organizationId, stored.contentType, stored.bytes, { reference, key });
    this.portraitsResealed += 1;
    this.portraitsToDelete.push(portraitId);
    return { ...result, [PORTRAIT_ID_FIELD]: resealed };
  }

  /**
   * One transaction: the batch's events (LegacyEventLog.sealInPlace), then the read-model rows of
   * their verifications, given the same sealed fields. An erased row stays blank: its `{}` is the
   * erasure, not a plain field to seal.
   */
  private async commit(sealed: readonly Sealed[]): Promise<number> {
    return inTransaction(this.pool, async (client) => {
      await this.log.sealInPlace(
        async <T>(sql: string, params?: readonly unknown[]) => (await client.query(sql, params === undefined ? undefined : [...params])).rows as T[],
        sealed,
      );
      const rows = JSON.stringify(sealed.map(({ reference, type, sealed: value }) => ({ reference, type, sealed: value })));
      const requests = await client.query(
        `update verifications v set request = f.sealed
         from jsonb_to_recordset($1::jsonb) as f(reference text, type text, sealed jsonb)
         where f.type = 'VerificationRequested' and v.reference = f.reference
           and (v.request ->> 'sealed') is distinct from 'aes-256-gcm' and v.personal_data_erased_at is null`,
        [rows],
      );
      const results = await client.query(
        `update verifications v set result = f.sealed
         from jsonb_to_recordset($1::jsonb) as f(reference text, type text, sealed jsonb)
         where f.type = 'VerificationCompleted' and v.reference = f.reference
           and v.status in ('found', 'not_found') and (v.result ->> 'sealed') is distinct from 'aes-256-gcm' and v.personal_data_erased_at is null`,
        [rows],
      );
      return (requests.rowCount ?? 0) + (results.rowCount ?? 0);
    });
  }

  /**
   * Read-model rows still plain once every event is sealed (a projection that wrote a plain event it
   * had read before its batch committed) take their events' sealed fields; SWEEP_ROWS rows at a
   * time, in reference order.
   */
  private async sweepReadModel(): Promise<number> {
    let fixed = 0;
    for (const [field, eventType, extra] of [
      ['request', 'VerificationRequested', ''],
      ['result', 'VerificationCompleted', "and v.status in ('found', 'not_found')"],
    ] as const) {
      for (let after = ''; ;) {
        const { rows } = await this.pool.query<{ reference: string }>(
          `select reference from verifications v where (v.${field} ->> 'sealed') is distinct from 'aes-256-gcm' and v.personal_data_erased_at is null ${extra}
             and v.reference > $1 order by v.reference limit ${SWEEP_ROWS}`,
          [after],
        );
        if (rows.length === 0) break;
        after = rows[rows.length - 1].reference;
        const sealed = await this.log.sealedFieldsOf(
          rows.map((row) => streams.verification(row.reference)),
          eventType,
          field,
        );
        const found = rows.flatMap((row) => {
          const value = sealed.get(streams.verification(row.reference));
          return value === undefined ? [] : [{ reference: row.reference, sealed: value }];
        });
        if (found.length > 0) {
          const { rowCount } = await this.pool.query(
            `update verifications v set ${field} = f.sealed from jsonb_to_recordset($1::jsonb) as f(reference text, sealed jsonb) where v.reference = f.reference`,
            [JSON.stringify(found)],
          );
          fixed += rowCount ?? 0;
        }
        if (rows.length < SWEEP_ROWS) break;
      }
    }
    return fixed;
  }
}

export class AnotherRunInProgress extends Error {
  constructor() {
    super('another encrypt-legacy-events is running on this database');
    this.name = 'AnotherRunInProgress';
  }
}
