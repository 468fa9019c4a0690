/**
 * `npm run bench:api`: the HTTP API under load, on the embedded default with the sandbox provider,
 * each figure beside a floor measured in the same run.
 *
 * The service runs as its own process (node dist/src/main.js with the V8 flags npm start gives it,
 * a fresh embedded PostgreSQL under a temporary DATA_DIR) so that the load generator does not
 * share its event loop. Measures:
 *   1. POST /v1/nin (sandbox found), after a 10 s warm-up at 300/s: 100 connections in a closed
 *      loop for BENCH_SECONDS (default 30), then the same closed loop against the check floor
 *      (check-floor.ts, in floor-server.ts: the statements of a check in its transactions on a
 *      database of its own on the same cluster, bare node:http, nothing else), each pair
 *      BENCH_RUNS times; then POST paced at half the service's median closed-loop rate (open loop,
 *      at most 100 connections), each run followed by the check floor paced at the same rate (for
 *      information: the tail the same commits have on this machine with nothing around them),
 *      BENCH_RUNS times. The floor is checked to insert the rows the service inserts per check,
 *      table by table.
 *   2. GET /v1/verifications/{reference} over the checks the POST phases wrote, closed loop;
 *      GET /v1/verifications with 100,000 verifications in the organization (rows seeded straight
 *      into the read model, as the issue allows): 100 connections in a closed loop, then, for
 *      information, paced at 1,000 requests/s.
 *   3. The list's floors: the list's closed loop again, against bare node:http servers
 *      (floor-server.ts) that give the service's own answer from memory, by the list's statement
 *      per request, and by one statement shared by the requests waiting for it.
 * Prints req/s, p50/p99 latency, non-2xx count, the service's peak RSS and the load average.
 * Targets, ratios to floors of the same run: the POST closed loop >= 0.6x the check floor; paced
 * at half that closed loop's rate, p99 <= 1.5x the check floor's paced at that rate (the median
 * runs'); the service's peak RSS <= 300 MiB (printed with V8's heap at the peak); the list's closed loop >= 0.9x
 * its statement-per-request floor; no errors anywhere.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { streams } from '../src/common/streams.js';
import { parseMetrics, sumOfSamples } from '../src/metrics/prometheus-text.testing.js';
import { identifiersIn } from '../src/data-protection/blind-index.js';
import { runMigrations } from '../src/database/data-source.js';
import { freePort } from '../src/database/embedded-postgres.js';
import { SERVICE_NODE_FLAGS } from '../src/lifecycle/node-flags.js';
import type { JsonObject } from '../src/event-store/event-store.port.js';
import { admin, withDatabase } from './bench-support.js';
import { isCheckPlan, type CheckTemplate } from './check-floor.js';
import { pacedLoad, type PacedLoadOptions, type PacedLoadResult } from './paced-load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const LIST_ROWS = Number(process.env.BENCH_LIST_ROWS ?? 100_000);
/** BENCH_WARMUP_SECONDS: how long the POST warm-up runs, paced at 300 requests/s. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const WARMUP_RATE = 300;
/** BENCH_SERIES=1: print each paced phase's latency second by second (p50, p99, max), to see what made its tail. */
const SERIES = process.env.BENCH_SERIES === '1';
/** BENCH_ONLY=post or list: run only that route's phases (for profiling one of them). */
const ONLY = process.env.BENCH_ONLY ?? '';
/** BENCH_POST_RATE: the paced POST phase's rate (default: half the service's closed-loop rate in this run, the target's). */
const POST_RATE = process.env.BENCH_POST_RATE === undefined || process.env.BENCH_POST_RATE === '' ? undefined : Number(process.env.BENCH_POST_RATE);
/** BENCH_RUNS: how many times the POST closed loops (service, then check floor) and the paced POST phase run; the median is compared with the targets. */
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
/** BENCH_CHECK_PLAN: the store transactions of a check the check floor makes (check-floor.ts, CHECK_PLANS); by default (auto) the service's. */
const CHECK_PLAN = process.env.BENCH_CHECK_PLAN ?? 'auto';
/** The check floor's own database, on the service's cluster. */
const CHECK_FLOOR_DATABASE = 'ledger_check_floor';
/** BENCH_CLOSED=0: skip the POST closed loop (the maximum throughput). */
const POST_CLOSED = process.env.BENCH_CLOSED !== '0';
/** BENCH_PACED=0: skip the POST paced phases (to compare closed loops alone, two builds say). */
const PACED = process.env.BENCH_PACED !== '0';
/** BENCH_FLOOR=0: skip the floor phases (the check floor, and the list's closed loop against bare node:http servers). */
const FLOOR = process.env.BENCH_FLOOR !== '0';
if (!['', 'post', 'list'].includes(ONLY)) throw new Error('BENCH_ONLY must be post or list');
if (!Number.isInteger(RUNS) || RUNS < 1 || RUNS > 9) throw new Error('BENCH_RUNS must be an integer from 1 to 9');
if (POST_RATE !== undefined && !(POST_RATE > 0)) throw new Error('BENCH_POST_RATE must be a positive number');
if (CHECK_PLAN !== 'auto' && !isCheckPlan(CHECK_PLAN)) throw new Error('BENCH_CHECK_PLAN must be auto, four-appends or two-write-sets');
/** BENCH_SERVICE_V8_FLAGS: the service's V8 flags in place of those npm start gives it (SERVICE_NODE_FLAGS), `none` for V8's defaults: to measure both sides of the young generation's size. */
const V8_FLAGS: readonly string[] =
  process.env.BENCH_SERVICE_V8_FLAGS === undefined ? SERVICE_NODE_FLAGS : process.env.BENCH_SERVICE_V8_FLAGS.split(' ').filter((arg) => arg !== '' && arg !== 'none');
/** The paced tail's target: the service's p99 at most this many times the check floor's at the same rate. */
const PACED_TAIL_RATIO = 1.5;
/** The service's peak resident set over the whole run, at most (MiB). */
const PEAK_RSS_TARGET_MB = 300;
/** A phase not run: no figures (NaN), printed as skipped under the phase's own name. */
const skipped: Omit<Result, 'name'> = { requestsPerSecond: NaN, p50Ms: NaN, p99Ms: NaN, non2xx: 0, errors: 0, total: 0 };

const log = (line: string) => process.stderr.write(`[bench:api] ${line}\n`);

/** The service's process and data directory, for the phases' CPU figures (set once it runs), and its database's URL. */
let measured: { pid: number; dataDir: string; databaseUrl?: string } | undefined;

/** Rows inserted and updated in one table. */
interface TableRows {
  inserted: number;
  updated: number;
}

/** A database's commits, inserted rows (pg_stat_database) and rows per table (pg_stat_user_tables) so far. */
interface DatabaseCounts {
  commits: number;
  inserted: number;
  tables: Map<string, TableRows>;
}

