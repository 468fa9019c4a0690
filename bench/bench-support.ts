import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import pg from 'pg';
import { runMigrations } from '../src/database/data-source.js';
import { dropDatabaseWhenIdle } from '../src/database/drop-database.js';
import { freePort, startEmbeddedPostgres } from '../src/database/embedded-postgres.js';
import { PostgresEventStore } from '../src/event-store/postgres-event-store.js';

/** Progress on stderr, so that stdout carries only the figures. */
export const status = (line: string) => process.stderr.write(`[bench] ${line}\n`);

export const format = (value: number) => Math.round(value).toLocaleString('en-US');

/** An integer size from the environment, within [min, max], or `fallback` when unset. */
export function sizeFromEnv(name: string, fallback: number, bounds: { min: number; max: number }): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) throw new Error(`${name} must be an integer from ${bounds.min} to ${bounds.max}, got "${raw}"`);
  return value;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Runs `work` on a connection to the server's `postgres` database (create and drop the bench's own). */
export async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, migrated database for one bench run, on DATABASE_URL's server or on an ephemeral
 * embedded cluster, with a pool and the PostgreSQL event store on it. Their teardown is pushed
 * onto `cleanups` (run last-in first-out by the caller).
 */
export async function benchDatabase(
  label: string,
  poolSize: number,
  cleanups: (() => Promise<unknown>)[],
  /** Extra pool settings (e.g. idleTimeoutMillis 0, so that no session a measurement counts ends before it is read). */
  poolOptions: Omit<pg.PoolConfig, 'connectionString' | 'max'> = {},
): Promise<{ url: string; pool: pg.Pool; store: PostgresEventStore }> {
  let serverUrl = process.env.DATABASE_URL;
  if (serverUrl === undefined || serverUrl === '') {
    const dataDir = resolve('.data', 'bench', `${label}-${process.pid}`);
    status('PostgreSQL: an ephemeral embedded cluster (set DATABASE_URL to use a server)');
    const handle = await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'postgres', ephemeral: true });
    cleanups.push(
      () => rm(dataDir, { recursive: true, force: true }),
      () => handle.stop(),
    );
    serverUrl = handle.url;
  }
  const server = serverUrl;
  // BENCH_DATABASE names a database kept across runs (created when missing, never dropped here),
  // so that a large log is written once and measured several times; drop it yourself afterwards.
  const kept = process.env.BENCH_DATABASE;
  if (kept !== undefined && kept !== '' && !/^ledger_bench_[a-z0-9_]{1,40}$/.test(kept)) throw new Error('BENCH_DATABASE must match ledger_bench_[a-z0-9_]{1,40}');
  const name = kept !== undefined && kept !== '' ? kept : `ledger_bench_${randomBytes(6).toString('hex')}`;
  if (name === kept) {
    const exists = await admin(server, async (client) => (await client.query('select 1 from pg_database where datname = $1', [name])).rows.length > 0);
    if (!exists) await admin(server, (client) => client.query(`create database ${name}`));
    status(`database ${name} is kept after the run (BENCH_DATABASE): drop it when done`);
  } else {
    await admin(server, (client) => client.query(`create database ${name}`));
    cleanups.push(() => admin(server, (client) => dropDatabaseWhenIdle(client, name)));
  }
  const url = withDatabase(server, name);
  await runMigrations(url);
  const pool = new pg.Pool({ ...poolOptions, connectionString: url, max: poolSize });
  cleanups.push(() => pool.end());
  const store = new PostgresEventStore({ pool, connectionString: url });
  cleanups.push(() => store.close());
  return { url, pool, store };
}

/** Runs the cleanup steps last-in first-out; a failing step is reported and the rest still run. */
export async function runCleanups(cleanups: readonly (() => Promise<unknown>)[]): Promise<void> {
  for (const cleanup of [...cleanups].reverse()) await cleanup().catch((error: unknown) => status(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`));
}

/** The bench's entry point: exit 0 when `main` finishes, 1 with the error on stderr when it fails. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      status(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    },
  );
}
