import type pg from 'pg';
import { isConnectionError } from '../../src/database/connection-errors.js';
import type { EventStore } from '../../src/event-store/event-store.port.js';
import type { Projection } from '../projection.js';
import { rebuildCheckpointName, shadowTableName } from '../runner/locks.js';
import { projectionContext, type RunnerLog } from '../runner/projection-runner.js';

/**
 * Sorts in memory: the fold sorts the projection's events once or twice (a few hundred bytes each
 * after the fields are taken out), which at the default 4 MB spill to disk from some ten thousand.
 */
const FOLD_WORK_MEM = '512MB';

/**
 * A rebuild's start on the PostgreSQL log: folds the log up to its visible head into the empty
 * shadow tables inside PostgreSQL (Projection.foldInDatabase) and sets the shadow checkpoint to
 * that head, in one transaction, so that the runner replays only what came after. Answers the
 * events folded: 0 when the projection has no fold, the store is not PostgreSQL, the shadow is not
 * empty, or the fold declined or failed (then nothing is kept and the page path replays the whole
 * log, as without the fold; a failure is logged by its SQLSTATE only, as its message may quote a
 * value from the log).
 *
 * The check of the events (DatabaseFolder.oddEventsSql) runs on a second session while the fold
 * writes: the two take both cores, and an odd event, rare, costs a fold rolled back.
 *
 * The head is read before the fold starts: every event at or below it lies below the log's visible
 * bound, so every transaction that could write one has ended, and the fold's snapshot, taken after,
 * sees all of them; what is committed later lies above it and is the runner's. The transaction
 * holds a transaction id only once its statements write, which is after their sorts, for the time
 * the rows take to go in (about a second per 500,000 rows): that long, it holds back the log's
 * visible bound for every subscriber, as any long append does.
 */
export async function foldIntoShadow(pool: pg.Pool, store: EventStore, projection: Projection, logger: RunnerLog | undefined): Promise<number> {
  const folder = projection.foldInDatabase;
  if (store.kind !== 'postgres' || folder === undefined) return 0;
  const head = await store.headPosition();
  if (head === 0n) return 0;
  const checkpointName = rebuildCheckpointName(projection.name);
  const client = await pool.connect();
  let clean = true;
  const decline = async (reason: string) => {
    await client.query('rollback');
    logger?.warn(`${projection.name}: the log is replayed through the page path, not folded in the database: ${reason}`);
    return 0;
  };
  try {
    await client.query('begin');
    let checking: Promise<CheckOutcome> | undefined;
    try {
      await client.query(`set local work_mem = '${FOLD_WORK_MEM}'`);
      // One session per statement: the CPU of the sessions is the fold's whole cost (parallel workers would take the core the check runs on, and hide from a count of sessions).
      await client.query('set local max_parallel_workers_per_gather = 0');
      // The checkpoint row locked first: a second rebuild cannot run (the rebuild lock), but the row must still say zero.
      const { rows } = await client.query<{ position: string }>('select position from projection_checkpoints where name = $1 for update', [checkpointName]);
      if (rows.length !== 1 || rows[0].position !== '0' || !(await shadowsEmpty(client, projection))) {
        await client.query('rollback');
        return 0;
      }
      checking = checkEvents(pool, folder.oddEventsSql, head);
      const fold = await folder.fold(projectionContext(client, projection, shadowTableName), head);
      const check = await checking;
      if (check.failedWith !== undefined) return await decline(`its check of the events failed (SQLSTATE ${check.failedWith})`);
      if (check.odd !== undefined) return await decline(check.odd);
      if (fold.outcome === 'declined') return await decline(fold.reason);
      await client.query(`update projection_checkpoints set position = $2, events_processed = $3, updated_at = now() where name = $1`, [
        checkpointName,
        head.toString(),
        check.events.toString(),
      ]);
      await client.query('commit');
      return check.events;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      await checking;
      if (isConnectionError(error)) throw error;
      logger?.warn(`${projection.name}: the fold in the database failed (SQLSTATE ${sqlState(error)}); the log is replayed through the page path`);
      return 0;
    }
  } catch (error) {
    clean = false;
    throw error;
  } finally {
    client.release(clean ? undefined : true);
  }
}

interface CheckOutcome {
  readonly events: number;
  /** The first case counted above zero. */
  readonly odd: string | undefined;
  /** The SQLSTATE of a check that failed (a time that does not parse, say). */
  readonly failedWith: string | undefined;
}

/** Runs DatabaseFolder.oddEventsSql on a session of the pool; never rejects. */
async function checkEvents(pool: pg.Pool, sql: string, upToPosition: bigint): Promise<CheckOutcome> {
  try {
    const client = await pool.connect();
    try {
      await client.query('begin read only');
      await client.query('set local max_parallel_workers_per_gather = 0');
      const { rows } = await client.query<Record<string, string>>(sql, [upToPosition.toString()]);
      await client.query('commit');
      const { events, ...counts } = rows[0];
      return { events: Number(events), odd: Object.entries(counts).find(([, count]) => Number(count) > 0)?.[0], failedWith: undefined };
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } catch (error) {
    return { events: 0, odd: undefined, failedWith: sqlState(error) };
  }
}

function sqlState(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'unknown';
}

async function shadowsEmpty(client: pg.PoolClient, projection: Projection): Promise<boolean> {
  for (const table of projection.tables) {
    const { rows } = await client.query(`select 1 from ${shadowTableName(table)} limit 1`);
    if (rows.length > 0) return false;
  }
  return true;
}
