import type pg from 'pg';
import type { EventStore } from '../../src/event-store/event-store.port.js';
import { describeHoldback, type LogHolder } from '../../src/event-store/postgres-log-holdback.js';
import type { Projection } from '../projection.js';
import { decodeBeacon, LOCK_NAMESPACE, lockKeySql, rebuildCheckpointName } from '../runner/locks.js';

/** Lag in events is counted up to this bound, so that a status call stays cheap on any log. */
export const MAX_COUNTED_LAG_EVENTS = 1_000_000;

export type ProjectionState = 'running' | 'catching_up' | 'held_back' | 'rebuilding' | 'stopped' | 'idle';

export interface ProjectionStatus {
  readonly name: string;
  readonly state: ProjectionState;
  /** The checkpoint: the last position applied. Positions are strings (64-bit). */
  readonly position: string;
  /** The newest event visible to subscribers (on PostgreSQL, below the visible bound). */
  readonly headPosition: string;
  /** The newest event written: on PostgreSQL, above headPosition while the log is held back. Lag is measured against it. */
  readonly newestPosition: string;
  /** This projection's events after its checkpoint up to the newest written; null when the store cannot count them. */
  readonly lagEvents: number | null;
  /** True when lagEvents hit MAX_COUNTED_LAG_EVENTS (the real lag is at least that). */
  readonly lagEventsCapped: boolean;
  /** Age of the oldest event not applied yet; 0 when caught up. */
  readonly lagSeconds: number;
  /** Over the active worker's sliding window; null when no worker holds the projection. */
  readonly eventsPerSecond: number | null;
  readonly eventsProcessed: number;
  readonly updatedAt: string | null;
  /** The process running it (its OS pid, and the PostgreSQL backend holding the lock). */
  readonly worker: { readonly pid: number | null; readonly backendPid: number } | null;
  readonly error: { readonly message: string; readonly failedPosition: string | null } | null;
  readonly rebuild: { readonly position: string; readonly lagEvents: number | null; readonly active: boolean } | null;
  /**
   * PostgreSQL only: committed events wait behind the visible bound, held by the oldest open
   * transaction in the cluster (how long, how many, and which backend or prepared transaction);
   * null when nothing is held back. The same for every projection.
   */
  readonly logHeldBack: {
    readonly seconds: number;
    readonly events: number;
    /** The bound (positions below it are visible): the newest written is `newestPosition`. */
    readonly visibleBound: string;
    readonly holder: LogHolder | null;
    readonly description: string;
  } | null;
}

interface CheckpointRow {
  name: string;
  position: string;
  events_processed: string;
  updated_at: Date;
  state: string;
  error: string | null;
  failed_position: string | null;
}

interface HolderRow {
  namespace: number;
  name: string;
  backend_pid: number;
  application_name: string | null;
}

/**
 * Reads the status of each projection from the database alone (checkpoints, advisory locks and
 * the workers' published figures in pg_stat_activity), so that any process, the API included,
 * reports workers that run elsewhere.
 */
/** The sessions holding each projection's active and rebuild locks. */
async function lockHolders(pool: pg.Pool, names: readonly string[]): Promise<pg.QueryResult<HolderRow>> {
  return pool.query<HolderRow>(
    `select l.classid::int as namespace, n.name, a.pid as backend_pid, a.application_name
     from unnest($1::text[]) as n(name)
     join pg_locks l on l.locktype = 'advisory' and l.granted and l.objsubid = 2
       and l.classid in (${LOCK_NAMESPACE.active}, ${LOCK_NAMESPACE.rebuild})
       and l.objid = oid(${lockKeySql('n.name')}::bigint & 4294967295)
       and l.database = (select oid from pg_database where datname = current_database())
     join pg_stat_activity a on a.pid = l.pid`,
    [names],
  );
}

/**
 * Which worker process (its pid, from its lock session's beacon) runs each projection: the cheap
 * part of the status, without the lag, whose cost depends on the event store.
 */
export async function readActiveWorkers(pool: pg.Pool, projections: readonly Projection[]): Promise<Map<string, number | null>> {
  const holders = await lockHolders(
    pool,
    projections.map((projection) => projection.name),
  );
  const workers = new Map<string, number | null>();
  for (const row of holders.rows) {
    if (row.namespace === LOCK_NAMESPACE.active) workers.set(row.name, decodeBeacon(row.application_name)?.pid ?? null);
  }
  return workers;
}

