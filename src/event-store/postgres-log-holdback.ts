import type pg from 'pg';

/** Events counted behind the visible bound, at most (a status read stays cheap however long the hold). */
export const MAX_COUNTED_HELD_BACK_EVENTS = 10_000;

/** The transaction that holds the PostgreSQL log's visible bound: a session's, or a prepared (two-phase) one. */
export type LogHolder =
  | {
      readonly kind: 'backend';
      readonly pid: number;
      readonly database: string | null;
      readonly applicationName: string | null;
      /** pg_stat_activity's state: `idle in transaction` is a session that began, wrote and went quiet. */
      readonly state: string | null;
      /** How long its transaction has been open. */
      readonly transactionSeconds: number | null;
      /** How many transaction ids were handed out since it took its own (age(backend_xid)). */
      readonly xidAge: number;
    }
  | {
      readonly kind: 'prepared';
      readonly gid: string;
      readonly database: string;
      readonly transactionSeconds: number;
      readonly xidAge: number;
    };

/**
 * Whether the PostgreSQL log is held back: events committed at or above the visible bound
 * (migration 1732250000000), which no reader returns until the oldest transaction still running
 * in the cluster ends. A normal append holds it for milliseconds; an open transaction that wrote
 * anything anywhere in the cluster (a session idle in transaction, a prepared transaction nobody
 * committed) holds it until it ends, and with it every subscriber, projection and read-your-writes.
 */
export interface LogHoldback {
  /** The newest committed position: what subscribers will reach once the hold ends. */
  readonly newestPosition: bigint;
  readonly visibleBound: bigint;
  /** Committed events at or above the bound (counted up to MAX_COUNTED_HELD_BACK_EVENTS). */
  readonly heldBackEvents: number;
  /** How long the oldest of them has waited; 0 when none. */
  readonly heldBackSeconds: number;
  /** The transaction whose id is the bound's; null when none is found (it just ended). */
  readonly holder: LogHolder | null;
}

interface Row {
  newest: string | null;
  bound: string;
  held: string;
  held_seconds: number | null;
  pid: number | null;
  datname: string | null;
  application_name: string | null;
  state: string | null;
  transaction_seconds: number | null;
  xid_age: number | null;
  gid: string | null;
  prepared_database: string | null;
  prepared_seconds: number | null;
  prepared_xid_age: number | null;
}

/**
 * Reads the hold in one statement (an index probe at each end of the log, a bounded range scan,
 * and the two catalogue views). Other users' sessions show their pid only unless the service's role
 * has pg_read_all_stats.
 */
export async function readLogHoldback(pool: Pick<pg.Pool, 'query'>): Promise<LogHoldback> {
  const { rows } = await pool.query<Row>(
    `with snap as (select events_visible_bound() as bound, pg_snapshot_xmin(pg_current_snapshot()) as xmin),
     held as (
       select count(*) as held, min(created_at) as since from (
         select created_at from events where position >= (select bound from snap) order by position limit ${MAX_COUNTED_HELD_BACK_EVENTS}
       ) h
     ),
     backend as (
       select a.pid, a.datname, a.application_name, a.state, extract(epoch from clock_timestamp() - a.xact_start)::float8 as transaction_seconds,
              age(a.backend_xid) as xid_age
       from pg_stat_activity a where a.backend_xid = (select xmin::xid from snap) limit 1
     ),
     prepared as (
       select p.gid, p.database, extract(epoch from clock_timestamp() - p.prepared)::float8 as prepared_seconds, age(p.transaction) as prepared_xid_age
       from pg_prepared_xacts p where p.transaction = (select xmin::xid from snap) limit 1
     )
     select (select max(position) from events)::text as newest, (select bound from snap)::text as bound, held.held::text as held,
            extract(epoch from clock_timestamp() - held.since)::float8 as held_seconds,
            backend.pid, backend.datname, backend.application_name, backend.state, backend.transaction_seconds, backend.xid_age,
            prepared.gid, prepared.database as prepared_database, prepared.prepared_seconds, prepared.prepared_xid_age
     from held left join backend on true left join prepared on true`,
  );
  const row = rows[0];
  const heldBackEvents = Number(row.held);
  let holder: LogHolder | null = null;
  if (row.pid !== null) {
    holder = {
      kind: 'backend',
      pid: row.pid,
      database: row.datname,
      applicationName: row.application_name,
      state: row.state,
      transactionSeconds: row.transaction_seconds,
      xidAge: Number(row.xid_age ?? 0),
    };
  } else if (row.gid !== null) {
    holder = { kind: 'prepared', gid: row.gid, database: row.prepared_database ?? '', transactionSeconds: row.prepared_seconds ?? 0, xidAge: Number(row.prepared_xid_age ?? 0) };
  }
  return {
    newestPosition: row.newest === null ? 0n : BigInt(row.newest),
    visibleBound: BigInt(row.bound),
    heldBackEvents,
    heldBackSeconds: heldBackEvents === 0 ? 0 : Math.max(0, row.held_seconds ?? 0),
    holder,
  };
}

/** One sentence for logs, health and status: how long, how many events, and who holds the log. */
export function describeHoldback(holdback: LogHoldback): string {
  const who = holder(holdback.holder) ?? 'a transaction that has just ended';
  return `the PostgreSQL event log has been held back for ${holdback.heldBackSeconds.toFixed(1)} s (${holdback.heldBackEvents}${
    holdback.heldBackEvents >= MAX_COUNTED_HELD_BACK_EVENTS ? '+' : ''
  } committed events not yet visible) by ${who}`;
}

function holder(held: LogHolder | null): string | undefined {
  if (held === null) return undefined;
  if (held.kind === 'prepared') return `prepared transaction "${held.gid}" in database ${held.database} (prepared ${held.transactionSeconds.toFixed(0)} s ago)`;
  const parts = [held.state, held.database === null ? undefined : `database ${held.database}`, held.applicationName ? `application "${held.applicationName}"` : undefined]
    .filter((part) => part !== undefined && part !== null)
    .join(', ');
  return `backend pid ${held.pid}${parts === '' ? '' : ` (${parts}${held.transactionSeconds === null ? '' : `, transaction open ${held.transactionSeconds.toFixed(0)} s`})`}`;
}
