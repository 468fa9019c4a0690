/**
 * Benchmark of the projections: `npm run bench:projections`.
 *
 * 1. BENCH_EVENTS (default 1,000,000) events generated inside PostgreSQL straight into the event
 *    log (writeSampleLogInDatabase): 100 organizations, then verifications requested, reserved,
 *    completed (80 %) or failed (20 %), and debited or released. With BENCH_DATABASE the database
 *    is kept, and a later run on it reuses its log (the read models are reset).
 * 2. Catch-up of each projection alone from position 0 (the production runner with its default
 *    options): the projection's own events per second, and the CPU time per event of this process
 *    and of its PostgreSQL sessions (the cost that sets the rate on an idle machine). Each is
 *    followed by its floor, in this process: the same pages of the projection's events read by the
 *    same reader (pageReader, one page read ahead), and the rows the catch-up wrote (taken from its
 *    tables beforehand) written with COPY into identical tables (`like … including all`), a share
 *    per page. BENCH_RUNS (default 3) runs of both, one after the other: the median ratio of the
 *    floor's time to the catch-up's, target at least 0.5.
 * 3. Rebuild of each projection alone (shadow tables, catch-up, swap), as
 *    `npm run projections:rebuild -- <name>` does: its events per second and the CPU per event of
 *    this process and of PostgreSQL.
 * 4. Rebuild of all read models at once, as `npm run projections:rebuild -- --all` does: the time,
 *    and each projection's events per second.
 * 5. GET /v1/verifications through the real HTTP app for one organization holding BENCH_LIST_ROWS
 *    (default 1,000,000) verifications, seeded straight into the read model: p99 of page 1 and
 *    page 5,000, with and without a status filter.
 * 6. The retention sweep beside the check rate, on a database of its own through the real app with
 *    its projection workers: BENCH_RETENTION_CHECKS (default 2,000) nin checks made over HTTP,
 *    BENCH_RETENTION_CONNECTIONS (100) at a time (the service's closed-loop checks per second), then
 *    the sweep erasing all of them once past the organization's retention (its erasures per second,
 *    and their ratio), one instance, same run.
 * 7. The database's size.
 *
 * BENCH_PHASES (a comma list of catch-up, rebuild-each, rebuild, list, retention; all by default)
 * runs only some phases, and BENCH_PROJECTIONS (a comma list of names) only some projections in the
 * catch-up and rebuild-each phases: for iterating on one cost at a time on a kept log;
 * BENCH_PAGE_EVENTS sets the runners' page size. The size is measured in every run.
 *
 * PostgreSQL: DATABASE_URL when set (a database named ledger_bench_* is created and dropped there),
 * else an ephemeral embedded cluster. Progress on stderr, the table on stdout, with the machine's
 * load average at each phase (absolute rates on a shared machine follow it).
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { pageReader, pagesAfter } from '../projections/bulk/event-pages.js';
import { createApp } from '../src/app.factory.js';
import { loadConfig } from '../src/config/config.js';
import { hashApiKey } from '../src/auth/api-key.js';
import { PROJECTIONS } from '../projections/index.js';
import { rebuildProjection } from '../projections/rebuild/rebuild.js';
import type { Projection } from '../projections/projection.js';
import { shadowTableName } from '../projections/runner/locks.js';
import { DEFAULT_PAGE_EVENTS, DEFAULT_RUNNER_OPTIONS, ProjectionRunner } from '../projections/runner/projection-runner.js';
import type { PostgresEventStore } from '../src/event-store/postgres-event-store.js';
import { writeSampleLogInDatabase } from '../src/event-store/postgres-sample-log.testing.js';
import { RetentionSweep } from '../src/verifications/retention.js';
import { benchDatabase, format, runBench, runCleanups, sizeFromEnv, status } from './bench-support.js';

const ORGANIZATIONS = 100;
const LIST_REQUESTS = 200;
const LIST_WARMUP = 20;
/** Below this many events a projection's catch-up time is its start-up, not its throughput. */
const MIN_EVENTS_FOR_RATE = 10_000;
const TARGETS = { catchUpFloorRatio: 0.5, rebuildEventsPerSecond: 100_000, page1P99Ms: 20, page5000P99Ms: 100 };
const CLOCK_TICKS_PER_SECOND = 100;
const PHASES = ['catch-up', 'rebuild-each', 'rebuild', 'list', 'retention'];
/**
 * Checks in flight at once while the retention phase makes its checks: a closed loop of as many
 * connections as bench:api's (BENCH_RETENTION_CONNECTIONS), so its rate is the service's check rate.
 */