export async function readProjectionStatus(pool: pg.Pool, store: EventStore, projections: readonly Projection[]): Promise<ProjectionStatus[]> {
  const names = projections.map((projection) => projection.name);
  const checkpointNames = names.flatMap((name) => [name, rebuildCheckpointName(name)]);
  const [head, checkpoints, holders, holdback] = await Promise.all([
    store.headPosition(),
    pool.query<CheckpointRow>('select * from projection_checkpoints where name = any($1::text[])', [checkpointNames]),
    lockHolders(pool, names),
    store.logReader?.holdback() ?? Promise.resolve(null),
  ]);
  // Lag is measured against the newest event written, not the visible bound: a held-back log must not read as "lag 0".
  const newest = holdback !== null && holdback.newestPosition > head ? holdback.newestPosition : head;
  const logHeldBack =
    holdback !== null && holdback.heldBackEvents > 0
      ? {
          seconds: holdback.heldBackSeconds,
          events: holdback.heldBackEvents,
          visibleBound: holdback.visibleBound.toString(),
          holder: holdback.holder,
          description: describeHoldback(holdback),
        }
      : null;
  const byName = new Map(checkpoints.rows.map((row) => [row.name, row]));

  return Promise.all(
    projections.map(async (projection): Promise<ProjectionStatus> => {
      const live = byName.get(projection.name);
      const rebuildRow = byName.get(rebuildCheckpointName(projection.name));
      const position = live === undefined ? 0n : BigInt(live.position);
      const activeHolder = holders.rows.find((row) => row.name === projection.name && row.namespace === LOCK_NAMESPACE.active);
      const rebuildActive = holders.rows.some((row) => row.name === projection.name && row.namespace === LOCK_NAMESPACE.rebuild);
      const beacon = decodeBeacon(activeHolder?.application_name ?? null);
      const [lag, rebuildLag] = await Promise.all([
        lagOf(pool, store, projection, position, { newest, head }),
        rebuildRow === undefined ? undefined : lagOf(pool, store, projection, BigInt(rebuildRow.position), { newest, head }, rebuildCheckpointName(projection.name)),
      ]);

      let state: ProjectionState;
      if (rebuildActive) state = 'rebuilding';
      else if (live?.state === 'stopped') state = 'stopped';
      else if (activeHolder === undefined) state = 'idle';
      else if (lag.events !== 0 && logHeldBack !== null && position >= head) state = 'held_back';
      else state = lag.events === 0 ? 'running' : beacon?.state === 'running' && (lag.events ?? 0) < 100 ? 'running' : 'catching_up';

      return {
        name: projection.name,
        state,
        position: position.toString(),
        headPosition: head.toString(),
        newestPosition: newest.toString(),
        lagEvents: lag.events,
        lagEventsCapped: lag.capped,
        lagSeconds: lag.seconds,
        eventsPerSecond: activeHolder === undefined ? null : (beacon?.eventsPerSecond ?? null),
        eventsProcessed: live === undefined ? 0 : Number(live.events_processed),
        updatedAt: live?.updated_at.toISOString() ?? null,
        worker: activeHolder === undefined ? null : { pid: beacon?.pid ?? null, backendPid: activeHolder.backend_pid },
        error: live?.state === 'stopped' ? { message: live.error ?? 'unknown', failedPosition: live.failed_position } : null,
        rebuild: rebuildRow === undefined ? null : { position: BigInt(rebuildRow.position).toString(), lagEvents: rebuildLag?.events ?? null, active: rebuildActive },
        logHeldBack,
      };
    }),
  );
}

interface Lag {
  readonly events: number | null;
  readonly capped: boolean;
  readonly seconds: number;
}

/**
 * What an earlier status read of this process counted of a projection's events on the PostgreSQL
 * log: from `position` (its checkpoint then) up to `countedTo`, a position no higher than the
 * visible head then, below which no event can still appear (every transaction below the visible
 * bound has ended). While the checkpoint stays where it was, the next read counts only the events
 * after `countedTo`. Without it, a projection of a rare category (organizations, api-keys), whose
 * checkpoint stays at its last event, had every event written since scanned at each read: a
 * backend's time per count growing with the log, every 10 s (the console's lag samples), which
 * stalled the checks running beside it.
 */
interface CountedLag {
  readonly position: bigint;
  readonly countedTo: bigint;
  readonly events: number;
  readonly oldest: Date | null;
}

/** Per pool (one database), per checkpoint name: one entry per projection and rebuild, so bounded. */
const countedLags = new WeakMap<object, Map<string, CountedLag>>();

/**
 * The projection's events after `position` up to `log.newest`: with the store's log reader (the
 * PostgreSQL log) counted (bounded) and aged in SQL (LogReader.pendingEvents), whether or not they
 * are visible yet (a held-back log is lag), continuing the count of the read before when the
 * checkpoint (`checkpointName`'s) has not moved since; without one (EventStoreDB) aged from the
 * first one a read returns.
 */
export async function lagOf(
  pool: pg.Pool,
  store: EventStore,
  projection: Projection,
  position: bigint,
  log: { readonly newest: bigint; readonly head: bigint },
  checkpointName: string = projection.name,
): Promise<Lag> {
  const { newest, head } = log;
  if (position >= newest) return { events: 0, capped: false, seconds: 0 };
  const categories = [...projection.categories];
  const reader = store.logReader;
  if (reader === undefined) {
    const [oldest] = await store.readAll({ fromPosition: position, maxCount: 1, filter: { streamCategories: categories } });
    if (oldest === undefined || oldest.position > newest) return { events: 0, capped: false, seconds: 0 };
    return { events: null, capped: false, seconds: Math.max(0, (Date.now() - oldest.createdAt.getTime()) / 1000) };
  }
  let counted = countedLags.get(pool);
  if (counted === undefined) countedLags.set(pool, (counted = new Map<string, CountedLag>()));
  const before = counted.get(checkpointName);
  const continued = before !== undefined && before.position === position && before.countedTo <= newest ? before : undefined;
  const from = continued?.countedTo ?? position;
  const pending = await reader.pendingEvents(categories, { from, newest, head, limit: MAX_COUNTED_LAG_EVENTS });
  const found = pending.count;
  const earlier = continued?.events ?? 0;
  const oldest = earlier > 0 ? (continued?.oldest ?? null) : pending.oldest;
  // A scan cut short by its bound leaves the count unfinished: nothing is kept from it.
  if (found < MAX_COUNTED_LAG_EVENTS && head > from) {
    counted.set(checkpointName, { position, countedTo: head, events: earlier + pending.settled, oldest: earlier > 0 ? oldest : pending.settledOldest });
  } else if (found >= MAX_COUNTED_LAG_EVENTS) {
    counted.delete(checkpointName);
  }
  const events = Math.min(earlier + found, MAX_COUNTED_LAG_EVENTS);
  if (events === 0 || oldest === null) return { events: 0, capped: false, seconds: 0 };
  return { events, capped: events >= MAX_COUNTED_LAG_EVENTS, seconds: Math.max(0, (Date.now() - oldest.getTime()) / 1000) };
}
