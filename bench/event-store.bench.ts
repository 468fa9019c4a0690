/**
 * Benchmark of the PostgreSQL event store: `npm run bench:event-store`.
 *
 * 1. Appends: 16 writers, one event per append to a fresh stream (`no_stream`), through
 *    PostgresEventStore and a pool of 16, against pgbench running the very statement the adapter
 *    sends, on the same server in the same run. The ratio says how much the Node side (pg driver,
 *    adapter, event loop) costs on top of the database's own ceiling.
 * 2. Catch-up: at least 200,000 events read from position 0 to the head, through a catch-up
 *    subscription and through readAll pages.
 *
 * PostgreSQL: DATABASE_URL when set (only a database named ledger_bench_* is created and dropped
 * there), else an ephemeral embedded cluster. Progress goes to stderr, the markdown table to stdout.
 * A missed target still exits 0 (this is a benchmark, not a test); an error exits 1.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { freePort, startEmbeddedPostgres } from '../src/database/embedded-postgres.js';
import { runMigrations } from '../src/database/data-source.js';
import type { EventToAppend, JsonObject } from '../src/event-store/event-store.port.js';
import { PostgresEventStore } from '../src/event-store/postgres-event-store.js';
import { format, status, withDatabase } from './bench-support.js';

const WRITERS = 16;
const POOL_SIZE = 16;
const PGBENCH_THREADS = 2;
const APPEND_ROUNDS = 4;
const MIN_LOG_EVENTS = 200_000;
const TOP_UP_EVENTS_PER_APPEND = 100;
const TOP_UP_WRITERS = 4;
const READ_PAGE_EVENTS = 5_000;
const TARGET_RATIO_PERCENT = 70;
const TARGET_READ_EVENTS_PER_SECOND = 50_000;
const BENCH_DATA_DIR = resolve('.data', 'bench');
const PGBENCH_TIMEOUT_GRACE_MS = 30_000;
/** Above this share of the CPU in use before the run, the table warns that the machine was shared. */
const BUSY_WARNING_PERCENT = 20;

interface BenchConfig {
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly databaseUrl: string | undefined;
}

function positiveNumber(name: string, fallback: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > max) throw new Error(`${name} must be a number of seconds above 0 and at most ${max}, got "${raw}"`);
  return value;
}

function loadConfig(): BenchConfig {
  const databaseUrl = process.env.DATABASE_URL;
  return {
    seconds: positiveNumber('BENCH_SECONDS', 20, 600),
    warmupSeconds: positiveNumber('BENCH_WARMUP_SECONDS', 3, 60),
    databaseUrl: databaseUrl === undefined || databaseUrl === '' ? undefined : databaseUrl,
  };
}

const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms));

/** Cleanup steps, run last-in first-out, once, on success, failure or Ctrl-C. */
class Cleanup {
  private readonly steps: { name: string; run: () => Promise<unknown> }[] = [];
  private running: Promise<void> | undefined;

  add(name: string, run: () => Promise<unknown>): void {
    this.steps.push({ name, run });
  }

  runAll(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (error) {
          status(`cleanup "${step.name}" failed: ${error instanceof Error ? error.message : String(error)}`);
          process.exitCode = 1;
        }
      }
    })();
    return this.running;
  }
}