const RETENTION_CONCURRENCY = sizeFromEnv('BENCH_RETENTION_CONNECTIONS', 100, { min: 1, max: 1_000 });
const DAY_MS = 86_400_000;

const cpuText = (cpu: CpuPerEvent) => `${format(cpu.clientCpuUs)} µs / ${cpu.databaseCpuUs === undefined ? '?' : format(cpu.databaseCpuUs)} µs`;

const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' / ');

/** CPU seconds a local process has used (Linux /proc), or undefined when it cannot be read (another host). */
function processCpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/**
 * The CPU seconds used so far by this database's client sessions, when PostgreSQL runs on this
 * machine. Asked on a session of its own (`meter`), outside the pool: the asking session leaves
 * itself out, and a pool session asking would leave out its own work for the runner.
 */
async function sessionsCpu(meter: pg.Client): Promise<Map<number, number> | undefined> {
  const { rows } = await meter.query<{ pid: number; datname: string }>(
    `select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`,
  );
  const seconds = new Map<number, number>();
  for (const { pid } of rows) {
    const used = processCpuSeconds(pid);
    if (used === undefined) return undefined;
    seconds.set(pid, used);
  }
  return seconds;
}

interface CpuPerEvent {
  readonly clientCpuUs: number;
  readonly databaseCpuUs: number | undefined;
}

/**
 * Starts counting the CPU of this process and of the database's sessions; the function returned
 * stops and divides by the events applied. Sessions opened meanwhile count from zero, and the
 * bench's pool keeps them open until it ends.
 */
async function startCpuMeter(meter: pg.Client): Promise<(events: number) => Promise<CpuPerEvent>> {
  const cpuBefore = process.cpuUsage();
  const sessionsBefore = await sessionsCpu(meter);
  return async (events) => {
    const cpu = process.cpuUsage(cpuBefore);
    const sessionsAfter = await sessionsCpu(meter);
    let databaseCpu: number | undefined;
    if (sessionsBefore !== undefined && sessionsAfter !== undefined) {
      databaseCpu = 0;
      for (const [pid, used] of sessionsAfter) databaseCpu += used - (sessionsBefore.get(pid) ?? 0);
    }
    const perEvent = (cpuSeconds: number) => (cpuSeconds * 1e6) / Math.max(1, events);
    return { clientCpuUs: perEvent((cpu.user + cpu.system) / 1e6), databaseCpuUs: databaseCpu === undefined ? undefined : perEvent(databaseCpu) };
  };
}

/**
 * The CPU per event, and the rate it allows at most: the machine's cores divided by the CPU both
 * sides spend on an event, however well they overlap. A rate below that bound was lost to waiting
 * (one side idle while the other works); a bound below the target says that the CPU per event
 * itself must fall for this machine to reach it. (Left out: CPU not counted, such as an index
 * build's parallel workers, which only makes the bound higher than the truth.)
 */
const cpuCell = (entry: CpuPerEvent) => {
  if (entry.databaseCpuUs === undefined) return `${entry.clientCpuUs.toFixed(1)} / n/a µs`;
  const bound = (cpus().length * 1e6) / (entry.clientCpuUs + entry.databaseCpuUs);
  return `${entry.clientCpuUs.toFixed(1)} / ${entry.databaseCpuUs.toFixed(1)} µs: at most ${format(bound)} events/s on ${cpus().length} cores`;
};

/** Empties a projection's tables and checkpoints (a kept database's earlier run). */
async function resetProjection(pool: pg.Pool, projection: Projection): Promise<void> {
  for (const table of projection.tables) {
    await pool.query(`drop table if exists ${shadowTableName(table)}`);
    await pool.query(`truncate ${table}`);
  }
  await pool.query('delete from projection_checkpoints where name = $1 or name = $2', [projection.name, `${projection.name}__rebuild`]);
}

/** The position of the newest event in the given stream categories (a category is the stream id before its first '-'). */
async function lastPositionOf(pool: pg.Pool, categories: readonly string[]): Promise<bigint> {
  const { rows } = await pool.query<{ last: string | null }>(`select max(position)::text as last from events where split_part(stream_id, '-', 1) = any($1)`, [categories]);
  return BigInt(rows[0].last ?? '0');
}

