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

/** Sessions the fold writes on side by side, each a part of the projection's keys: one per core of the machines measured. */
const FOLD_PARTS = 2;

/**
 * A rebuild's start on the PostgreSQL log: folds the log up to its visible head into the empty
 * shadow tables inside PostgreSQL (Projection.foldInDatabase) and sets the shadow checkpoint to
 * that head, so that the runner replays only what came after. Answers the events folded: 0 when
 * the projection has no fold, the store is not PostgreSQL, the shadow is not empty, or the fold
 * declined or failed (then nothing is kept and the page path replays the whole log, as without the
 * fold; a failure is logged by its SQLSTATE only, as its message may quote a value from the log).
 *
 * The fold writes FOLD_PARTS parts of the projection's keys at once, each on a session and in a
 * transaction of its own, while the check of the events (DatabaseFolder.oddEventsSql) runs on
 * another: nothing is committed until all have succeeded; then the other parts commit, and the
 * first part's transaction, which sees their rows, finishes the fold (totals) and sets the
 * checkpoint. Should it fail after the others committed, the shadow tables are emptied; should the
 * process die there, the next run finds the checkpoint still at zero and starts over.
 *
 * The head is read before the fold starts: every event at or below it lies below the log's visible
 * bound, so every transaction that could write one has ended, and the fold's snapshots, taken after,
 * see all of them; what is committed later lies above it and is the runner's. The transactions take
 * a transaction id only once their statements write, which is after their sorts, and hold it while
 * the rows go in (about a second per 500,000 rows): that long, they hold back the log's visible
 * bound for every subscriber, as a large append does.
 */
export async function foldIntoShadow(pool: pg.Pool, store: EventStore, projection: Projection, logger: RunnerLog | undefined): Promise<number> {
  const folder = projection.foldInDatabase;
  if (store.kind !== 'postgres' || folder === undefined) return 0;
  const head = await store.headPosition();
  if (head === 0n) return 0;
  const checkpointName = rebuildCheckpointName(projection.name);
  const sessions: pg.PoolClient[] = [];
  const broken = new Set<pg.PoolClient>();
  const onEach = (statement: string) =>
    Promise.all(
      sessions.map((session) =>
        session.query(statement).catch((error: unknown) => {
          broken.add(session);
          throw error;
        }),
      ),
    );
  let othersCommitted = false;
  try {
    for (let part = 0; part < FOLD_PARTS; part++) sessions.push(await pool.connect());
    const [main] = sessions;
    await onEach('begin');
    await onEach(`set local work_mem = '${FOLD_WORK_MEM}'`);
    // One session per statement: the CPU of the sessions is the fold's whole cost (parallel workers would take the cores the parts and the check run on, and hide from a count of sessions).
    await onEach('set local max_parallel_workers_per_gather = 0');
    // The checkpoint row locked first: a second rebuild cannot run (the rebuild lock), but the row must still say zero.
    const { rows } = await main.query<{ position: string }>('select position from projection_checkpoints where name = $1 for update', [checkpointName]);
    if (rows.length !== 1 || rows[0].position !== '0' || !(await shadowsEmpty(main, projection))) {
      await onEach('rollback');
      return 0;
    }
    const checking = checkEvents(pool, folder.oddEventsSql, head);
    const folds = await Promise.allSettled(sessions.map((session, part) => folder.fold(projectionContext(session, projection, shadowTableName), head, part, FOLD_PARTS)));
    const check = await checking;
    const failure = folds.find((fold): fold is PromiseRejectedResult => fold.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
    const declined = folds.find((fold) => fold.status === 'fulfilled' && fold.value.outcome === 'declined');
    const reason =
      check.failedWith !== undefined
        ? `its check of the events failed (SQLSTATE ${check.failedWith})`
        : (check.odd ?? (declined?.status === 'fulfilled' && declined.value.outcome === 'declined' ? declined.value.reason : undefined));
    if (reason !== undefined) {
      await onEach('rollback');
      logger?.warn(`${projection.name}: the log is replayed through the page path, not folded in the database: ${reason}`);
      return 0;
    }
    await Promise.all(sessions.slice(1).map((session) => session.query('commit')));
    othersCommitted = true;
    await folder.finish?.(projectionContext(main, projection, shadowTableName));
    await main.query(`update projection_checkpoints set position = $2, events_processed = $3, updated_at = now() where name = $1`, [checkpointName, head.toString(), check.events.toString()]);
    await main.query('commit');
    return check.events;
  } catch (error) {
    await Promise.all(sessions.map((session) => session.query('rollback').catch(() => broken.add(session))));
    if (othersCommitted) await emptyShadows(pool, projection);
    if (isConnectionError(error)) throw error;
    logger?.warn(`${projection.name}: the fold in the database failed (SQLSTATE ${sqlState(error)}); the log is replayed through the page path`);
    return 0;
  } finally {
    // A session whose statement failed on a broken connection is ended, not given back.
    for (const session of sessions) session.release(broken.has(session) ? true : undefined);
  }
}

async function emptyShadows(pool: pg.Pool, projection: Projection): Promise<void> {
  await pool.query(`truncate ${projection.tables.map(shadowTableName).join(', ')}`);
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