/** The counts of the database at `url` (by default the service's), or undefined before its URL is known. */
async function databaseCounts(url = measured?.databaseUrl): Promise<DatabaseCounts | undefined> {
  if (url === undefined) return undefined;
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ commits: string; inserted: string }>(
      'select xact_commit as commits, tup_inserted as inserted from pg_stat_database where datname = current_database()',
    );
    const tables = await db.query<{ relname: string; n_tup_ins: string; n_tup_upd: string }>('select relname, n_tup_ins, n_tup_upd from pg_stat_user_tables order by relname');
    if (process.env.BENCH_TABLES === '1') {
      log(
        `  tables: ${tables.rows
          .filter((row) => row.n_tup_ins !== '0' || row.n_tup_upd !== '0')
          .map((row) => `${row.relname} +${row.n_tup_ins}/~${row.n_tup_upd}`)
          .join(', ')}`,
      );
    }
    return {
      commits: Number(rows[0].commits),
      inserted: Number(rows[0].inserted),
      tables: new Map(tables.rows.map((row) => [row.relname, { inserted: Number(row.n_tup_ins), updated: Number(row.n_tup_upd) }])),
    };
  } finally {
    await db.end();
  }
}

/** Rows per answered request and table between two counts. */
function rowsPerRequest(before: DatabaseCounts, after: DatabaseCounts, total: number): Map<string, TableRows> {
  const rows = new Map<string, TableRows>();
  for (const [table, counted] of after.tables) {
    const earlier = before.tables.get(table) ?? { inserted: 0, updated: 0 };
    rows.set(table, { inserted: (counted.inserted - earlier.inserted) / total, updated: (counted.updated - earlier.updated) / total });
  }
  return rows;
}

/**
 * Where a phase's costs are counted: a process (its CPU; PostgreSQL's is the whole cluster's) and
 * a database (commits and rows). `settle`: what to wait for before the counts are taken (the
 * projections' work for what the phase wrote belongs to the phase); with it, the counts are taken
 * on a quiet database before and after, and commits and rows are divided by the checks the phase
 * wrote (its VerificationRequested events, unanswered ones included) rather than by its answers.
 */
interface Costed {
  readonly pid: number;
  readonly databaseUrl: string | undefined;
  readonly settle?: () => Promise<void>;
}

/**
 * A backend reports its statistics at the end of a transaction, at most once a second, and an
 * idle one after 10 s (PostgreSQL 15 and later): counts read this long after the last write hold
 * every session's.
 */
const STATISTICS_QUIET_MS = 11_000;

/** Checks written so far in the database at `url` (their requests in the log). */
async function checksWritten(url: string): Promise<number> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ count: string }>("select count(*) from events where type = 'VerificationRequested'");
    return Number(rows[0].count);
  } finally {
    await db.end();
  }
}

/**
 * The share of the checks in the database at `url` whose request was committed in the transaction
 * of their reservation, and whose completion in that of their capture: an event's position is its
 * transaction's id times 1,000,000 plus its place in it (docs/architecture.md). Whatever the group
 * commits gather, each is 0 when a check writes the two in sequence and 1 when it writes them in one
 * write-set: the signature of a plan.
 */
async function sharedTransactions(url: string): Promise<{ requestWithReservation: number; completionWithCapture: number; keyWithRequest: number }> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows } = await db.query<{ first: string; second: string; keyed: string; checks: string }>(
      // Each event of a check found by its reference (hash joins on it): joining the capture through
      // the wallet's stream instead walks that stream once per reservation, hours at 100,000 checks.
      `with r as (select substr(stream_id, length('verification-') + 1) as reference, position, xmin from events where type = 'VerificationRequested'),
            c as (select substr(stream_id, length('verification-') + 1) as reference, position from events where type = 'VerificationCompleted'),
            w as (select data->>'reference' as reference, position from events where type = 'WalletFundsReserved'),
            d as (select data->>'reference' as reference, position from events where type = 'WalletDebited')
       select count(*) filter (where r.position / 1000000 = w.position / 1000000) as first,
              count(*) filter (where c.position / 1000000 = d.position / 1000000) as second,
              count(*) filter (where k.xmin = r.xmin) as keyed, count(*) as checks
         from r
         join w using (reference)
         join c using (reference)
         join d using (reference)
         left join verification_keys k using (reference)`,
    );
    const checks = Number(rows[0].checks);
    return { requestWithReservation: Number(rows[0].first) / checks, completionWithCapture: Number(rows[0].second) / checks, keyWithRequest: Number(rows[0].keyed) / checks };
  } finally {
    await db.end();
  }
}

/** A phase that `runs`, announced by `announcement`, or, when it does not, its row of no figures. */
async function phase(name: string, runs: boolean, announcement: string, measure: () => Promise<Omit<Result, 'name'>>, on?: Costed): Promise<Result> {
  if (!runs) return { name, ...skipped };
  const target = on ?? (measured === undefined ? undefined : { pid: measured.pid, databaseUrl: measured.databaseUrl });
  const quiet = async () => {
    if (on?.settle === undefined) return;
    await on.settle();
    await new Promise((wake) => setTimeout(wake, STATISTICS_QUIET_MS));
  };
  await quiet();
  log(announcement);
  const countsBefore = await databaseCounts(target?.databaseUrl);
  const checksBefore = on?.settle === undefined || on.databaseUrl === undefined ? undefined : await checksWritten(on.databaseUrl);
  const before = measured === undefined || target === undefined ? undefined : cpuMs(target.pid, measured.dataDir);
  const result = await measure();
  if (before === undefined || measured === undefined || target === undefined) return { ...result, name };
  await on?.settle?.();
  const after = cpuMs(target.pid, measured.dataDir);
  // Without a settle: the sessions report their statistics within a second of their last transaction.
  if (on?.settle === undefined) await new Promise((wake) => setTimeout(wake, 1_500));
  else await quiet();
  const countsAfter = countsBefore === undefined ? undefined : await databaseCounts(target.databaseUrl);
  const written = checksBefore === undefined || on?.databaseUrl === undefined ? result.total : (await checksWritten(on.databaseUrl)) - checksBefore;
  const counted = countsBefore !== undefined && countsAfter !== undefined;
  return {
    ...result,
    name,
    serviceCpuMs: (after.service - before.service) / written,
    postgresCpuMs: (after.postgres - before.postgres) / written,
    commits: counted ? (countsAfter.commits - countsBefore.commits) / written : undefined,
    inserted: counted ? (countsAfter.inserted - countsBefore.inserted) / written : undefined,
    tables: counted ? rowsPerRequest(countsBefore, countsAfter, written) : undefined,
  };
}

/**
 * The host's page-cache write-back, on which the paced phase's tail depends (benchmarks.md,
 * *Write-back*): when the kernel starts writing dirty pages in the background, and how old it lets
 * a dirty page get. Linux only; "unknown" elsewhere.
 */
function writebackSettings(): string {
  const read = (name: string) => {
    try {
      return Number(readFileSync(`/proc/sys/vm/${name}`, 'utf8').trim());
    } catch {
      return undefined;
    }
  };
  const bytes = read('dirty_background_bytes');
  const ratio = read('dirty_background_ratio');
  const expiry = read('dirty_expire_centisecs');
  if (bytes === undefined || ratio === undefined || expiry === undefined) return 'page-cache write-back: unknown';
  const background = bytes > 0 ? `${(bytes / 2 ** 20).toFixed(0)} MiB dirty` : `${ratio} % of memory dirty`;
  return `page-cache write-back from ${background}, or pages ${(expiry / 100).toFixed(0)} s old (vm.dirty_background_*, vm.dirty_expire_centisecs)`;
}