/** One table's rows as the catch-up left them, in COPY's text format (generated columns left out). */
interface TableRows {
  readonly table: string;
  readonly columns: string;
  readonly text: Buffer;
  /** Where each row ends (after its newline). */
  readonly ends: number[];
}

async function tableRows(pool: pg.Pool, table: string): Promise<TableRows> {
  const { rows } = await pool.query<{ name: string }>(
    `select quote_ident(attname) as name from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped and attgenerated = '' order by attnum`,
    [table],
  );
  const columns = rows.map((row) => row.name).join(', ');
  const client = await pool.connect();
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of client.query(copyTo(`copy (select ${columns} from ${table}) to stdout`)) as AsyncIterable<Buffer>) chunks.push(chunk);
  } finally {
    client.release();
  }
  const text = Buffer.concat(chunks);
  const ends: number[] = [];
  for (let end = text.indexOf(0x0a); end >= 0; end = text.indexOf(0x0a, end + 1)) ends.push(end + 1);
  return { table, columns, text, ends };
}

/**
 * A projection's catch-up floor: the same pages of its events, read by the same reader one page
 * ahead, and for each page its share of the rows the catch-up wrote (by events: after a page that
 * brings the count to n of `events`, n / events of each table's rows are written), copied into
 * identical tables made beforehand (`bench_floor_<table>`, indexes included). Answers the events read.
 */
