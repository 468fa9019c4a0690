import pg from 'pg';
import { isConnectionError } from '../../src/database/connection-errors.js';
import type { EventStore } from '../../src/event-store/event-store.port.js';
import type { Projection } from '../projection.js';
import { LOCK_NAMESPACE, lockKeySql, oldTableName, rebuildCheckpointName, shadowTableName } from '../runner/locks.js';
import { DEFAULT_RUNNER_OPTIONS, errorMessage, ProjectionRunner, projectionContext, type RunnerLog } from '../runner/projection-runner.js';
import { compareTables, type TableDifference } from './verify.js';
import { asError } from '../../src/common/errors.js';

export interface RebuildProgress {
  readonly projection: string;
  readonly phase: 'replaying' | 'swapping' | 'done';
  /** Events applied to the shadow tables by this run (a resumed rebuild starts at 0). */
  readonly eventsDone: number;
  /** About how many events there were to replay when this run started (the planner's estimate); null when the store cannot tell. */
  readonly eventsTotal: number | null;
}

export interface RebuildOptions {
  readonly verify?: boolean;
  /** With verify: differences abort the swap (the shadow tables stay, to inspect or discard). */
  readonly strict?: boolean;
  readonly maxBatch?: number;
  /** Events per page of the replay's bulk path (ProjectionRunnerOptions.pageEvents). */
  readonly pageEvents?: number;
  readonly maxAttempts?: number;
  /** Bound on the swap's wait for table locks held by readers. */
  readonly swapLockTimeoutMs?: number;
  /** Events the swap applies per transaction while it brings the tables level (1,000). */
  readonly swapPageEvents?: number;
  /** Events still to replay at or below which the replay hands over to the swap (which applies them under its lock). */
  readonly swapThresholdEvents?: number;
  readonly onProgress?: (progress: RebuildProgress) => void;
  /** Aborting interrupts the replay and leaves the shadow tables and checkpoint, to resume later. */
  readonly signal?: AbortSignal;
  readonly logger?: RunnerLog;
}

export interface RebuildResult {
  readonly projection: string;
  readonly outcome: 'swapped' | 'interrupted' | 'differences';
  readonly resumedFrom: bigint;
  readonly position: bigint;
  readonly eventsApplied: number;
  readonly differences: readonly TableDifference[] | undefined;
  readonly seconds: number;
}

export class RebuildInProgressError extends Error {
  readonly code = 'rebuild_in_progress';
  constructor(readonly projection: string) {
    super(`a rebuild of ${projection} is already running in another process`);
  }
}

const SWAP_ATTEMPTS = 5;
const SWAP_READ_PAGE = 1_000;
const CAUGHT_UP_POLL_MS = 100;
/** How long a rebuild's checkpoint must hold still, the runner running, to count as caught up. */
const CAUGHT_UP_STILL_MS = 1_000;

const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms));

/**
 * Rebuilds a projection without downtime:
 * 1. into shadow tables `<table>__rebuild` (`like <table> including all`) with its own checkpoint
 *    row `<name>__rebuild`, replaying the log from position zero through the same handlers while
 *    the API keeps reading (and the live runner keeps writing) the live tables;
 * 2. once caught up, the swap (see `swap`) takes the swap lock exclusively, which waits for the
 *    live batch in flight and holds back the next; applies what the live runner applied meanwhile,
 *    so both sides stand at the same position (then `verify` compares them exactly); and in one
 *    short transaction renames live to `__old` and shadow to live, carries the position over to the
 *    live checkpoint and drops the old tables. The live runner's next batch starts from that same
 *    position on the new tables: no event is lost or applied twice across the swap.
 * Interrupted (Ctrl-C, crash), re-running resumes from the shadow checkpoint; `discardRebuild` drops it.
 */