/** A paced phase (see paced-load.ts), its per-second figures printed under BENCH_SERIES=1. */
async function paced(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const result = await pacedLoad(options);
  if (SERIES) {
    for (const { second, p50Ms, p99Ms, maxMs } of result.perSecond) {
      log(`  second ${String(second).padStart(3)}: p50 ${p50Ms.toFixed(1)} ms, p99 ${p99Ms.toFixed(1)} ms, max ${maxMs.toFixed(1)} ms`);
    }
  }
  return result;
}

/** The wallet ledger's queue metrics (operations.md), summed over their labels. */
interface WalletQueueCounters {
  readonly batches: number;
  readonly batchSeconds: number;
  readonly commands: number;
  readonly waitSeconds: number;
  /** The service's event-loop delay since the scrape before (prom-client's default metrics, reset at each scrape), when it reports it. */
  readonly loopDelayMeanSeconds: number | undefined;
  readonly loopDelayP99Seconds: number | undefined;
}

/** What the bench's one wallet did over a phase: its batches, how long each took, how busy it was and how long a command waited. */
interface WalletQueueFigures {
  readonly batchesPerSecond: number;
  readonly commandsPerBatch: number;
  readonly batchMs: number;
  /** The share of the phase a batch was under way (the bench's checks all charge one wallet). */
  readonly busy: number;
  readonly waitMs: number;
  /** How late the service's event loop ran a timer over the phase (mean, p99), when it reports it: what every awaited answer, the append's too, waits for its turn. */
  readonly loopDelayMeanMs: number | undefined;
  readonly loopDelayP99Ms: number | undefined;
}

const WALLET_QUEUE_METRICS = {
  batches: 'ivl_wallet_batch_duration_seconds_count',
  batchSeconds: 'ivl_wallet_batch_duration_seconds_sum',
  commands: 'ivl_wallet_command_wait_seconds_count',
  waitSeconds: 'ivl_wallet_command_wait_seconds_sum',
} as const;
const LOOP_DELAY_METRICS = { mean: 'ivl_nodejs_eventloop_lag_mean_seconds', p99: 'ivl_nodejs_eventloop_lag_p99_seconds' } as const;
/**
 * prom-client samples the event loop with a timer every 10 ms (its default, which the service
 * keeps), and its figures are the intervals between the timer's runs: the delay is what exceeds 10 ms.
 */
const LOOP_DELAY_TIMER_MS = 10;

/**
 * The queue's counters from the service's /metrics, each metric summed over its label sets;
 * undefined when the service has none (metrics turned off, or a build before them under BENCH_SERVICE_DIR).
 */
async function walletQueueCounters(baseUrl: string): Promise<WalletQueueCounters | undefined> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (!response.ok) return undefined;
  const samples = parseMetrics(await response.text());
  const reported = (name: string) => samples.some((entry) => entry.name === name);
  const total = (name: string) => (reported(name) ? sumOfSamples(samples, name) : undefined);
  const { batches, batchSeconds, commands, waitSeconds } = WALLET_QUEUE_METRICS;
  if (![batches, batchSeconds, commands, waitSeconds].every(reported)) return undefined;
  return {
    batches: sumOfSamples(samples, batches),
    batchSeconds: sumOfSamples(samples, batchSeconds),
    commands: sumOfSamples(samples, commands),
    waitSeconds: sumOfSamples(samples, waitSeconds),
    loopDelayMeanSeconds: total(LOOP_DELAY_METRICS.mean),
    loopDelayP99Seconds: total(LOOP_DELAY_METRICS.p99),
  };
}

/** Runs `load` and answers its result with the wallet queue's figures over it (the counters read before and after), when the service reports them. */
async function withWalletQueue<T extends object>(baseUrl: string, load: () => Promise<T>): Promise<T & { walletQueue?: WalletQueueFigures }> {
  const before = await walletQueueCounters(baseUrl);
  const started = performance.now();
  const result = await load();
  const seconds = (performance.now() - started) / 1000;
  const after = before === undefined ? undefined : await walletQueueCounters(baseUrl);
  if (before === undefined || after === undefined) return result;
  const batches = after.batches - before.batches;
  const commands = after.commands - before.commands;
  const batchSeconds = after.batchSeconds - before.batchSeconds;
  if (batches === 0 || commands === 0) return result;
  return {
    ...result,
    walletQueue: {
      batchesPerSecond: batches / seconds,
      commandsPerBatch: commands / batches,
      batchMs: (1000 * batchSeconds) / batches,
      busy: batchSeconds / seconds,
      waitMs: (1000 * (after.waitSeconds - before.waitSeconds)) / commands,
      loopDelayMeanMs: after.loopDelayMeanSeconds === undefined ? undefined : Math.max(0, 1000 * after.loopDelayMeanSeconds - LOOP_DELAY_TIMER_MS),
      loopDelayP99Ms: after.loopDelayP99Seconds === undefined ? undefined : Math.max(0, 1000 * after.loopDelayP99Seconds - LOOP_DELAY_TIMER_MS),
    },
  };
}

interface Result {
  name: string;
  /** CPU ms per answered request (per check written, for a settled phase), of the process measured (the service, or a floor) and of PostgreSQL, during the phase. */
  serviceCpuMs?: number;
  postgresCpuMs?: number;
  /** Commits and rows inserted in the service's database per answered request, during the phase. */
  commits?: number;
  inserted?: number;
  /** Rows inserted and updated per answered request, per table. */
  tables?: Map<string, TableRows>;
  /** The wallet ledger's queue over the phase, from the service's metrics (POST phases of the service). */
  walletQueue?: WalletQueueFigures;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  total: number;
}

