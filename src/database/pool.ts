import pg from 'pg';
import { parse } from 'pg-connection-string';
import { keepPoolClientErrorsHandled } from './connection-errors.js';

/** Injection token of the process's `pg.Pool`. */
export const PG_POOL = Symbol('PgPool');

/**
 * Every statement this service prepares (`prepared`, the list's named statements, the append
 * functions' PL/pgSQL) finds its rows through an index whatever its parameters, so one generic plan
 * per connection serves every call. Left to `auto`, PostgreSQL plans a statement whose generic plan
 * it estimates dearer than its custom ones afresh on every call, and a `limit $n offset $m` is such
 * a statement: the generic plan assumes a tenth of the table. The list of verifications was
 * replanned on each request, its planning costing more than its run: pgbench of the list statement
 * (100,000 rows, 20 connections) on a 2-core virtual machine ran 13,900 calls/s under `auto` and
 * 33,100 with generic plans. The list's current figures, each with its machine: docs/benchmarks.md.
 */
const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';

/**
 * A session of this service that began a transaction and then went quiet for this long (a process
 * frozen or partitioned between two statements) is ended by PostgreSQL, and its transaction rolled
 * back: on the PostgreSQL event log, an open transaction that has written anything holds back what
 * every subscriber, projection and read-your-writes wait sees (docs/architecture.md). The service's
 * own transactions go from one statement to the next without waiting on anything else; the longest
 * pause between two is a KMS call of the maintenance commands, well under this. The cluster-wide
 * setting for every other session is an operator's (docs/operations.md).
 */
export const IDLE_IN_TRANSACTION_TIMEOUT = '60s';
const SESSION_OPTIONS = `${GENERIC_PLANS} -c idle_in_transaction_session_timeout=${IDLE_IN_TRANSACTION_TIMEOUT}`;

/**
 * The pool's connection: the URL, and as options those of the URL, if it has any, then ours. pg
 * lets a URL's `options` replace the ones it is given, so they move out of the URL.
 */
export function poolConnection(connectionString: string): { connectionString: string; options: string } {
  const ofUrl = parse(connectionString).options;
  if (ofUrl === undefined || ofUrl === '') return { connectionString, options: SESSION_OPTIONS };
  const url = new URL(connectionString);
  url.searchParams.delete('options');
  return { connectionString: url.toString(), options: `${ofUrl} ${SESSION_OPTIONS}` };
}

/**
 * How long a connection stays in the pool unused. With pg's default, 10 s, a lull of that length
 * closed every connection, and the requests after it paid for new ones, up to `max` at once: a
 * server process started for each, a SCRAM authentication on both sides, and every statement
 * prepared and planned again on it; at a moderate rate, the connections used only in bursts were
 * closed and opened again all along. With two minutes, bench:api's paced phase after a lull opens
 * next to no new connections (docs/benchmarks.md).
 */
export const POOL_IDLE_TIMEOUT_MS = 120_000;

/**
 * The pool of a process of the service (the API, the projections, the audit): at most `max`
 * connections, kept through lulls, generic plans, a bound on a transaction left idle, and a lost
 * connection that never crashes the process.
 */
export function createPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({ ...poolConnection(connectionString), max, idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS, connectionTimeoutMillis: 5_000 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  keepPoolClientErrorsHandled(pool);
  return pool;
}