async function catchUpFloor(
  pool: pg.Pool,
  store: PostgresEventStore,
  projection: Projection,
  pageEvents: number,
  events: number,
  tables: readonly TableRows[],
): Promise<{ events: number; seconds: number; cpuUs: number }> {
  const client = await pool.connect();
  try {
    for (const { table } of tables) {
      await client.query(`drop table if exists bench_floor_${table}`);
      await client.query(`create table bench_floor_${table} (like ${table} including all)`);
    }
    const written = tables.map(() => 0);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let read = 0;
    for await (const page of pagesAfter(pageReader(store, projection.categories), 0n, pageEvents, () => true)) {
      read += page.length;
      for (let t = 0; t < tables.length; t++) {
        const { table, columns, text, ends } = tables[t];
        const upTo = read >= events ? ends.length : Math.floor((ends.length * read) / events);
        if (upTo <= written[t]) continue;
        const from = written[t] === 0 ? 0 : ends[written[t] - 1];
        const stream = client.query(copyFrom(`copy bench_floor_${table} (${columns}) from stdin`));
        await pipeline(Readable.from([text.subarray(from, ends[upTo - 1])]), stream);
        written[t] = upTo;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    for (const { table } of tables) await client.query(`drop table bench_floor_${table}`);
    return { events: read, seconds, cpuUs: (cpu.user + cpu.system) / Math.max(1, read) };
  } finally {
    client.release();
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const events = sizeFromEnv('BENCH_EVENTS', 1_000_000, { min: 1_000, max: 50_000_000 });
  const runs = sizeFromEnv('BENCH_RUNS', 3, { min: 1, max: 9 });
  const listRows = sizeFromEnv('BENCH_LIST_ROWS', 1_000_000, { min: 1_000, max: 50_000_000 });
  // The runner's page size (its default unless set), for trying others.
  const pageEvents = process.env.BENCH_PAGE_EVENTS === undefined ? undefined : sizeFromEnv('BENCH_PAGE_EVENTS', 0, { min: 1, max: 100_000 });
  const phases = new Set((process.env.BENCH_PHASES ?? PHASES.join(',')).split(',').map((phase) => phase.trim()));
  for (const phase of phases) if (!PHASES.includes(phase)) throw new Error(`BENCH_PHASES: unknown phase ${phase}`);
  const only = process.env.BENCH_PROJECTIONS?.split(',').map((name) => name.trim());
  const caughtUp = PROJECTIONS.filter((projection) => only === undefined || only.includes(projection.name));
  if (only !== undefined && caughtUp.length !== only.length) throw new Error('BENCH_PROJECTIONS names a projection that does not exist');
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    // Sessions never end idle (pg.Pool ends them after 10 s by default): the CPU of one that ended
    // between the two reads of a phase would be lost to its PostgreSQL figure.
    const { url, pool, store } = await benchDatabase('projections', 16, cleanups, { idleTimeoutMillis: 0 });
    const meter = new pg.Client({ connectionString: url, application_name: 'bench-meter' });
    await meter.connect();
    cleanups.push(() => meter.end());

    // 1. The log (kept from an earlier run on BENCH_DATABASE, when it holds one).
    const verifications = Math.max(1, Math.floor((events - ORGANIZATIONS * 4) / 4));
    let started = performance.now();
    const existing = Number((await pool.query<{ count: string }>('select count(*) as count from events')).rows[0].count);
    let log: { events: number };
    let writeSeconds: number | undefined;
    if (existing > 0) {
      log = { events: existing };
      status(`log: ${format(existing)} events already in the kept database, reused`);
    } else {
      status(`writing ${format(events)} events (${ORGANIZATIONS} organizations, ${format(verifications)} verifications) straight into the log (load ${load()})`);
      log = await writeSampleLogInDatabase(pool, { organizations: ORGANIZATIONS, verifications, onProgress: (written) => status(`  ${format(written)} events written`) });
      await pool.query('vacuum analyze events');
      writeSeconds = (performance.now() - started) / 1000;
      status(`log: ${format(log.events)} events in ${writeSeconds.toFixed(1)} s`);
    }
    for (const projection of PROJECTIONS) await resetProjection(pool, projection);

    // 2. Catch-up of each projection alone, each run followed by its floor.
    type CatchUpRun = { events: number; seconds: number; load: string; floorSeconds: number; floorCpuUs: number } & CpuPerEvent;
    const catchUp: ({ name: string; ratios: number[] } & CatchUpRun)[] = [];
    for (const projection of phases.has('catch-up') ? caughtUp : []) {
      const projectionRuns: CatchUpRun[] = [];
      // A projection with a few events is timed once, without a floor: its time is the runner's start-up.
      const startUpBound = () => (projectionRuns.at(-1)?.events ?? MIN_EVENTS_FOR_RATE) < MIN_EVENTS_FOR_RATE;
      for (let run = 0; run < runs && !startUpBound(); run++) {
        await resetProjection(pool, projection);
        let applied = 0;
        // Caught up means: the projection's own last event is applied (its categories' last event may
        // come before the log's last one), not merely a first batch shorter than the maximum.
        const target = await lastPositionOf(pool, projection.categories);
        const loadBefore = load();
        const stopMeter = await startCpuMeter(meter);
        started = performance.now();
        const runner = new ProjectionRunner(pool, store, projection, {
          ...DEFAULT_RUNNER_OPTIONS,
          ...(pageEvents === undefined ? {} : { pageEvents }),
          onBatch: ({ size }) => (applied += size),
        });
        runner.start();
        let failure: unknown;
        runner.finished.catch((error: unknown) => (failure = error));
        let ticks = 0;
        while (failure === undefined && runner.metrics.position < target) {
          await new Promise((resolveWait) => setTimeout(resolveWait, 20));
          if (++ticks % 250 === 0) status(`  ${projection.name}: ${format(applied)} events, ${format(runner.metrics.eventsPerSecond())} events/s`);
        }
        const seconds = (performance.now() - started) / 1000;
        const cpu = await stopMeter(applied);
        await runner.stop();
        if (failure !== undefined) throw failure;
        if (applied < MIN_EVENTS_FOR_RATE) {
          projectionRuns.push({ events: applied, seconds, ...cpu, load: loadBefore, floorSeconds: Number.NaN, floorCpuUs: Number.NaN });
          status(`catch-up ${projection.name}: ${format(applied)} events in ${seconds.toFixed(2)} s (start-up bound, no floor)`);
          continue;
        }
        const rows: TableRows[] = [];
        for (const table of projection.tables) rows.push(await tableRows(pool, table));
        const floor = await catchUpFloor(pool, store, projection, pageEvents ?? DEFAULT_PAGE_EVENTS, applied, rows);
        if (floor.events !== applied) throw new Error(`the floor of ${projection.name} read ${floor.events} events, the catch-up applied ${applied}`);
        projectionRuns.push({ events: applied, seconds, ...cpu, load: loadBefore, floorSeconds: floor.seconds, floorCpuUs: floor.cpuUs });
        status(
          `catch-up ${projection.name}: ${format(applied)} events in ${seconds.toFixed(2)} s = ${format(applied / seconds)} events/s, ${cpu.clientCpuUs.toFixed(1)} µs CPU per event here; floor ${floor.seconds.toFixed(2)} s (${format(rows.reduce((sum, table) => sum + table.ends.length, 0))} rows), ${floor.cpuUs.toFixed(1)} µs: ${(floor.seconds / seconds).toFixed(2)}×, run ${run + 1}/${runs} (load ${loadBefore})`,
        );
      }
      if (startUpBound()) {
        catchUp.push({ name: projection.name, ratios: [], ...projectionRuns[0] });
        continue;
      }
      const ratios = projectionRuns.map((entry) => entry.floorSeconds / entry.seconds);
      const median = [...projectionRuns].sort((a, b) => a.floorSeconds / a.seconds - b.floorSeconds / b.seconds)[Math.floor(projectionRuns.length / 2)];
      catchUp.push({ name: projection.name, ratios, ...median });
    }

    // 3. Rebuild of each projection alone, as the CLI does for one name.
    const rebuiltAlone: ({ result: Awaited<ReturnType<typeof rebuildProjection>>; load: string } & CpuPerEvent)[] = [];
    for (const projection of phases.has('rebuild-each') ? caughtUp : []) {
      const loadBefore = load();
      status(`rebuilding ${projection.name} alone (load ${loadBefore})`);
      const stopMeter = await startCpuMeter(meter);
      const result = await rebuildProjection(pool, store, url, projection, { pageEvents });
      const cpu = await stopMeter(result.eventsApplied);
      if (result.outcome !== 'swapped') throw new Error(`the rebuild of ${projection.name} did not swap`);
      rebuiltAlone.push({ result, load: loadBefore, ...cpu });
      status(
        `rebuild ${projection.name}: ${format(result.eventsApplied)} events in ${result.seconds.toFixed(1)} s = ${format(result.eventsApplied / result.seconds)} events/s, ${cpuCell(cpu)} per event`,
      );
    }

    // 4. Rebuild of every read model, concurrently, as the CLI does.
    const rebuildLoad = load();
    let rebuildSeconds = 0;
    let rebuilt: Awaited<ReturnType<typeof rebuildProjection>>[] = [];
    if (phases.has('rebuild')) {
      status(`rebuilding all read models (load ${rebuildLoad})`);
      started = performance.now();
      rebuilt = await Promise.all(PROJECTIONS.map((projection) => rebuildProjection(pool, store, url, projection, { pageEvents })));
      rebuildSeconds = (performance.now() - started) / 1000;
      if (rebuilt.some((result) => result.outcome !== 'swapped')) throw new Error('a rebuild did not swap');
      status(
        `rebuild all: ${rebuildSeconds.toFixed(1)} s; ${rebuilt.map((result) => `${result.projection} ${format(result.eventsApplied)} events in ${result.seconds.toFixed(1)} s`).join(', ')}`,
      );
    }

    const list: { label: string; p50: number; p99: number; total: unknown }[] = [];
    if (phases.has('list')) {
      // 5. The list endpoint on a large organization.
      const organizationId = 'org_bench_list';
      const key = `service_test_${randomBytes(32).toString('base64url')}`;
      status(`seeding ${format(listRows)} verifications for one organization straight into the read model`);
      await pool.query(
        `insert into organizations (id, name, email, status, approved, active_scopes, created_at, updated_at)
         values ($1, 'Bench', 'bench@example.com', 'approved', true, array['nin','bvn'], now(), now())`,
        [organizationId],
      );
      await pool.query(
        `insert into api_keys (id, organization_id, name, key_hash, prefix, last4, environment, scopes, created_at)
         values ('key_bench_list', $1, 'bench', $2, 'service_test_', right($3, 4), 'test', null, now())`,
        [organizationId, hashApiKey(key), key],
      );
      started = performance.now();
      await pool.query(
        `insert into verifications (reference, organization_id, environment, key_id, scope, category, country_code, status, request, result, error_message, price_kobo, charged, created_at, completed_at)
         select 'vrf_list_' || lpad(i::text, 9, '0'), $1, 'test', 'key_bench_list', (array['nin','bvn','phone','bank_account'])[1 + i % 4], 'kyc', 'NG',
                (array['found','found','found','not_found','failed'])[1 + i % 5], '{"number":"12345678901"}', '{"firstName":"Test"}',
                case when i % 5 = 4 then 'The provider did not answer' end, 10000, i % 5 <> 4,
                timestamptz '2026-01-01' + i * interval '1 second', timestamptz '2026-01-01' + i * interval '1 second'
         from generate_series(1, $2::int) as i`,
        [organizationId, listRows],
      );
      // Rows seeded straight into the table bypass the projection, so its counts (the list's total) are seeded too.
      await pool.query(
        `insert into verification_counts (organization_id, environment, scope, status, count)
         select organization_id, environment, scope, status, count(*) from verifications where organization_id = $1 group by 1, 2, 3, 4`,
        [organizationId],
      );
      await pool.query('vacuum analyze verifications');
      status(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);

      const config = loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: url,
        DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        DATA_DIR: join(tmpdir(), `ledger-bench-${process.pid}`),
        RUN_PROJECTIONS: 'false',
        LOG_LEVEL: 'error',
        RATE_LIMIT_PER_MINUTE: '1000000',
        CONSOLE_MAIL_LOG_ONLY: 'true',
      });
      const app = await createApp({ config, databaseUrl: url, embedded: false, adminToken: undefined });
      await app.listen(0, '127.0.0.1');
      cleanups.push(() => app.close());
      const address = app.getHttpServer().address();
      const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
      const lastPage = Math.ceil(listRows / 20);
      const deepPage = Math.min(5_000, lastPage);
      const deepFilteredPage = Math.min(5_000, Math.ceil((listRows * 0.6) / 20));
      const cases = [
        { label: 'page 1', path: '/v1/verifications?page=1' },
        { label: `page ${deepPage}`, path: `/v1/verifications?page=${deepPage}` },
        { label: 'page 1, status=found', path: '/v1/verifications?page=1&status=found' },
        { label: `page ${deepFilteredPage}, status=found`, path: `/v1/verifications?page=${deepFilteredPage}&status=found` },
      ];
      for (const entry of cases) {
        const timings: number[] = [];
        let total: unknown;
        for (let i = 0; i < LIST_WARMUP + LIST_REQUESTS; i++) {
          const t0 = performance.now();
          const response = await fetch(`${base}${entry.path}`, { headers: { 'x-service-key': key } });
          const body = (await response.json()) as { status: boolean; data?: unknown[]; meta?: { total?: number } };
          const ms = performance.now() - t0;
          if (response.status !== 200 || !Array.isArray(body.data) || body.data.length === 0)
            throw new Error(`${entry.path} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
          total = body.meta?.total;
          if (i >= LIST_WARMUP) timings.push(ms);
        }
        timings.sort((a, b) => a - b);
        list.push({ label: entry.label, p50: percentile(timings, 50), p99: percentile(timings, 99), total });
        status(`list ${entry.label}: p50 ${percentile(timings, 50).toFixed(1)} ms, p99 ${percentile(timings, 99).toFixed(1)} ms (total ${String(total)})`);
      }
    }

    let retention: { checks: number; checksPerSecond: number; checkCpu: CpuPerEvent; erased: number; erasuresPerSecond: number; erasureCpu: CpuPerEvent; load: string } | undefined;
    if (phases.has('retention')) retention = await retentionPhase(sizeFromEnv('BENCH_RETENTION_CHECKS', 2_000, { min: 100, max: 1_000_000 }), cleanups);

    // 7. The database's size.
    const sizes = (
      await pool.query<{ database: string; events: string; read_models: string }>(
        `select pg_database_size(current_database()) as database, pg_total_relation_size('events') as events,
                (select sum(pg_total_relation_size(t::regclass)) from unnest($1::text[]) as t) as read_models`,
        [PROJECTIONS.flatMap((projection) => projection.tables)],
      )
    ).rows[0];
    const gib = (bytes: string) => `${(Number(bytes) / 2 ** 30).toFixed(2)} GiB`;

    // The table.
    const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
    const cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
    const version = (await pool.query<{ server_version: string }>('show server_version')).rows[0].server_version;
    const mark = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const lines = [
      `## Projections benchmark`,
      '',
      `Machine: ${cpus().length} cores (${cpuModel}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, PostgreSQL ${version}, Node ${process.version}; load average (1 / 5 / 15 min) at the end ${load()}`,
      `Log: ${format(log.events)} events (${ORGANIZATIONS} organizations), ${writeSeconds === undefined ? 'kept from an earlier run' : `written in ${writeSeconds.toFixed(1)} s inside PostgreSQL`}`,
      `Database: ${gib(sizes.database)} (events ${gib(sizes.events)}, read models ${gib(sizes.read_models)})`,
      '',
      '| measure | value | CPU per event (this process / PostgreSQL), and the rate it allows at most | load at start | target |',
      '|---|---|---|---|---|',
      ...catchUp.map((entry) => {
        const rate = entry.events / entry.seconds;
        const cpu = cpuCell(entry);
        // A few hundred events take less than the runner's start (lock, checkpoint, first read): no throughput figure.
        if (entry.events < MIN_EVENTS_FOR_RATE) {
          return `| catch-up ${entry.name} (${format(entry.events)} events) | ${entry.seconds.toFixed(2)} s in all (start-up bound) | | ${entry.load} | not a throughput figure |`;
        }
        const ratio = entry.floorSeconds / entry.seconds;
        return `| catch-up ${entry.name} (${format(entry.events)} events, median of ${runs}) | ${format(rate)} events/s; floor ${format(entry.events / entry.floorSeconds)} events/s (${entry.floorCpuUs.toFixed(1)} µs CPU per event here): **${ratio.toFixed(2)}×** (runs ${entry.ratios.map((value) => value.toFixed(2)).join(', ')}) | ${cpu} | ${entry.load} | ≥ ${TARGETS.catchUpFloorRatio}× the floor: ${mark(ratio >= TARGETS.catchUpFloorRatio)} |`;
      }),
      ...rebuiltAlone.map(({ result, load: loadBefore, ...cpu }) => {
        if (result.eventsApplied < MIN_EVENTS_FOR_RATE)
          return `| rebuild ${result.projection} alone (${format(result.eventsApplied)} events) | ${result.seconds.toFixed(2)} s in all (start-up bound) | | ${loadBefore} | not a throughput figure |`;
        const rate = result.eventsApplied / result.seconds;
        return `| rebuild ${result.projection} alone (${format(result.eventsApplied)} events) | ${format(rate)} events/s (${result.seconds.toFixed(1)} s) | ${cpuCell(cpu)} | ${loadBefore} | ≥ ${format(TARGETS.rebuildEventsPerSecond)}: ${mark(rate >= TARGETS.rebuildEventsPerSecond)} |`;
      }),
      ...(phases.has('rebuild') ? [`| rebuild all read models at once | ${rebuildSeconds.toFixed(1)} s | | ${rebuildLoad} | |`] : []),
      ...rebuilt.map((result) => {
        if (result.eventsApplied < MIN_EVENTS_FOR_RATE)
          return `| rebuild ${result.projection} (${format(result.eventsApplied)} events) | ${result.seconds.toFixed(2)} s in all (start-up bound) | | | not a throughput figure |`;
        const rate = result.eventsApplied / result.seconds;
        return `| rebuild ${result.projection} (${format(result.eventsApplied)} events, alongside the others) | ${format(rate)} events/s (${result.seconds.toFixed(1)} s) | | | ≥ ${format(TARGETS.rebuildEventsPerSecond)}: ${mark(rate >= TARGETS.rebuildEventsPerSecond)} |`;
      }),
      ...list.map((entry) => {
        const target = entry.label.startsWith('page 1') ? TARGETS.page1P99Ms : TARGETS.page5000P99Ms;
        return `| GET /v1/verifications ${entry.label} (${format(listRows)} rows) | p99 ${entry.p99.toFixed(1)} ms (p50 ${entry.p50.toFixed(1)}) | | | ≤ ${target} ms: ${mark(entry.p99 <= target)} |`;
      }),
      ...(retention === undefined
        ? []
        : [
            `| checks made over HTTP (${format(retention.checks)} nin, ${RETENTION_CONCURRENCY} at a time) | ${format(retention.checksPerSecond)} checks/s | ${cpuText(retention.checkCpu)} per check | ${retention.load} | |`,
            `| retention sweep of them, one instance (${format(retention.erased)} erased) | ${format(retention.erasuresPerSecond)} erasures/s: ${(retention.erasuresPerSecond / retention.checksPerSecond).toFixed(2)}× the check rate | ${cpuText(retention.erasureCpu)} per erasure | | ≥ 1×: ${mark(retention.erasuresPerSecond >= retention.checksPerSecond)} |`,
          ]),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await runCleanups(cleanups);
  }
}

/**
 * The retention sweep against the rate checks are made, in one run on one database: `checks` nin
 * checks through the real app (its projection workers filling the read model the sweep reads), then
 * one sweep past their retention, timed until every one is erased.
 */
async function retentionPhase(checks: number, cleanups: (() => Promise<unknown>)[]) {
  const { url } = await benchDatabase('retention', 4, cleanups);
  const adminToken = `admin_${randomBytes(24).toString('base64url')}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: url,
    DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DATA_DIR: join(tmpdir(), `ledger-bench-retention-${process.pid}`),
    ADMIN_TOKEN: adminToken,
    RUN_PROJECTIONS: 'true',
    LOG_LEVEL: 'error',
    RATE_LIMIT_PER_MINUTE: '1000000',
    SANDBOX_CREDIT_KOBO: '10000000000',
    CONSOLE_MAIL_LOG_ONLY: 'true',
  });
  const app = await createApp({ config, databaseUrl: url, embedded: false, adminToken });
  await app.listen(0, '127.0.0.1');
  cleanups.push(() => app.close());
  const address = app.getHttpServer().address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const call = async (method: string, path: string, body: unknown, headers: Record<string, string>) => {
    const response = await fetch(`${base}${path}`, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const parsed = (await response.json()) as { data?: Record<string, unknown> };
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(parsed).slice(0, 300)}`);
    return parsed.data ?? {};
  };
  const admin = { authorization: `Bearer ${adminToken}` };
  const organizationId = String((await call('POST', '/admin/v1/organizations', { name: 'Bench retention', email: 'retention@example.com' }, admin)).id);
  await call('POST', `/admin/v1/organizations/${organizationId}/approve`, {}, admin);
  await call('PUT', `/admin/v1/organizations/${organizationId}/retention`, { retentionDays: 1 }, admin);
  const key = String((await call('POST', `/admin/v1/organizations/${organizationId}/keys`, { environment: 'test' }, admin)).key);

  const meter = new pg.Client({ connectionString: url, application_name: 'bench-meter' });
  await meter.connect();
  cleanups.push(() => meter.end());
  const loadAtStart = load();
  let stopMeter = await startCpuMeter(meter);
  status(`retention: making ${format(checks)} nin checks, ${RETENTION_CONCURRENCY} at a time (load ${loadAtStart})`);
  let next = 0;
  let started = performance.now();
  await Promise.all(
    Array.from({ length: RETENTION_CONCURRENCY }, async () => {
      // Sandbox numbers ending in 5 to 9 are found (docs/sandbox.md).
      for (let n = next++; n < checks; n = next++) await call('POST', '/v1/nin', { nin: `6${String(n).padStart(9, '0')}7` }, { 'x-service-key': key });
    }),
  );
  const checksPerSecond = checks / ((performance.now() - started) / 1000);
  const checkCpu = await stopMeter(checks);
  status(`retention: ${format(checksPerSecond)} checks/s; waiting for the read model`);
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  cleanups.push(() => pool.end());
  const counted = async (erased: boolean) =>
    Number(
      (
        await pool.query<{ n: string }>(`select count(*) as n from verifications where organization_id = $1 and personal_data_erased_at is ${erased ? 'not ' : ''}null`, [
          organizationId,
        ])
      ).rows[0].n,
    );
  for (let waited = 0; (await counted(false)) < checks; waited++) {
    if (waited > 600) throw new Error('the read model did not show every check within a minute');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  stopMeter = await startCpuMeter(meter);
  started = performance.now();
  const report = await app.get(RetentionSweep).runOnce(new Date(Date.now() + 2 * DAY_MS));
  const seconds = (performance.now() - started) / 1000;
  const erasureCpu = await stopMeter(report.erased);
  if (report.erased !== checks) throw new Error(`the sweep erased ${report.erased} of ${checks} checks`);
  const erasuresPerSecond = report.erased / seconds;
  status(`retention: ${format(erasuresPerSecond)} erasures/s (${format(report.erased)} in ${seconds.toFixed(1)} s)`);
  return { checks, checksPerSecond, checkCpu, erased: report.erased, erasuresPerSecond, erasureCpu, load: loadAtStart };
}

runBench(main);