async function waitForReady(baseUrl: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode}`);
    try {
      const response = await fetch(`${baseUrl}/health/ready`);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the service did not become ready within 120 s');
}

async function call(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/**
 * Waits (at most a minute) until every projection has caught up with the log, so that the backlog
 * a closed loop of checks leaves is not projected, in the service's process, during the next phase.
 */
async function projectionsCaughtUp(baseUrl: string, admin: Record<string, string>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const { status, body } = await call(baseUrl, 'GET', '/admin/v1/projections', admin);
    if (status === 200 && (body.data as { lagEvents: number | null }[]).every((projection) => projection.lagEvents === 0)) return;
    await new Promise((wake) => setTimeout(wake, 250));
  }
  log('the projections did not catch up within a minute; the next phase runs anyway');
}

/** Up to 2,000 references of the checks the POST phases wrote, as the read model has them. */
async function writtenReferences(databaseUrl: string, organizationId: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ reference: string }>('select reference from verifications where organization_id = $1 order by created_at desc limit 2000', [organizationId]);
    if (rows.length === 0) throw new Error('the POST phases left no verification to read back');
    return rows.map((row) => row.reference);
  } finally {
    await db.end();
  }
}

/** CPU time (ms) a process used, with that of its reaped children (fields 14-17 of /proc/PID/stat). */
function cpuMsOf(pid: number, withChildren: boolean): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + (withChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
const CLOCK_TICKS = 100;

/**
 * CPU time (ms) used so far by the service and by its embedded PostgreSQL (the postmaster, its
 * live backends and those it reaped). Divided by a phase's requests, it is what a request costs in
 * CPU: a figure that holds on a shared, noisy machine where req/s moves with the neighbours' load.
 */
function cpuMs(servicePid: number, dataDir: string): { service: number; postgres: number } {
  let postgres = 0;
  try {
    const postmaster = Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    postgres = cpuMsOf(postmaster, true);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) postgres += cpuMsOf(Number(entry), false);
      } catch {
        // Gone since the listing.
      }
    }
  } catch {
    postgres = NaN;
  }
  return { service: cpuMsOf(servicePid, false), postgres };
}

function peakRssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmHWM:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The service's memory at one moment: its resident set, and what V8 and Node reported of it then (MiB). */
interface MemorySample {
  readonly rssMb: number;
  readonly heapMb: number;
  readonly newSpaceMb: number;
  readonly externalMb: number;
}

/**
 * Samples the service's memory every second for the whole run: the resident set from /proc and,
 * from its metrics, V8's heap (and its young generation, which the semi-space flags size) and the
 * memory Node holds outside it (buffers). Answers the sample of the largest resident set, so the
 * peak can be split into the heap's share and the rest (code, stacks, the allocator's free pages).
 */
function sampleMemory(pid: number, baseUrl: string): { stop: () => Promise<MemorySample | undefined> } {
  let largest: MemorySample | undefined;
  let stopped = false;
  const mib = (bytes: number) => bytes / 1024 / 1024;
  const once = async () => {
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    const response = await fetch(`${baseUrl}/metrics`);
    if (rss === null || !response.ok) return;
    const samples = parseMetrics(await response.text());
    const sample: MemorySample = {
      rssMb: Number(rss[1]) / 1024,
      heapMb: mib(sumOfSamples(samples, 'ivl_nodejs_heap_size_total_bytes')),
      newSpaceMb: mib(sumOfSamples(samples, 'ivl_nodejs_heap_space_size_total_bytes', { space: 'new' })),
      externalMb: mib(sumOfSamples(samples, 'ivl_nodejs_external_memory_bytes')),
    };
    if (largest === undefined || sample.rssMb > largest.rssMb) largest = sample;
  };
  const done = (async () => {
    while (!stopped) {
      await once().catch(() => undefined);
      await new Promise((wake) => setTimeout(wake, 1_000));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
      return largest;
    },
  };
}

/** A closed loop: autocannon's connections each send their next request when the last is answered. */
function closedLoop(options: autocannon.Options): Promise<Omit<Result, 'name'>> {
  return new Promise((resolveRun, reject) => {
    autocannon(options, (error, result) => {
      if (error) return reject(error);
      resolveRun({
        requestsPerSecond: result.requests.average,
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        non2xx: result.non2xx,
        errors: result.errors + result.timeouts,
        total: result.requests.total,
      });
    });
  });
}

/**
 * Runs `work` against floor-server.ts (`args`: its mode and theirs) in a process of its own, as the
 * service is, once it listens; stops it after.
 */
async function withFloorServer<T>(args: readonly string[], work: (port: number, pid: number) => Promise<T>): Promise<T> {
  // BENCH_FLOOR_NODE_ARGS: extra node flags for the floor servers, as BENCH_SERVICE_NODE_ARGS for the service.
  const nodeArgs = (process.env.BENCH_FLOOR_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const server = spawn(process.execPath, [...nodeArgs, 'dist/bench/floor-server.js', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolvePort, reject) => {
      server.once('exit', (code) => reject(new Error(`the floor server exited with code ${code}`)));
      server.stdout.once('data', (chunk: Buffer) => resolvePort(Number(chunk.toString().trim())));
    });
    return await work(port, server.pid as number);
  } finally {
    server.removeAllListeners('exit');
    if (server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
  }
}

/**
 * The list's closed loop against a list floor as the phase `name`, once the floor's first answer is
 * found to be the service's to the byte; its CPU figures are the floor process's.
 */
async function floorLoop(
  name: string,
  announcement: string,
  path: string,
  headers: Record<string, string>,
  serviceAnswer: Buffer,
  args: string[],
  databaseUrl: string,
): Promise<Result> {
  return withFloorServer(args, async (port, pid) => {
    const url = `http://127.0.0.1:${port}${path}`;
    const first = Buffer.from(await (await fetch(url, { headers })).arrayBuffer());
    if (!first.equals(serviceAnswer)) throw new Error(`the floor server (${args[0]}) does not answer what the service answers`);
    return phase(name, true, announcement, () => closedLoop({ url, headers, connections: CONNECTIONS, duration: SECONDS }), { pid, databaseUrl });
  });
}

/**
 * One real check of the service, read back from its database, for the check floor to copy
 * (check-floor.ts): the answer to one more POST, that check's four events, its blind-index tokens
 * (as many of them first as the request's identifiers), and what the projections must have seen
 * before it (the organization's stream, the wallet's fundings).
 */
async function checkTemplate(check: { url: string; headers: Record<string, string>; body: string }, databaseUrl: string, organizationId: string): Promise<CheckTemplate> {
  const response = await fetch(check.url, { method: 'POST', headers: check.headers, body: check.body });
  const body = await response.text();
  if (response.status !== 201) throw new Error(`the template check answered ${response.status}`);
  const reference = (JSON.parse(body) as { data: { reference: string } }).data.reference;
  const environment = 'test';
  const walletStream = streams.wallet(organizationId, environment);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    type Row = { type: string; data: JsonObject; metadata: JsonObject };
    const events = (streamId: string, where = '', values: unknown[] = []) =>
      db.query<Row>(`select type, data, metadata from events where stream_id = $1 ${where} order by revision`, [streamId, ...values]).then(({ rows }) => rows);
    const [request, completion] = await events(streams.verification(reference));
    const [reservation, capture] = await events(walletStream, "and data->>'reference' = $2", [reference]);
    if (
      request?.type !== 'VerificationRequested' ||
      completion?.type !== 'VerificationCompleted' ||
      reservation?.type !== 'WalletFundsReserved' ||
      capture?.type !== 'WalletDebited'
    ) {
      throw new Error(`the template check ${reference} does not have the four events of a completed check`);
    }
    const tokens = (await db.query<{ token: string }>('select token from verification_subjects where reference = $1', [reference])).rows.map((row) => row.token);
    const requestTokenCount = identifiersIn(JSON.parse(check.body) as Record<string, unknown>).length;
    log(`check floor template: ${reference}, ${requestTokenCount} of its ${tokens.length} blind-index tokens from the request`);
    return {
      reference,
      organizationId,
      environment,
      walletStream,
      setup: [
        { streamId: streams.organization(organizationId), events: await events(streams.organization(organizationId)) },
        { streamId: walletStream, events: await events(walletStream, "and type = 'WalletFunded'") },
      ],
      events: { request, reservation, completion, capture },
      requestTokens: tokens.slice(0, requestTokenCount),
      resultTokens: tokens.slice(requestTokenCount),
      answer: { status: response.status, contentType: response.headers.get('content-type') ?? 'application/json', body },
    };
  } finally {
    await db.end();
  }
}