export async function rebuildProjection(pool: pg.Pool, store: EventStore, databaseUrl: string, projection: Projection, options: RebuildOptions = {}): Promise<RebuildResult> {
  const startedAt = Date.now();
  const lock = await takeRebuildLock(databaseUrl, projection);
  try {
    const resumedFrom = await prepareShadow(pool, projection, options.logger);
    const checkpointName = rebuildCheckpointName(projection.name);
    const eventsTotal = await estimateEvents(store, projection, resumedFrom);
    let eventsDone = 0;
    const report = (phase: RebuildProgress['phase']) => options.onProgress?.({ projection: projection.name, phase, eventsDone, eventsTotal });
    report('replaying');

    const runner = new ProjectionRunner(
      pool,
      store,
      projection,
      {
        maxBatch: options.maxBatch ?? DEFAULT_RUNNER_OPTIONS.maxBatch,
        maxAttempts: options.maxAttempts ?? 5,
        pageEvents: options.pageEvents,
        checkpointState: 'rebuilding',
        logger: options.logger,
        onBatch: ({ size }) => {
          eventsDone += size;
          report('replaying');
        },
      },
      shadowTableName,
      checkpointName,
    );
    let failure: Error | undefined;
    const swapThreshold = options.swapThresholdEvents ?? 1_000;
    runner.start();
    runner.finished.catch((error: unknown) => (failure = asError(error)));
    // Caught up: the runner found its queue empty after a short batch (the live edge), and its
    // checkpoint holds still for a second (on EventStoreDB a subscription can reach
    // what looks like the live edge while its catch-up is still delivering, behind the index).
    let lastPosition: bigint | undefined;
    let stillSince = Date.now();
    while (failure === undefined && !options.signal?.aborted) {
      const head = await store.headPosition();
      const position = await positionOf(pool, checkpointName);
      if (head <= position) break;
      // Close enough: the swap applies the rest under its lock (a bounded count, so this stays cheap).
      if ((await countEvents(store, projection, position, swapThreshold + 1)) !== null) break;
      // Without a log reader (EventStoreDB): none of the projection's events left up to the head is
      // caught up too; a projection none of whose events were written yet never applies the batch
      // that would say so, and waited here for ever.
      if (store.logReader === undefined && !(await anyEventAfter(store, projection, position, head))) break;
      // Held still for a second, not one look: a loaded machine can stall a runner between two batches
      // for longer than a poll, and a rebuild that took that for the end swapped early.
      if (position !== lastPosition) stillSince = Date.now();
      else if (runner.metrics.state === 'running' && Date.now() - stillSince >= CAUGHT_UP_STILL_MS) break;
      lastPosition = position;
      await sleep(CAUGHT_UP_POLL_MS);
    }
    await runner.stop();
    if (failure !== undefined) throw failure;
    if (options.signal?.aborted) {
      return {
        projection: projection.name,
        outcome: 'interrupted',
        resumedFrom,
        position: await positionOf(pool, checkpointName),
        eventsApplied: eventsDone,
        differences: undefined,
        seconds: (Date.now() - startedAt) / 1000,
      };
    }

    // Before the swap lock: building them takes seconds per million rows, and nothing waits meanwhile.
    await createDeferredIndexes(pool, projection);
    report('swapping');
    const swap = await swapWithRetries(pool, store, projection, options);
    eventsDone += swap.eventsApplied;
    report('done');
    return {
      projection: projection.name,
      outcome: swap.swapped ? 'swapped' : 'differences',
      resumedFrom,
      position: swap.position,
      eventsApplied: eventsDone,
      differences: swap.differences,
      seconds: (Date.now() - startedAt) / 1000,
    };
  } finally {
    await lock.end().catch(() => undefined);
  }
}

/** Drops an interrupted (or refused) rebuild's shadow tables and checkpoint. */
export async function discardRebuild(pool: pg.Pool, databaseUrl: string, projection: Projection): Promise<{ droppedTables: string[] }> {
  const lock = await takeRebuildLock(databaseUrl, projection);
  try {
    const existing = await existingTables(pool, projection.tables.map(shadowTableName));
    for (const table of existing) await pool.query(`drop table if exists ${table}`);
    await pool.query('delete from projection_checkpoints where name = $1', [rebuildCheckpointName(projection.name)]);
    return { droppedTables: existing };
  } finally {
    await lock.end().catch(() => undefined);
  }
}

