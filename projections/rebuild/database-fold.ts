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
 * log, as without the fold; a failure is logged by its SQLSTATE only, as its message may quote
 * a value from the log).
 *
 * The head is read before the fold starts: every event at or below it lies below the log's visible
 * bound, so every transaction that could write one has ended, and the fold's snapshot, taken after,
 * sees all of them; what is committed later lies above it and is the runner's. The transaction
 * holds a transaction id only once its statements write, which is after their sorts, for the time
 * the rows take to go in (about a second per 500,000 rows): that long, it holds back the log's
 * visible bound for every subscriber, as any long append does.
 */
export async function foldIntoShadow(pool: pg.Pool, store: EventStore, projection: Projection, logger: RunnerLog | undefined): Promise<number> {
  if (store.kind !== 'postgres' || projection.foldInDatabase === undefined) return 0;
  const head = await store.headPosition();
  if (head === 0n) return 0;
  const checkpointName = rebuildCheckpointName(projection.name);
  const client = await pool.connect();
  let clean = true;
  try {
    await client.query('begin');
    try {
      await client.query(`set local work_mem = '${FOLD_WORK_MEM}'`);
      // One session does the work: its CPU is the fold's whole cost (parallel workers would take the other core from the runner of another rebuild, and hide from a count of sessions).
      await client.query('set local max_parallel_workers_per_gather = 0');
      // The checkpoint row locked first: a second rebuild cannot run (the rebuild lock), but the row must still say zero.
      const { rows } = await client.query<{ position: string }>('select position from projection_checkpoints where name = $1 for update', [checkpointName]);
      if (rows.length !== 1 || rows[0].position !== '0' || !(await shadowsEmpty(client, projection))) {
        await client.query('rollback');
        return 0;
      }
      const fold = await projection.foldInDatabase(projectionContext(client, projection, shadowTableName), head);
      if (fold.outcome === 'declined') {
        await client.query('rollback');
        logger?.warn(`${projection.name}: the log is replayed through the page path, not folded in the database: ${fold.reason}`);
        return 0;
      }
      await client.query(`update projection_checkpoints set position = $2, events_processed = $3, updated_at = now() where name = $1`, [
        checkpointName,
        head.toString(),
        fold.events.toString(),
      ]);
      await client.query('commit');
      return fold.events;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      if (isConnectionError(error)) throw error;
      const code = (error as { code?: unknown }).code;
      logger?.warn(`${projection.name}: the fold in the database failed (SQLSTATE ${typeof code === 'string' ? code : 'unknown'}); the log is replayed through the page path`);
      return 0;
    }
  } catch (error) {
    clean = false;
    throw error;
  } finally {
    client.release(clean ? undefined : true);
  }
}

async function shadowsEmpty(client: pg.PoolClient, projection: Projection): Promise<boolean> {
  for (const table of projection.tables) {
    const { rows } = await client.query(`select 1 from ${shadowTableName(table)} limit 1`);
    if (rows.length > 0) return false;
  }
  return true;
}