/** A fresh, migrated database `name` on the service's cluster, for the check floor; its URL. */
async function floorDatabase(databaseUrl: string, name: string): Promise<string> {
  await admin(databaseUrl, async (client) => {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  });
  const url = withDatabase(databaseUrl, name);
  await runMigrations(url);
  return url;
}

/** Waits (at most a minute) until the check floor's projections have applied everything it wrote. */
async function floorCaughtUp(port: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if ((await fetch(`http://127.0.0.1:${port}/caught-up`)).status === 200) return;
    await new Promise((wake) => setTimeout(wake, 250));
  }
  log("the check floor's projections did not catch up within a minute");
}

const median = (values: readonly number[]) => {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};

/** The run whose `figure` is the median (the lower middle one for an even count). */
function medianRun(results: readonly Result[], figure: (result: Result) => number): Result {
  const ordered = [...results].sort((a, b) => figure(a) - figure(b));
  return ordered[Math.floor((ordered.length - 1) / 2)];
}

/**
 * Tables whose inserted rows depend on how the projection batches events, not on what a check
 * writes: a reservation opened and captured within one batch of the wallets projection is never
 * inserted into wallet_reservations. Printed, not compared. (Updated rows depend on the batches
 * everywhere: printed, not compared.)
 */
const BATCH_FOLDED_TABLES: ReadonlySet<string> = new Set(['wallet_reservations']);