async function takeRebuildLock(databaseUrl: string, projection: Projection): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'proj-rebuild' });
  client.on('error', () => undefined);
  await client.connect();
  const { rows } = await client.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK_NAMESPACE.rebuild}, ${lockKeySql('$1::text')}) as locked`, [projection.name]);
  if (!rows[0].locked) {
    await client.end();
    throw new RebuildInProgressError(projection.name);
  }
  return client;
}

async function existingTables(pool: pg.Pool, tables: readonly string[]): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>('select n.name from unnest($1::text[]) as n(name) where to_regclass(n.name) is not null', [tables]);
  return rows.map((row) => row.name);
}

/**
 * Resumes when the shadow checkpoint and every shadow table exist and the checkpoint has moved; else
 * starts over from zero (a checkpoint at zero has nothing to resume). Returns the starting position.
 */
async function prepareShadow(pool: pg.Pool, projection: Projection, logger: RunnerLog | undefined): Promise<bigint> {
  const checkpointName = rebuildCheckpointName(projection.name);
  const shadows = projection.tables.map(shadowTableName);
  const { rows } = await pool.query<{ position: string }>('select position from projection_checkpoints where name = $1', [checkpointName]);
  const present = await existingTables(pool, shadows);
  if (rows.length === 1 && present.length === shadows.length && rows[0].position !== '0') {
    logger?.log(`${projection.name}: resuming the rebuild from position ${rows[0].position}`);
    return BigInt(rows[0].position);
  }
  const client = await pool.connect();
  try {
    await client.query('begin');
    for (const table of projection.tables) {
      await client.query(`drop table if exists ${shadowTableName(table)}`);
      await client.query(`create table ${shadowTableName(table)} (like ${table} including all)`);
      for (const index of await deferredIndexesOf(client, shadowTableName(table))) await client.query(`drop index ${quoteIdent(index)}`);
    }
    await client.query(
      `insert into projection_checkpoints (name, position, events_processed, state) values ($1, 0, 0, 'rebuilding')
       on conflict (name) do update set position = 0, events_processed = 0, state = 'rebuilding', error = null, failed_position = null, updated_at = now()`,
      [checkpointName],
    );
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  return 0n;
}

async function positionOf(pool: pg.Pool | pg.PoolClient, checkpointName: string): Promise<bigint> {
  const { rows } = await pool.query<{ position: string }>('select position from projection_checkpoints where name = $1', [checkpointName]);
  return rows.length === 0 ? 0n : BigInt(rows[0].position);
}

/**
 * About how many of the projection's events lie after `from`, for the progress bar: the log
 * reader's estimate (LogReader.estimateEventsAfter); null on a store without one. Counting them
 * read every event of the log once more before the replay, a cost in proportion to the whole log.
 */
async function estimateEvents(store: EventStore, projection: Projection, from: bigint): Promise<number | null> {
  return (await store.logReader?.estimateEventsAfter(projection.categories, from)) ?? null;
}

/** The projection's events after `from`; null when the store has no log reader to count them or there are `limit` or more. */
/** Whether the log holds an event of the projection's categories after `from`, up to `upTo`. */
async function anyEventAfter(store: EventStore, projection: Projection, from: bigint, upTo: bigint): Promise<boolean> {
  const [next] = await store.readAll({ fromPosition: from, maxCount: 1, filter: { streamCategories: [...projection.categories] } });
  return next !== undefined && next.position <= upTo;
}

async function countEvents(store: EventStore, projection: Projection, from: bigint, limit: number): Promise<number | null> {
  return (await store.logReader?.countVisibleEventsAfter(projection.categories, from, limit)) ?? null;
}

interface SwapOutcome {
  readonly swapped: boolean;
  readonly position: bigint;
  readonly eventsApplied: number;
  readonly differences: readonly TableDifference[] | undefined;
}

async function swapWithRetries(pool: pg.Pool, store: EventStore, projection: Projection, options: RebuildOptions): Promise<SwapOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await swap(pool, store, projection, options);
    } catch (error) {
      // 55P03: lock_not_available (a long read held a live table); 40P01: deadlock. Both leave nothing behind.
      const code = (error as { code?: string }).code;
      if ((code !== '55P03' && code !== '40P01') || attempt >= SWAP_ATTEMPTS) throw error;
      options.logger?.warn(`${projection.name}: swap attempt ${attempt} could not take its locks (${errorMessage(error)}); retrying`);
      await sleep(500 * attempt);
    }
  }
}

/**
 * The swap, without holding a transaction id across its slow parts. On the PostgreSQL log an open
 * transaction that has written holds back what every subscriber in every process sees (the visible
 * bound), so only the renaming itself is one transaction:
 * 1. the swap lock, taken exclusively by this session (live batches take it shared, in their
 *    transactions before they write): the batch in flight finishes, the next waits, and the live
 *    tables and checkpoint stand still until the lock is given back;
 * 2. the shadow brought to the live position, a page per transaction, as the runner's batches;
 * 3. with `verify`, the live tables brought level with the shadow (a page per transaction, the
 *    live checkpoint following, as live batches would have done), then both compared in one
 *    read-only snapshot, which takes no transaction id;
 * 4. one short transaction that renames, carries the position over and drops the old tables.
 * Nothing else writes these tables or checkpoints meanwhile (the lock, the rebuild lock, the
 * stopped rebuild runner), so the comparison is exact and the position carried over is right.
 */
async function swap(pool: pg.Pool, store: EventStore, projection: Projection, options: RebuildOptions): Promise<SwapOutcome> {
  const checkpointName = rebuildCheckpointName(projection.name);
  const pageSize = options.swapPageEvents ?? SWAP_READ_PAGE;
  const client = await pool.connect();
  let locked = false;
  let clean = true;
  const lockArgs = [projection.name];
  const lockKey = `${LOCK_NAMESPACE.swap}, ${lockKeySql('$1::text')}`;
  try {
    await client.query(`select set_config('lock_timeout', $1, false)`, [`${options.swapLockTimeoutMs ?? 10_000}ms`]);
    // Waits for the live batch in flight; the next one waits until this session unlocks.
    await client.query(`select pg_advisory_lock(${lockKey})`, lockArgs);
    locked = true;
    await client.query(`insert into projection_checkpoints (name) values ($1) on conflict (name) do nothing`, [projection.name]);
    const livePosition = await positionOf(client, projection.name);
    const shadow = await client.query<{ position: string }>('select position from projection_checkpoints where name = $1', [checkpointName]);
    if (shadow.rows.length !== 1) throw new Error(`invariant: the rebuild checkpoint of ${projection.name} vanished`);
    let position = BigInt(shadow.rows[0].position);

    // Bring the shadow to the live position, so that the live runner continues exactly where the shadow stands.
    let eventsApplied = 0;
    const shadowContext = projectionContext(client, projection, shadowTableName);
    while (position < livePosition) {
      const page = await readPage(store, projection, position, livePosition, pageSize);
      if (page.length === 0) break;
      if (page[0].position <= position) throw new Error(`invariant: the log went backwards at ${page[0].position}`);
      const last = page[page.length - 1].position;
      await inTransaction(client, async () => {
        await projection.handle(page, shadowContext);
        await client.query('update projection_checkpoints set position = $2, events_processed = events_processed + $3, updated_at = now() where name = $1', [
          checkpointName,
          last.toString(),
          page.length,
        ]);
      });
      eventsApplied += page.length;
      position = last;
    }
    if (position < livePosition) position = livePosition;

    let differences: TableDifference[] | undefined;
    if (options.verify) {
      // The live tables are behind the shadow: bring them level first (they are dropped right after
      // anyway), so that the comparison is exact. A live projection stopped on a bad event cannot
      // follow: then the comparison includes the events it lacks.
      if (livePosition < position) {
        const liveContext = projectionContext(client, projection, (table) => table);
        try {
          for (let from = livePosition; from < position;) {
            const page = await readPage(store, projection, from, position, pageSize);
            if (page.length === 0) break;
            const last = page[page.length - 1].position;
            await inTransaction(client, async () => {
              await projection.handle(page, liveContext);
              const moved = await client.query(
                'update projection_checkpoints set position = $3, events_processed = events_processed + $4, updated_at = now() where name = $1 and position = $2',
                [projection.name, from.toString(), last.toString(), page.length],
              );
              if (moved.rowCount !== 1) throw new Error(`invariant: the live checkpoint of ${projection.name} moved under the swap lock`);
            });
            from = last;
          }
        } catch (error) {
          options.logger?.warn(`${projection.name}: the live tables could not be brought level for --verify (${errorMessage(error)})`);
        }
      }
      differences = [];
      await client.query('begin isolation level repeatable read read only');
      try {
        for (const table of projection.tables) differences.push(await compareTables(client, table, shadowTableName(table)));
        await client.query('commit');
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      }
      const differing = differences.some((difference) => difference.onlyLive > 0 || difference.onlyRebuilt > 0);
      if (differing && options.strict) return { swapped: false, position, eventsApplied, differences };
    }

    await inTransaction(client, async () => {
      for (const table of projection.tables) {
        const liveIndexes = new Map((await indexesOf(client, table)).map((index) => [index.definition, index.name]));
        await client.query(`alter table ${table} rename to ${oldTableName(table)}`);
        await client.query(`alter table ${shadowTableName(table)} rename to ${table}`);
        await client.query(`drop table ${oldTableName(table)}`);
        // Give the new table's indexes (and so its constraints) the live names back.
        for (const index of await indexesOf(client, table)) {
          const original = liveIndexes.get(index.definition);
          if (original !== undefined && original !== index.name) await client.query(`alter index ${quoteIdent(index.name)} rename to ${quoteIdent(original)}`);
        }
      }
      const counted = await client.query<{ events_processed: string }>('select events_processed from projection_checkpoints where name = $1', [checkpointName]);
      const eventsProcessed = BigInt(counted.rows[0].events_processed);
      await client.query(
        `update projection_checkpoints set position = $2, events_processed = $3, state = 'running', error = null, failed_position = null, updated_at = now() where name = $1`,
        [projection.name, position.toString(), eventsProcessed.toString()],
      );
      await client.query('delete from projection_checkpoints where name = $1', [checkpointName]);
    });
    return { swapped: true, position, eventsApplied, differences };
  } catch (error) {
    if (isConnectionError(error)) clean = false;
    throw error;
  } finally {
    try {
      if (locked) await client.query(`select pg_advisory_unlock(${lockKey})`, lockArgs);
      await client.query('reset lock_timeout');
    } catch {
      clean = false;
    }
    // A session that could not give its lock back is ended, which gives it back.
    client.release(clean ? undefined : true);
  }
}

/** `work` in one transaction on `client`, rolled back when it throws. */
async function inTransaction(client: pg.PoolClient, work: () => Promise<void>): Promise<void> {
  await client.query('begin');
  try {
    await work();
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/** The projection's events in (from, to]. Events never change, so reading them outside the swap's transactions is safe. */
async function readPage(store: EventStore, projection: Projection, from: bigint, to: bigint, pageSize: number) {
  const page = await store.readAll({ fromPosition: from, maxCount: pageSize, filter: { streamCategories: projection.categories } });
  return page.filter((event) => event.position <= to);
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The indexes of a table that back no constraint and enforce nothing: the read side's (lists,
 * recovery scans). A shadow table is created without them and gets them once replayed: one sorted
 * build instead of an entry per row written (verifications has four, each costing PostgreSQL time
 * on every row the replay copies). The unique ones stay: the handlers' upserts and lookups use them,
 * and they refuse what the live table would refuse.
 */
async function deferredIndexesOf(client: pg.PoolClient, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
     where i.indrelid = $1::regclass and not i.indisunique and not i.indisexclusion and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`,
    [table],
  );
  return rows.map((row) => row.name);
}

