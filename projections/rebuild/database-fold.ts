import type pg from 'pg';
import { isConnectionError } from '../../src/database/connection-errors.js';
import type { EventStore, SqlRunner } from '../../src/event-store/event-store.port.js';
import type { DatabaseFolder, Projection } from '../projection.js';
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
 * How long the fold waits for a session beyond its first (for the check, or a part): without one
 * it checks first on its own session, or writes fewer parts. Folds of several projections at once
 * (`--all`) on a small pool must not each hold a session while waiting for another.
 */
const SPARE_SESSION_WAIT_MS = 500;

/**
 * A rebuild's start on a store with a log reader (the PostgreSQL log): folds the log up to its
 * visible head into the empty shadow tables inside PostgreSQL (Projection.foldInDatabase, with the
 * reader's LogFolds) and sets the shadow checkpoint to that head, so that the runner replays only
 * what came after. Answers the events folded: 0 when the projection has no fold, the store has no
 * log reader, the shadow is not empty, or the fold
 * declined or failed (then nothing is kept and the page path replays the whole log, as without the
 * fold; a failure is logged by its SQLSTATE only, as its message may quote a value from the log).
 *
 * The fold writes up to FOLD_PARTS parts of the projection's keys at once, each on a session and in
 * a transaction of its own, while the check of the events (DatabaseFolder.oddEvents) runs on
 * another: nothing is committed until all have succeeded; then the other parts commit, and the
 * first part's transaction, which sees their rows, finishes the fold (totals) and sets the
 * checkpoint. Should it fail after the others committed, the shadow tables are emptied; should the
 * process die there, the next run finds the checkpoint still at zero and starts over.
 *
 * The head is read before the fold starts: every event at or below it lies below the log's visible
 * bound, so every transaction that could write one has ended, and the fold's snapshots, taken after,
 * see all of them; what is committed later lies above it and is the runner's. The transactions take
 * a transaction id only once their statements write, which is after their sorts, and hold it while
 * the rows go in and until all parts are done: that long, they hold back the log's visible bound for
 * every subscriber, as a large append does (bench:projections times the rebuild: docs/benchmarks.md).
 */