/** Tables whose inserted rows per check differ between the service and the floor (more than 5 %, or 0.02 rows for small counts). */
function rowMismatches(service: Map<string, TableRows>, floor: Map<string, TableRows>): string[] {
  const tables = new Set([...service.keys(), ...floor.keys()]);
  return [...tables].filter((table) => {
    if (BATCH_FOLDED_TABLES.has(table)) return false;
    const a = service.get(table)?.inserted ?? 0;
    const b = floor.get(table)?.inserted ?? 0;
    return Math.abs(a - b) > Math.max(0.02, 0.05 * Math.max(a, b));
  });
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ledger-bench-api-'));
  const port = await freePort();
  const pgPort = await freePort();
  const adminToken = `admin_${randomBytes(24).toString('base64url')}`;
  const baseUrl = `http://127.0.0.1:${port}`;
  log(`starting the service on ${baseUrl} (embedded PostgreSQL under ${dataDir})`);
  // BENCH_SERVICE_NODE_ARGS: extra node flags for the service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  // BENCH_SERVICE_DIR: the checkout whose built service is measured (another build of the service, to
  // compare two builds under this one bench); this checkout's by default.
  const child = spawn(process.execPath, [...V8_FLAGS, ...nodeArgs, 'dist/src/main.js'], {
    cwd: process.env.BENCH_SERVICE_DIR ?? process.cwd(),
    env: {
      ...process.env,
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(pgPort),
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      // The bench measures the service, not the per-key limit: one key sends far more than a minute's default.
      RATE_LIMIT_PER_MINUTE: '1000000',
    },
    // With node flags (--trace-gc prints to stdout), the service's stdout goes to the bench's stderr, beside its progress.
    stdio: ['ignore', nodeArgs.length > 0 ? 2 : 'ignore', 'inherit'],
  });
  try {
    await waitForReady(baseUrl, child);
    const memory = sampleMemory(child.pid as number, baseUrl);
    measured = { pid: child.pid as number, dataDir };
    const admin = { authorization: `Bearer ${adminToken}` };
    const org = await call(baseUrl, 'POST', '/admin/v1/organizations', admin, { name: 'Bench Ltd', email: 'bench@example.com' });
    if (org.status !== 201) throw new Error(`creating the organization answered ${org.status}: ${JSON.stringify(org.body)}`);
    const organizationId: string = org.body.data.id;
    const funding = await call(baseUrl, 'POST', `/admin/v1/organizations/${organizationId}/wallets/test/fundings`, admin, {
      amountKobo: 10_000_000_000,
      reference: 'bench-funding',
    });
    if (funding.status !== 201) throw new Error(`funding answered ${funding.status}: ${JSON.stringify(funding.body)}`);
    const issued = await call(baseUrl, 'POST', `/admin/v1/organizations/${organizationId}/keys`, admin, { environment: 'test', name: 'bench' });
    if (issued.status !== 201) throw new Error(`issuing a key answered ${issued.status}`);
    const key: string = issued.body.data.key;
    const integrator = { 'x-service-key': key, 'content-type': 'application/json' };

    // One sandbox "found" check, the request of every POST phase.
    const check = { url: `${baseUrl}/v1/nin`, method: 'POST' as const, headers: integrator, body: JSON.stringify({ nin: '12345678905' }) };
    // Warm-up: JIT, pools, caches. Paced at half the target rate, long enough for the hot path to
    // be compiled by the optimising tier (the first seconds of a cold process run several times slower).
    log(`warm-up: POST /v1/nin paced at ${WARMUP_RATE} requests/s for ${WARMUP_SECONDS} s`);
    if (WARMUP_SECONDS > 0) await paced({ ...check, ratePerSecond: WARMUP_RATE, seconds: WARMUP_SECONDS, connections: CONNECTIONS });

    // The embedded cluster's URL as the service has it: through its Unix socket when it has one.
    const { password } = JSON.parse(await readFile(join(dataDir, 'pg.json'), 'utf8')) as { password: string };
    const socketDir = join(dataDir, 'run');
    const databaseUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/ledger${existsSync(join(socketDir, `.s.PGSQL.${pgPort}`)) ? `?host=${encodeURIComponent(socketDir)}` : ''}`;
    measured = { pid: child.pid as number, dataDir, databaseUrl };

    // The targets are ratios measured in this run, which hold on a shared machine where absolute
    // rates move with the neighbours' load: the service's closed loop against the check floor
    // (check-floor.ts: the same statements in the same transactions, nothing else), each run
    // right after the other; then the latency at a steady rate, half the service's own closed-loop
    // rate. With 100 connections in a closed loop, latency is connections / throughput (Little's
    // law), so latency is measured open-loop, with requests paced evenly (see paced-load.ts for why
    // not autocannon's rate option), after the closed loops' backlog is projected.
    const postRuns = ONLY !== 'list';
    const listRuns = ONLY !== 'post';
    const serviceSettle: Costed = { pid: child.pid as number, databaseUrl, settle: () => projectionsCaughtUp(baseUrl, admin) };
    const posts: Result[] = [];
    const checkFloors: Result[] = [];
    const checkFloorRuns = postRuns && POST_CLOSED && FLOOR;
    const template = checkFloorRuns ? await checkTemplate(check, databaseUrl, organizationId) : undefined;
    const floorUrl = checkFloorRuns ? await floorDatabase(databaseUrl, CHECK_FLOOR_DATABASE) : undefined;
    const templateFile = join(dataDir, 'check-template.json');
    if (template !== undefined) await writeFile(templateFile, JSON.stringify(template));
    let floorPlan = CHECK_PLAN;
    /** The running check floor: its check request and how its phases are costed and settled. */
    type RunningFloor = { readonly check: typeof check; readonly costed: Costed; readonly caughtUp: () => Promise<void> };
    const postClosedLoops = async (floor?: RunningFloor) => {
      for (let run = 1; run <= RUNS; run++) {
        const of = RUNS > 1 ? ` (run ${run} of ${RUNS})` : '';
        posts.push(
          await phase(
            'POST /v1/nin (found)',
            postRuns && POST_CLOSED,
            `POST /v1/nin, ${CONNECTIONS} connections, ${SECONDS} s${of}`,
            () => withWalletQueue(baseUrl, () => closedLoop({ ...check, connections: CONNECTIONS, duration: SECONDS })),
            serviceSettle,
          ),
        );
        if (floor === undefined) continue;
        checkFloors.push(
          await phase(
            `floor: the check's statements (${floorPlan}), bare node:http`,
            true,
            `floor: a check's statements in its transactions (${floorPlan}), bare node:http and pg, ${CONNECTIONS} connections, ${SECONDS} s${of}`,
            () => closedLoop({ ...floor.check, connections: CONNECTIONS, duration: SECONDS }),
            floor.costed,
          ),
        );
      }
    };
    // Paced at half the service's median closed-loop rate: the service, then the check floor at the
    // same rate (for information: the same commits through the same one-wallet queue with nothing
    // around them, what this machine's disk and PostgreSQL give that rate's tail by themselves).
    let postRate = Number.NaN;
    const postsAtRate: Result[] = [];
    const floorsAtRate: Result[] = [];
    const pacedPhases = async (floor?: RunningFloor) => {
      const serviceRate = median(posts.map((result) => result.requestsPerSecond));
      postRate = !PACED ? Number.NaN : (POST_RATE ?? Math.max(1, Math.round(serviceRate / 2)));
      for (let run = 1; run <= RUNS && postRuns && Number.isFinite(postRate); run++) {
        const of = RUNS > 1 ? ` (run ${run} of ${RUNS})` : '';
        await projectionsCaughtUp(baseUrl, admin);
        postsAtRate.push(
          await phase(
            `POST /v1/nin (found), paced at ${postRate}/s`,
            true,
            `POST /v1/nin paced at ${postRate} requests/s (open loop), at most ${CONNECTIONS} connections, ${SECONDS} s${of}`,
            () => withWalletQueue(baseUrl, () => paced({ ...check, ratePerSecond: postRate, seconds: SECONDS, connections: CONNECTIONS })),
          ),
        );
        if (floor === undefined) continue;
        await floor.caughtUp();
        floorsAtRate.push(
          await phase(
            `floor: the check's statements (${floorPlan}), paced at ${postRate}/s`,
            true,
            `floor: a check's statements in its transactions (${floorPlan}), paced at ${postRate} requests/s (open loop), at most ${CONNECTIONS} connections, ${SECONDS} s${of}`,
            () => paced({ ...floor.check, ratePerSecond: postRate, seconds: SECONDS, connections: CONNECTIONS }),
            floor.costed,
          ),
        );
      }
    };
    if (checkFloorRuns && floorUrl !== undefined) {
      await withFloorServer(['check', floorUrl, templateFile, CHECK_PLAN], async (floorPort, floorPid) => {
        const caughtUp = () => floorCaughtUp(floorPort);
        const floor: RunningFloor = {
          check: { ...check, url: `http://127.0.0.1:${floorPort}/v1/nin` },
          costed: { pid: floorPid, databaseUrl: floorUrl, settle: caughtUp },
          caughtUp,
        };
        const first = await fetch(floor.check.url, { method: 'POST', headers: check.headers, body: check.body });
        const firstBody = await first.text();
        if (first.status !== template?.answer.status || firstBody.length !== template.answer.body.length)
          throw new Error('the check floor does not answer what the service answers');
        floorPlan = ((await (await fetch(`http://127.0.0.1:${floorPort}/caught-up`)).json()) as { plan: string }).plan;
        await postClosedLoops(floor);
        await pacedPhases(floor);
      });
    } else {
      await postClosedLoops();
      await pacedPhases();
    }
    const post = posts.length === 0 ? { name: 'POST /v1/nin (found)', ...skipped } : medianRun(posts, (result) => result.requestsPerSecond);
    const postAtRate = postsAtRate.length === 0 ? { name: 'POST /v1/nin (found), paced', ...skipped } : medianRun(postsAtRate, (result) => result.p99Ms);
    const floorAtRate = floorsAtRate.length === 0 ? { name: "floor: the check's statements, paced", ...skipped } : medianRun(floorsAtRate, (result) => result.p99Ms);

    // A full verification by reference (the personal data opened for it), over the checks the POST
    // phases wrote, each connection's requests going round them.
    if (postRuns) await projectionsCaughtUp(baseUrl, admin);
    const references = postRuns ? await writtenReferences(databaseUrl, organizationId) : [];
    const byReference = await phase(
      'GET /v1/verifications/{reference}',
      postRuns,
      `GET /v1/verifications/{reference} over ${references.length} checks, ${CONNECTIONS} connections, ${SECONDS} s`,
      () => {
        let next = 0;
        return closedLoop({
          url: baseUrl,
          connections: CONNECTIONS,
          duration: SECONDS,
          requests: [
            { method: 'GET', headers: { 'x-service-key': key }, setupRequest: (request) => ({ ...request, path: `/v1/verifications/${references[next++ % references.length]}` }) },
          ],
        });
      },
    );

    if (listRuns) {
      // As before the reads by reference: the warm-up's backlog would otherwise be projected, in the service's process, during the list's phases.
      await projectionsCaughtUp(baseUrl, admin);
      log(`seeding ${LIST_ROWS.toLocaleString()} verifications into the read model`);
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      const keyId = (await db.query<{ id: string }>('select id from api_keys where organization_id = $1 limit 1', [organizationId])).rows[0].id;
      await db.query(
        `insert into verifications (reference, organization_id, environment, key_id, scope, category, country_code, status, request, result, error_message, price_kobo, charged, created_at, completed_at)
         select 'vrf_BENCH' || lpad(g::text, 17, '0'), $1, 'test', $2, (array['nin','bvn','phone'])[1 + g % 3], 'kyc', 'NG',
                (array['found','not_found','failed'])[1 + g % 3], '{"nin":"12345678905"}', '{}', null, 10000, g % 3 <> 2,
                now() - (g || ' seconds')::interval, now() - (g || ' seconds')::interval
         from generate_series(1, $3::int) g`,
        [organizationId, keyId, LIST_ROWS],
      );
      // Rows seeded straight into the table bypass the projection, so its counts (the list's total) are seeded too.
      await db.query(
        `insert into verification_counts (organization_id, environment, scope, status, count)
         select organization_id, environment, scope, status, count(*) from verifications where reference like 'vrf_BENCH%' group by 1, 2, 3, 4
         on conflict (organization_id, environment, scope, status) do update set count = verification_counts.count + excluded.count`,
      );
      await db.query('analyze verifications');
      await db.end();
    }

    const list = await phase('GET /v1/verifications', listRuns, `GET /v1/verifications, ${CONNECTIONS} connections, ${SECONDS} s`, () =>
      closedLoop({ url: `${baseUrl}/v1/verifications`, headers: { 'x-service-key': key }, connections: CONNECTIONS, duration: SECONDS }),
    );
    // For information beside the closed loop (whose p99 is bound by Little's law: 100 connections
    // need 5,000 answers/s for a 20 ms p99): the list's latency under a steady 1,000 requests/s.
    const listAtRate = await phase('GET /v1/verifications, paced at 1,000/s', listRuns, `GET /v1/verifications paced at 1,000 requests/s (open loop), ${SECONDS} s`, () =>
      paced({ url: `${baseUrl}/v1/verifications`, method: 'GET', headers: { 'x-service-key': key }, ratePerSecond: 1_000, seconds: SECONDS, connections: CONNECTIONS }),
    );
    // The machine's floors (floor-server.ts): the same closed loop against bare node:http servers,
    // one answering the list's bytes from memory, one running the list's statement per request,
    // one sharing a statement among the requests that wait for it.
    const floorRuns = listRuns && FLOOR;
    const listAnswer = floorRuns ? await fetch(`${baseUrl}/v1/verifications`, { headers: { 'x-service-key': key } }) : undefined;
    const listBody = listAnswer === undefined ? Buffer.alloc(0) : Buffer.from(await listAnswer.arrayBuffer());
    const bodyFile = join(dataDir, 'floor-body');
    if (floorRuns) await writeFile(bodyFile, listBody);
    const floors: Result[] = [];
    for (const [name, how, args] of [
      ["the list's answer from memory", 'bare node:http', ['static', bodyFile, listAnswer?.headers.get('content-type') ?? 'application/json']],
      ["the list's statement per request", 'bare node:http and pg', ['query', databaseUrl, organizationId, 'test']],
      ["the list's statement, batched", 'bare node:http and pg, one statement shared by the requests waiting for it', ['batched', databaseUrl, organizationId, 'test']],
    ] as const) {
      const floorName = `floor: ${name}, bare node:http`;
      const announcement = `floor: ${name} (${how}), ${CONNECTIONS} connections, ${SECONDS} s`;
      floors.push(
        floorRuns ? await floorLoop(floorName, announcement, '/v1/verifications', { 'x-service-key': key }, listBody, [...args], databaseUrl) : { name: floorName, ...skipped },
      );
    }
    const rssMb = peakRssMb(child.pid as number);
    const atPeak = await memory.stop();

    const cpu = cpus()[0]?.model ?? 'unknown CPU';
    const errorsOf = (result: Result) => result.non2xx + result.errors;
    const verdict = (met: boolean) => (met ? 'PASS' : 'MISS');
    // The service against the check floor, run by run (each pair ran back to back), and the median of the ratios.
    const checkRatio = median(checkFloors.map((floor, run) => posts[run].requestsPerSecond / floor.requestsPerSecond));
    const checkFloor =
      checkFloors.length === 0 ? { name: "floor: the check's statements, bare node:http", ...skipped } : medianRun(checkFloors, (result) => result.requestsPerSecond);
    // The floor is a floor only if it does the service's work: the same rows inserted per check in every table (those named differ), in every pair of runs.
    const mismatched = [
      ...new Set(
        checkFloors.flatMap((floor, run) =>
          floor.tables === undefined || posts[run].tables === undefined ? ['(no counts)'] : rowMismatches(posts[run].tables as Map<string, TableRows>, floor.tables),
        ),
      ),
    ];
    // And it must group a check's events into transactions as the service does (commits per check cannot tell: they move with what the group commits gather).
    const serviceShared = checkFloors.length > 0 ? await sharedTransactions(databaseUrl) : undefined;
    const floorShared = checkFloors.length > 0 && floorUrl !== undefined ? await sharedTransactions(floorUrl) : undefined;
    if (serviceShared !== undefined && floorShared !== undefined) {
      if (Math.abs(serviceShared.requestWithReservation - floorShared.requestWithReservation) > 0.05) mismatched.push('request and reservation grouped otherwise');
      if (Math.abs(serviceShared.completionWithCapture - floorShared.completionWithCapture) > 0.05) mismatched.push('completion and capture grouped otherwise');
      if (Math.abs(serviceShared.keyWithRequest - floorShared.keyWithRequest) > 0.05) mismatched.push('data key and request grouped otherwise');
    }
    const sameWork = checkFloors.length > 0 && mismatched.length === 0;
    const statementFloor = floors[1];
    const listRatio = list.requestsPerSecond / statementFloor.requestsPerSecond;
    // The same comparison in CPU per request: steadier than the rates on a shared machine, whose load moves between the two phases.
    const listCpuRatio = (statementFloor.serviceCpuMs ?? NaN) / (list.serviceCpuMs ?? NaN);
    const runsNote = RUNS > 1 ? `, median of ${RUNS} runs` : '';
    // The paced tail against the check floor's at the same rate: the median runs' p99s, the service's at most 1.5x the floor's.
    const tailRatio = postAtRate.p99Ms / floorAtRate.p99Ms;
    const pacedMet = postAtRate.requestsPerSecond >= 0.98 * postRate && tailRatio <= PACED_TAIL_RATIO && postsAtRate.every((result) => errorsOf(result) === 0);
    const figures = (result: Result) => [result.requestsPerSecond.toFixed(0), result.p50Ms.toFixed(1), result.p99Ms.toFixed(1), String(errorsOf(result))];
    const rows = [
      [
        `${post.name}, closed loop${runsNote}`,
        ...figures(post),
        `>= 0.6x the check floor, 0 errors: ${checkRatio.toFixed(2)}x${sameWork || checkFloors.length === 0 ? '' : ` (not the service's work: ${mismatched.join(', ')})`}`,
        checkFloors.length === 0 ? 'skipped' : verdict(sameWork && checkRatio >= 0.6 && posts.every((result) => errorsOf(result) === 0)),
      ],
      [`${checkFloor.name}, closed loop${runsNote}`, ...figures(checkFloor), "(the check's floor)", ''],
      [
        `${postAtRate.name}${runsNote} (by p99)`,
        ...figures(postAtRate),
        `half the closed loop's rate sustained, p99 <= ${PACED_TAIL_RATIO}x the check floor's at that rate, 0 errors: ${tailRatio.toFixed(2)}x${POST_RATE === undefined ? '' : " (BENCH_POST_RATE set: not the target's rate)"}`,
        Number.isNaN(tailRatio) ? 'skipped' : verdict(POST_RATE === undefined && pacedMet),
      ],
      [`${floorAtRate.name}${runsNote} (by p99)`, ...figures(floorAtRate), "(the paced tail's floor)", ''],
      [`${byReference.name}, closed loop`, ...figures(byReference), '(for information)', ''],
      [
        `${list.name}, closed loop`,
        ...figures(list),
        `>= 0.9x the list's statement-per-request floor, 0 errors: ${listRatio.toFixed(2)}x (CPU per request, the floor's over the service's: ${listCpuRatio.toFixed(2)}x)`,
        Number.isNaN(listRatio) ? 'skipped' : verdict(listRatio >= 0.9 && errorsOf(list) === 0),
      ],
      [listAtRate.name, ...figures(listAtRate), '(for information)', ''],
      ...floors.map((floor) => [`${floor.name}, closed loop`, ...figures(floor), floor === statementFloor ? "(the list's floor)" : "(the machine's floor: for information)", '']),
    ];
    process.stdout.write(
      `\nbench:api — ${cpus().length} cores, ${cpu}, Node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s each, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')} at the end, peak RSS of the service ${rssMb.toFixed(0)} MiB; ${writebackSettings()}\n\n`,
    );
    const memoryMet = rssMb <= PEAK_RSS_TARGET_MB;
    process.stdout.write(
      `Memory: peak RSS of the service ${rssMb.toFixed(0)} MiB, target <= ${PEAK_RSS_TARGET_MB} MiB: ${verdict(memoryMet)}` +
        (atPeak === undefined
          ? '\n\n'
          : `; at the largest sampled RSS (${atPeak.rssMb.toFixed(0)} MiB): V8 heap ${atPeak.heapMb.toFixed(0)} MiB (${((100 * atPeak.heapMb) / atPeak.rssMb).toFixed(0)} %; young generation ${atPeak.newSpaceMb.toFixed(0)} MiB), external ${atPeak.externalMb.toFixed(0)} MiB, the rest ${(atPeak.rssMb - atPeak.heapMb - atPeak.externalMb).toFixed(0)} MiB; V8 flags ${[...V8_FLAGS, ...(process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '')].join(' ') || '(none)'}\n\n`),
    );
    process.stdout.write('| route | req/s | p50 ms | p99 ms | non-2xx + errors | target | result |\n|---|---|---|---|---|---|---|\n');
    for (const row of rows) process.stdout.write(`| ${(row[1] === 'NaN' ? [row[0], '-', '-', '-', '-', row[5], 'skipped'] : row).join(' | ')} |\n`);
    if (RUNS > 1 && posts.length > 0) {
      process.stdout.write(`\nRun by run: service closed loop ${posts.map((result) => result.requestsPerSecond.toFixed(0)).join(', ')} req/s`);
      if (checkFloors.length > 0)
        process.stdout.write(
          `; check floor ${checkFloors.map((result) => result.requestsPerSecond.toFixed(0)).join(', ')} req/s; ratios ${checkFloors.map((floor, run) => (posts[run].requestsPerSecond / floor.requestsPerSecond).toFixed(2)).join(', ')}`,
        );
      process.stdout.write(`; paced p99 ${postsAtRate.map((result) => result.p99Ms.toFixed(1)).join(', ')} ms`);
      if (floorsAtRate.length > 0) process.stdout.write(`; check floor paced p99 ${floorsAtRate.map((result) => result.p99Ms.toFixed(1)).join(', ')} ms`);
      process.stdout.write('\n');
    }
    // CPU per request: what a request costs the process measured and PostgreSQL, whatever else the machine runs.
    const costed = [post, checkFloor, byReference, postAtRate, floorAtRate, list, ...floors].filter(
      (result) => result.serviceCpuMs !== undefined && Number.isFinite(result.requestsPerSecond),
    );
    if (costed.length > 0) {
      process.stdout.write(
        '\n| route | process CPU ms/request (the service, or the floor) | PostgreSQL CPU ms/request | commits/request | rows inserted/request |\n|---|---|---|---|---|\n',
      );
      for (const result of costed) {
        process.stdout.write(
          `| ${result.name} | ${result.serviceCpuMs?.toFixed(3)} | ${result.postgresCpuMs?.toFixed(3)} | ${result.commits?.toFixed(2) ?? '-'} | ${result.inserted?.toFixed(2) ?? '-'} |\n`,
        );
      }
    }
    // The one wallet's queue, which a paced check waits on twice (benchmarks.md, the wallet's queue).
    const queued = [...posts, ...postsAtRate].filter((result) => result.walletQueue !== undefined);
    if (queued.length > 0) {
      process.stdout.write(
        "\nThe wallet's queue (the service's metrics over each POST phase; every check charges one wallet)\n\n| phase | batches/s | commands per batch | ms per batch | wallet busy | mean wait of a command, ms | event-loop delay, mean / p99 ms |\n|---|---|---|---|---|---|---|\n",
      );
      for (const result of queued) {
        const queue = result.walletQueue as WalletQueueFigures;
        const phaseName = posts.includes(result) ? `${result.name}, closed loop, run ${posts.indexOf(result) + 1}` : `${result.name}, run ${postsAtRate.indexOf(result) + 1}`;
        process.stdout.write(
          `| ${phaseName} | ${queue.batchesPerSecond.toFixed(0)} | ${queue.commandsPerBatch.toFixed(1)} | ${queue.batchMs.toFixed(1)} | ${(100 * queue.busy).toFixed(0)} % | ${queue.waitMs.toFixed(1)} | ${queue.loopDelayMeanMs === undefined ? '-' : `${queue.loopDelayMeanMs.toFixed(1)} / ${(queue.loopDelayP99Ms ?? Number.NaN).toFixed(1)}`} |\n`,
        );
      }
    }
    // The check floor's honesty: what each side wrote per check, table by table (median runs).
    if (post.tables !== undefined && checkFloor.tables !== undefined) {
      const serviceTables = post.tables;
      const floorTables = checkFloor.tables;
      const tables = [...new Set([...serviceTables.keys(), ...floorTables.keys()])].sort().filter((table) => {
        const rows = [serviceTables.get(table), floorTables.get(table)];
        return rows.some((row) => row !== undefined && (Math.abs(row.inserted) >= 0.005 || Math.abs(row.updated) >= 0.005));
      });
      process.stdout.write(`\nPer check, service and check floor (${floorPlan}): the floor does the same work: ${sameWork ? 'yes' : `NO (${mismatched.join(', ')})`}\n\n`);
      process.stdout.write('| table | rows inserted, service | rows inserted, floor | rows updated, service | rows updated, floor |\n|---|---|---|---|---|\n');
      for (const table of tables) {
        const service = serviceTables.get(table);
        const floor = floorTables.get(table);
        process.stdout.write(
          `| ${table}${BATCH_FOLDED_TABLES.has(table) ? ' (inserts depend on projection batches: not compared)' : ''} | ${service?.inserted.toFixed(3) ?? '-'} | ${floor?.inserted.toFixed(3) ?? '-'} | ${service?.updated.toFixed(3) ?? '-'} | ${floor?.updated.toFixed(3) ?? '-'} |\n`,
        );
      }
      process.stdout.write(`| (commits, pg_stat_database) | ${post.commits?.toFixed(3)} | ${checkFloor.commits?.toFixed(3)} | | |\n`);
      const share = (shared: { requestWithReservation: number; completionWithCapture: number } | undefined) =>
        shared === undefined ? '-' : `${shared.requestWithReservation.toFixed(3)} / ${shared.completionWithCapture.toFixed(3)}`;
      process.stdout.write(
        `| (checks whose request shares its reservation's transaction / completion its capture's, every check in the log) | ${share(serviceShared)} | ${share(floorShared)} | | |\n`,
      );
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:api failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