/** Builds on each shadow table the live table's indexes it lacks (those `prepareShadow` left out), in one transaction. */
async function createDeferredIndexes(pool: pg.Pool, projection: Projection): Promise<void> {
  const client = await pool.connect();
  try {
    await inTransaction(client, async () => {
      // A sorted build per index: more memory than the default 64 MB makes it one pass at ten million rows.
      await client.query(`set local maintenance_work_mem = '256MB'`);
      for (const table of projection.tables) {
        const shadow = shadowTableName(table);
        const present = new Set((await indexesOf(client, shadow)).map((index) => index.definition));
        for (const { definition } of await indexesOf(client, table)) {
          if (!present.has(definition)) await client.query(definition.replace(/^(CREATE (?:UNIQUE )?INDEX) ON _ /, `$1 ON ${shadow} `));
        }
      }
    });
  } finally {
    client.release();
  }
}

/** Index definitions with their own and their table's names blanked out, to match a shadow's index to the live one. */
async function indexesOf(client: pg.PoolClient, table: string): Promise<{ name: string; definition: string }[]> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as definition from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = $1::regclass`,
    [table],
  );
  return rows.map((row) => ({ name: row.name, definition: row.definition.replace(/^(CREATE (?:UNIQUE )?INDEX) \S+ ON (?:ONLY )?\S+ /, '$1 ON _ ') }));
}