export async function foldIntoShadow(pool: pg.Pool, store: EventStore, projection: Projection, logger: RunnerLog | undefined): Promise<number> {
  const folds = store.logReader?.folds;
  const folder = folds === undefined ? undefined : projection.foldInDatabase?.(folds);
  if (folder === undefined) return 0;
  const head = await store.headPosition();
  if (head === 0n) return 0;
  const checkpointName = rebuildCheckpointName(projection.name);
  const declined = (reason: string) => {
    logger?.warn(`${projection.name}: the log is replayed through the page path, not folded in the database: ${reason}`);
    return 0;
  };
  const sessions: pg.PoolClient[] = [];
  let checkSession: pg.PoolClient | undefined;
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
    sessions.push(await pool.connect());
    checkSession = await spareSession(pool);
    for (let part = 1; part < FOLD_PARTS; part++) {
      const session = await spareSession(pool);
      if (session === undefined) break;
      sessions.push(session);
    }
    const [main] = sessions;
    // Without a session to spare for it, the check runs first, on the fold's own.
    const checkedFirst = checkSession === undefined ? await checkEvents(main, folder, head) : undefined;
    const checkRefusal = checkedFirst === undefined ? undefined : refusalOf(checkedFirst);
    if (checkRefusal !== undefined) return declined(checkRefusal);
    await onEach('begin');
    await onEach(`set local work_mem = '${FOLD_WORK_MEM}'`);
    // One session per statement: the CPU of the sessions is the fold's whole cost (parallel workers would take the cores the parts and the check run on, and hide from a count of sessions).
    await onEach('set local max_parallel_workers_per_gather = 0');
    // Read, not locked: a lock would take a transaction id now, and hold back the log's visible bound for the whole fold. No
    // second rebuild runs (the rebuild lock); the checkpoint's update below is guarded by its position all the same.
    const { rows } = await main.query<{ position: string }>('select position from projection_checkpoints where name = $1', [checkpointName]);
    if (rows.length !== 1 || rows[0].position !== '0' || !(await shadowsEmpty(main, projection))) {
      await onEach('rollback');
      return 0;
    }
    const checking = checkedFirst === undefined && checkSession !== undefined ? checkEvents(checkSession, folder, head) : undefined;
    const folds = await Promise.allSettled(sessions.map((session, part) => folder.fold(projectionContext(session, projection, shadowTableName), head, part, sessions.length)));
    const check = checkedFirst ?? (await checking);
    if (check === undefined) throw new Error("invariant: the fold's check of the events did not run");
    const failure = folds.find((fold): fold is PromiseRejectedResult => fold.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
    const foldRefusal = folds
      .map((fold) => (fold.status === 'fulfilled' && fold.value.outcome === 'declined' ? fold.value.reason : undefined))
      .find((reason) => reason !== undefined);
    const reason = refusalOf(check) ?? foldRefusal;
    if (reason !== undefined) {
      await onEach('rollback');
      return declined(reason);
    }
    await Promise.all(sessions.slice(1).map((session) => session.query('commit')));
    othersCommitted = true;
    await folder.finish?.(projectionContext(main, projection, shadowTableName));
    const moved = await main.query(`update projection_checkpoints set position = $2, events_processed = $3, updated_at = now() where name = $1 and position = 0`, [
      checkpointName,
      head.toString(),
      check.events.toString(),
    ]);
    if (moved.rowCount !== 1) throw new Error(`invariant: the checkpoint ${checkpointName} moved during the fold`);
    await main.query('commit');
    return check.events;
  } catch (error) {
    await Promise.all(sessions.map((session) => session.query('rollback').catch(() => broken.add(session))));
    if (othersCommitted) await emptyShadows(pool, projection);
    if (isConnectionError(error)) throw error;
    logger?.warn(`${projection.name}: the fold in the database failed (SQLSTATE ${sqlState(error)}); the log is replayed through the page path`);
    return 0;
  } finally {
    // A session whose statement failed (perhaps on a broken connection) is ended, not given back.
    for (const session of sessions) session.release(broken.has(session) ? true : undefined);
    checkSession?.release();
  }
}

/** A session of the pool if one comes within SPARE_SESSION_WAIT_MS; a late one is given back as it comes. */
async function spareSession(pool: pg.Pool): Promise<pg.PoolClient | undefined> {
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolveLate) => (timer = setTimeout(() => resolveLate(undefined), SPARE_SESSION_WAIT_MS)));
  const session = await Promise.race([connecting.catch(() => undefined), late]);
  clearTimeout(timer);
  if (session === undefined)
    connecting.then(
      (arrived) => arrived.release(),
      () => undefined,
    );
  return session;
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

function refusalOf(check: CheckOutcome): string | undefined {
  return check.failedWith !== undefined ? `its check of the events failed (SQLSTATE ${check.failedWith})` : check.odd;
}

/** Runs DatabaseFolder.oddEvents on `session` (outside any transaction of it) in a read-only transaction; never rejects. */
async function checkEvents(session: pg.PoolClient, folder: DatabaseFolder, upToPosition: bigint): Promise<CheckOutcome> {
  try {
    await session.query('begin read only');
    try {
      await session.query('set local max_parallel_workers_per_gather = 0');
      const run: SqlRunner = async <T>(sql: string, params?: readonly unknown[]) => (await session.query(sql, params === undefined ? undefined : [...params])).rows as T[];
      const { events, ...counts } = await folder.oddEvents(run, upToPosition);
      await session.query('commit');
      return { events: Number(events), odd: Object.entries(counts).find(([, count]) => Number(count) > 0)?.[0], failedWith: undefined };
    } catch (error) {
      await session.query('rollback').catch(() => undefined);
      throw error;
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