/** A VerificationRequested as the service writes it: same shape and size as the real thing. */
function verificationRequested(writer: number, index: number): EventToAppend {
  const now = new Date().toISOString();
  const reference = `vrf_${randomBytes(10).toString('hex')}`;
  const data: JsonObject = {
    schemaVersion: 1,
    reference,
    organizationId: randomUUID(),
    environment: 'live',
    keyId: `key_${randomBytes(8).toString('hex')}`,
    scope: 'identity.nin.verify',
    category: 'nin',
    countryCode: 'NG',
    request: { nin: String(10_000_000_000 + writer * 1_000_000 + (index % 1_000_000)), firstName: 'Adaeze', lastName: 'Okonkwo', dateOfBirth: '1990-04-12' },
    priceKobo: 10_000,
    requestedAt: now,
  };
  const metadata: JsonObject = {
    correlationId: randomUUID(),
    causationId: null,
    actor: { type: 'api_key', id: `key_${randomBytes(8).toString('hex')}` },
    occurredAt: now,
  };
  return { id: randomUUID(), type: 'VerificationRequested', data, metadata };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: the server, a fresh database, the machine.

interface Server {
  readonly adminUrl: string;
  readonly embedded: boolean;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Clusters left behind by a killed run. */
async function removeStaleClusters(): Promise<void> {
  const entries = await readdir(BENCH_DATA_DIR).catch(() => [] as string[]);
  for (const entry of entries) {
    const pid = Number(entry.replace(/^pg-/, ''));
    if (Number.isInteger(pid) && pid !== process.pid && !processAlive(pid)) await rm(join(BENCH_DATA_DIR, entry), { recursive: true, force: true });
  }
}

async function startServer(config: BenchConfig, cleanup: Cleanup): Promise<Server> {
  if (config.databaseUrl !== undefined) {
    status('PostgreSQL: the server at DATABASE_URL');
    return { adminUrl: config.databaseUrl, embedded: false };
  }
  await removeStaleClusters();
  const dataDir = join(BENCH_DATA_DIR, `pg-${process.pid}`);
  status('PostgreSQL: starting an embedded cluster for this run (set DATABASE_URL to use a server)');
  cleanup.add('remove the embedded cluster directory', () => rm(dataDir, { recursive: true, force: true }));
  const handle = await startEmbeddedPostgres({ dataDir, port: await freePort(), database: 'postgres', ephemeral: true });
  cleanup.add('stop the embedded cluster', () => handle.stop());
  return { adminUrl: handle.url, embedded: true };
}

async function withAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(adminUrl, 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function createBenchDatabase(server: Server, cleanup: Cleanup): Promise<string> {
  const name = `ledger_bench_${randomBytes(6).toString('hex')}`;
  await withAdmin(server.adminUrl, (client) => client.query(`create database ${name}`));
  cleanup.add(`drop database ${name}`, () => withAdmin(server.adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`)));
  const url = withDatabase(server.adminUrl, name);
  await runMigrations(url);
  status(`database ${name} created and migrated`);
  return url;
}

/** Total and idle jiffies of all cores, from /proc/stat; undefined off Linux. */
async function cpuTimes(): Promise<{ total: number; idle: number } | undefined> {
  const line = (await readFile('/proc/stat', 'utf8').catch(() => '')).split('\n')[0];
  if (!line.startsWith('cpu ')) return undefined;
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are idle time.
  return { total: fields.slice(0, 8).reduce((sum, value) => sum + value, 0), idle: fields[3] + fields[4] };
}

/** How busy the machine is before the run starts, as a share of all cores over one second. */
async function busyPercentBeforeRun(): Promise<number | undefined> {
  const before = await cpuTimes();
  await sleep(1_000);
  const after = await cpuTimes();
  if (before === undefined || after === undefined || after.total === before.total) return undefined;
  return (1 - (after.idle - before.idle) / (after.total - before.total)) * 100;
}

interface Machine {
  readonly cores: number;
  readonly cpuModel: string;
  readonly postgres: string;
  readonly durability: string;
  readonly node: string;
}

async function describeMachine(url: string): Promise<Machine> {
  const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  const cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const version = (await client.query<{ server_version: string }>('show server_version')).rows[0].server_version;
    const settings = await client.query<{ name: string; setting: string }>(
      `select name, current_setting(name) as setting from pg_settings where name in ('fsync', 'synchronous_commit', 'wal_sync_method', 'shared_buffers') order by name`,
    );
    const durability = settings.rows.map((row) => `${row.name}=${row.setting}`).join(', ');
    return { cores: cpus().length, cpuModel, postgres: version, durability, node: process.version };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Appends through the adapter.

/** Each writer appends one event to a fresh stream, back to back, until the time is up. */
async function appendFor(store: PostgresEventStore, seconds: number, round: string): Promise<{ appends: number; seconds: number }> {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let appends = 0;
  async function writer(index: number): Promise<void> {
    for (let i = 0; performance.now() < deadline; i++) {
      await store.append(`bench-${round}-${index}-${i}`, [verificationRequested(index, i)], { expectedRevision: 'no_stream' });
      appends++;
    }
  }
  await Promise.all(Array.from({ length: WRITERS }, (_, index) => writer(index)));
  return { appends, seconds: (performance.now() - started) / 1000 };
}

/** pgbench -T takes whole seconds. */
const appendRoundSeconds = (config: BenchConfig) => Math.max(1, Math.round(config.seconds / APPEND_ROUNDS));

interface AppendFigures {
  readonly appendsPerSecond: number;
  /** undefined when pgbench is not installed. */
  readonly pgbenchTps: number | undefined;
}

/**
 * The adapter and pgbench take turns (after a warm-up each), so that a drift of the machine during
 * the run (another process, a checkpoint, a growing table) weighs on both alike.
 */
async function benchAppends(store: PostgresEventStore, url: string, config: BenchConfig, cleanup: Cleanup): Promise<AppendFigures> {
  const pgbench = await preparePgbench(url, cleanup);
  const roundSeconds = appendRoundSeconds(config);
  status(`appends: ${WRITERS} writers, ${config.warmupSeconds} s warm-up, then ${APPEND_ROUNDS} rounds of ${roundSeconds} s, alternating with pgbench`);
  await appendFor(store, config.warmupSeconds, 'warmup');
  if (pgbench !== undefined) await pgbench(config.warmupSeconds);
  let appends = 0;
  let appendSeconds = 0;
  const tpsPerRound: number[] = [];
  for (let round = 1; round <= APPEND_ROUNDS; round++) {
    const ours = await appendFor(store, roundSeconds, `r${round}`);
    appends += ours.appends;
    appendSeconds += ours.seconds;
    const tps = pgbench === undefined ? undefined : await pgbench(roundSeconds);
    if (tps !== undefined) tpsPerRound.push(tps);
    status(`  round ${round}: ${format(ours.appends / ours.seconds)} appends/s, pgbench ${tps === undefined ? 'n/a' : `${format(tps)} tps`}`);
  }
  const appendsPerSecond = appends / appendSeconds;
  // Every pgbench round lasts the same time, so the mean of the rounds is the rate over all of them.
  const pgbenchTps = pgbench === undefined ? undefined : tpsPerRound.reduce((sum, tps) => sum + tps, 0) / tpsPerRound.length;
  status(`appends: ${format(appendsPerSecond)} appends/s, pgbench ${pgbenchTps === undefined ? 'n/a' : `${format(pgbenchTps)} tps`}`);
  return { appendsPerSecond, pgbenchTps };
}

// ---------------------------------------------------------------------------------------------
// pgbench with the same statement.

/** pgbench on PATH, else the newest under /usr/lib/postgresql/<version>/bin (Debian's layout). */
async function findPgbench(): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'pgbench'))) return join(dir, 'pgbench');
  }
  const root = '/usr/lib/postgresql';
  const versions = await readdir(root).catch(() => [] as string[]);
  for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
    const candidate = join(root, version, 'bin', 'pgbench');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The adapter's statement, `select next_revision, last_position from append_events($1, $2, $3)`,
 * with a fresh stream per transaction (client id and a 63-bit random number), a new event id from
 * gen_random_uuid(), and data and metadata of the same shape and size as the adapter's, passed as
 * parameters like the adapter's (pgbench -D variables: a JSON literal in the script itself would
 * be mangled, since pgbench reads `:name` inside quotes as a variable).
 */
function pgbenchScript(): { script: string; variables: string[] } {
  const sample = verificationRequested(0, 0);
  const script = [
    '\\set n random(1, 9000000000000000000)',
    "select next_revision, last_position from append_events('pgbench-' || :client_id || '-' || :n, -1, jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'type', :type::text, 'data', :data::jsonb, 'metadata', :metadata::jsonb)));",
    '',
  ].join('\n');
  const variables = ['-D', `type=${sample.type}`, '-D', `data=${JSON.stringify(sample.data)}`, '-D', `metadata=${JSON.stringify(sample.metadata)}`];
  return { script, variables };
}

function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}

async function runPgbench(pgbench: string, scriptFile: string, variables: string[], url: string, seconds: number): Promise<number> {
  // The password goes in the environment, not on a command line that `ps` shows.
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = '';
  const args = [...variables, '-n', '-M', 'prepared', '-c', String(WRITERS), '-j', String(PGBENCH_THREADS), '-T', String(Math.ceil(seconds)), '-f', scriptFile, parsed.toString()];
  const result = await runProcess(pgbench, args, password === '' ? {} : { PGPASSWORD: password }, seconds * 1000 + PGBENCH_TIMEOUT_GRACE_MS);
  const tps = /^tps = ([\d.]+) \(without initial connection time\)$/m.exec(result.stdout)?.[1];
  if (result.code !== 0 || tps === undefined) {
    const output = `${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`pgbench failed (exit ${String(result.code)}):\n${output}`);
  }
  return Number(tps);
}

/** Writes the script and returns a runner for `seconds` of pgbench, or undefined when pgbench is missing. */
async function preparePgbench(url: string, cleanup: Cleanup): Promise<((seconds: number) => Promise<number>) | undefined> {
  const pgbench = await findPgbench();
  if (pgbench === undefined) {
    status('pgbench: NOT FOUND on PATH nor under /usr/lib/postgresql/*/bin, so the ratio cannot be computed.');
    status('pgbench: install it with `apt-get install postgresql-client` (Debian/Ubuntu) and run again.');
    return undefined;
  }
  const dir = await mkdtemp(join(tmpdir(), 'ledger-bench-'));
  cleanup.add('remove the pgbench script', () => rm(dir, { recursive: true, force: true }));
  const scriptFile = join(dir, 'append.sql');
  const { script, variables } = pgbenchScript();
  await writeFile(scriptFile, script);
  status(`pgbench: ${pgbench}, ${WRITERS} clients, ${PGBENCH_THREADS} threads, prepared statements`);
  return (seconds) => runPgbench(pgbench, scriptFile, variables, url, seconds);
}

// ---------------------------------------------------------------------------------------------
// Catch-up reads.

async function countEvents(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ count: string }>('select count(*) as count from events');
  return Number(rows[0].count);
}

/** Multi-event appends until the log holds at least MIN_LOG_EVENTS. */
async function topUp(store: PostgresEventStore, pool: pg.Pool): Promise<number> {
  const present = await countEvents(pool);
  let missing = MIN_LOG_EVENTS - present;
  if (missing <= 0) return present;
  status(`top-up: ${format(present)} events in the log, appending ${format(missing)} more in appends of ${TOP_UP_EVENTS_PER_APPEND}`);
  const started = performance.now();
  let stream = 0;
  async function writer(index: number): Promise<void> {
    while (missing > 0) {
      const count = Math.min(TOP_UP_EVENTS_PER_APPEND, missing);
      missing -= count;
      const streamId = `bench-bulk-${index}-${stream++}`;
      const events = Array.from({ length: count }, (_, i) => verificationRequested(index, i));
      await store.append(streamId, events, { expectedRevision: 'no_stream' });
    }
  }
  await Promise.all(Array.from({ length: TOP_UP_WRITERS }, (_, index) => writer(index)));
  const total = await countEvents(pool);
  status(`top-up: done in ${((performance.now() - started) / 1000).toFixed(1)} s, ${format(total)} events in the log`);
  return total;
}

interface ReadFigures {
  readonly events: number;
  readonly subscriptionEventsPerSecond: number;
  readonly readAllEventsPerSecond: number;
}

async function benchReads(store: PostgresEventStore, pool: pg.Pool): Promise<ReadFigures> {
  const total = await topUp(store, pool);
  const head = await store.headPosition();
  if (head === 0n) throw new Error('invariant: the head position is 0 after the top-up');

  status(`catch-up: subscribeToAll from 0 to head ${head}`);
  let subscribed = 0;
  let started = performance.now();
  const subscription = store.subscribeToAll({});
  try {
    for await (const event of subscription) {
      subscribed++;
      if (event.position >= head) break;
    }
  } finally {
    await subscription.close();
  }
  const subscriptionSeconds = (performance.now() - started) / 1000;

  status(`catch-up: readAll pages of ${format(READ_PAGE_EVENTS)} from 0 to head`);
  let read = 0;
  let cursor: bigint | undefined;
  started = performance.now();
  for (;;) {
    const page = await store.readAll({ fromPosition: cursor, maxCount: READ_PAGE_EVENTS });
    for (const event of page) {
      if (event.position > head) break;
      read++;
    }
    const last = page.at(-1);
    if (last === undefined || last.position >= head || page.length < READ_PAGE_EVENTS) break;
    cursor = last.position;
  }
  const readAllSeconds = (performance.now() - started) / 1000;

  if (subscribed !== total || read !== total) throw new Error(`invariant: read ${subscribed} (subscription) and ${read} (readAll) events, the log holds ${total}`);
  const figures = { events: total, subscriptionEventsPerSecond: subscribed / subscriptionSeconds, readAllEventsPerSecond: read / readAllSeconds };
  status(`catch-up: subscription ${format(figures.subscriptionEventsPerSecond)} events/s, readAll ${format(figures.readAllEventsPerSecond)} events/s`);
  return figures;
}

// ---------------------------------------------------------------------------------------------
// The report.

function verdict(passed: boolean | undefined): string {
  if (passed === undefined) return 'n/a';
  return passed ? 'PASS' : 'MISS';
}

function report(machine: Machine, config: BenchConfig, { appendsPerSecond, pgbenchTps }: AppendFigures, reads: ReadFigures, busyPercent: number | undefined): string {
  const ratio = pgbenchTps === undefined ? undefined : (appendsPerSecond / pgbenchTps) * 100;
  const readVerdict = (rate: number) => verdict(rate >= TARGET_READ_EVENTS_PER_SECOND);
  return [
    '## Event store benchmark',
    '',
    '| Machine | |',
    '|---|---|',
    `| CPU | ${machine.cores} cores, ${machine.cpuModel} |`,
    `| PostgreSQL | ${machine.postgres} (${machine.durability}) |`,
    `| Node | ${machine.node} |`,
    `| CPU busy before the run | ${busyPercent === undefined ? 'unknown' : `${busyPercent.toFixed(0)} %${busyPercent > BUSY_WARNING_PERCENT ? ': other processes were running, the figures are understated' : ' (quiet)'}`} |`,
    `| Run | appends: ${WRITERS} writers, pool ${POOL_SIZE}, ${appendRoundSeconds(config) * APPEND_ROUNDS} s each for ours and pgbench in ${APPEND_ROUNDS} alternating rounds after ${config.warmupSeconds} s warm-up; reads over ${format(reads.events)} events |`,
    '',
    '| Measure | Value | Target | Result |',
    '|---|---:|---:|:---:|',
    `| Appends/s, PostgresEventStore (1 event, fresh stream) | ${format(appendsPerSecond)} | | |`,
    `| pgbench tps, same statement (-M prepared -c ${WRITERS} -j ${PGBENCH_THREADS}) | ${pgbenchTps === undefined ? 'pgbench not installed' : format(pgbenchTps)} | | |`,
    `| Ratio ours / pgbench | ${ratio === undefined ? 'cannot be computed' : `${ratio.toFixed(1)} %`} | >= ${TARGET_RATIO_PERCENT} % | ${verdict(ratio === undefined ? undefined : ratio >= TARGET_RATIO_PERCENT)} |`,
    `| Catch-up, subscribeToAll (events/s) | ${format(reads.subscriptionEventsPerSecond)} | >= ${format(TARGET_READ_EVENTS_PER_SECOND)} | ${readVerdict(reads.subscriptionEventsPerSecond)} |`,
    `| Catch-up, readAll pages of ${format(READ_PAGE_EVENTS)} (events/s) | ${format(reads.readAllEventsPerSecond)} | >= ${format(TARGET_READ_EVENTS_PER_SECOND)} | ${readVerdict(reads.readAllEventsPerSecond)} |`,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const config = loadConfig();
  const cleanup = new Cleanup();
  const interrupted = () => {
    status('interrupted: cleaning up');
    void cleanup.runAll().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const started = performance.now();
  try {
    const busyPercent = await busyPercentBeforeRun();
    const server = await startServer(config, cleanup);
    const url = await createBenchDatabase(server, cleanup);
    const machine = await describeMachine(url);

    const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE });
    // An idle connection ended by the server (on Ctrl-C, the cluster stops under us) must not crash
    // the run with an unhandled 'error' event; a failing query still rejects where it was made.
    pool.on('error', () => undefined);
    cleanup.add('close the pool', () => pool.end());
    const store = new PostgresEventStore({ pool, connectionString: url });
    cleanup.add('close the store', () => store.close());
    // Open every connection before timing anything.
    await Promise.all(Array.from({ length: POOL_SIZE }, () => pool.query('select 1')));

    const appends = await benchAppends(store, url, config, cleanup);
    const reads = await benchReads(store, pool);

    process.stdout.write(report(machine, config, appends, reads, busyPercent));
    status(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await cleanup.runAll();
  }
}

/**
 * Exits explicitly: embedded-postgres registers async-exit-hook, which ends the process with code 0
 * on `beforeExit` whatever process.exitCode says.
 */
const finish = () => process.exit(process.exitCode ?? 0);

main().then(finish, (error: unknown) => {
  status(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
  finish();
});
