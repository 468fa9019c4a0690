/**
 * Benchmark of the projections: `npm run bench:projections`.
 *
 * 1. BENCH_EVENTS (default 1,000,000) events written straight into the event log: 100
 *    organizations, then verifications requested, reserved, completed (80 %) or failed (20 %), and
 *    debited or released.
 * 2. Catch-up of each projection alone from position 0 (the production runner, batches of 1,000):
 *    the projection's own events per second.
 * 3. Rebuild of all read models at once (shadow tables, catch-up, swap), as
 *    `npm run projections:rebuild -- --all` does.
 * 4. GET /v1/verifications through the real HTTP app for one organization holding BENCH_LIST_ROWS
 *    (default 1,000,000) verifications, seeded straight into the read model: p99 of page 1 and
 *    page 5,000, with and without a status filter.
 *
 * PostgreSQL: DATABASE_URL when set (a database named ledger_bench_* is created and dropped there),
 * else an ephemeral embedded cluster. Progress on stderr, the table on stdout.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createApp } from '../src/app.factory.js';
import { loadConfig } from '../src/config/config.js';
import { hashApiKey } from '../src/auth/api-key.js';
import { PROJECTIONS } from '../projections/index.js';
import { rebuildProjection } from '../projections/rebuild/rebuild.js';
import { ProjectionRunner } from '../projections/runner/projection-runner.js';
import { writeSampleLog } from '../projections/runner/sample-log.testing.js';
import { benchDatabase, format, runBench, runCleanups, sizeFromEnv, status } from './bench-support.js';

const ORGANIZATIONS = 100;
const LIST_REQUESTS = 200;
const LIST_WARMUP = 20;
/** Below this many events a projection's catch-up time is its start-up, not its throughput. */
const MIN_EVENTS_FOR_RATE = 10_000;
const TARGETS = { catchUpEventsPerSecond: 20_000, rebuildSeconds: 90, page1P99Ms: 20, page5000P99Ms: 100 };


/** The position of the newest event in the given stream categories (a category is the stream id before its first '-'). */
async function lastPositionOf(pool: pg.Pool, categories: readonly string[]): Promise<bigint> {
  const { rows } = await pool.query<{ last: string | null }>(`select max(position)::text as last from events where split_part(stream_id, '-', 1) = any($1)`, [categories]);
  return BigInt(rows[0].last ?? '0');
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const events = sizeFromEnv('BENCH_EVENTS', 1_000_000, { min: 1_000, max: 50_000_000 });
  const listRows = sizeFromEnv('BENCH_LIST_ROWS', 1_000_000, { min: 1_000, max: 50_000_000 });
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const { url, pool, store } = await benchDatabase('projections', 16, cleanups);

    // 1. The log.
    const verifications = Math.max(1, Math.floor((events - ORGANIZATIONS * 4) / 4));
    status(`writing ${format(events)} events (${ORGANIZATIONS} organizations, ${format(verifications)} verifications) straight into the log`);
    let started = performance.now();
    let lastReport = 0;
    const log = await writeSampleLog(pool, {
      organizations: ORGANIZATIONS,
      verifications,
      onProgress: (written) => {
        if (written - lastReport >= 100_000) {
          lastReport = written;
          status(`  ${format(written)} events written`);
        }
      },
    });
    await pool.query('vacuum analyze events');
    const writeSeconds = (performance.now() - started) / 1000;
    status(`log: ${format(log.events)} events in ${writeSeconds.toFixed(1)} s`);

    // 2. Catch-up of each projection alone.
    const catchUp: { name: string; events: number; seconds: number }[] = [];
    for (const projection of PROJECTIONS) {
      let applied = 0;
      // Caught up means: the projection's own last event is applied (its categories' last event may
      // come before the log's last one), not merely a first batch shorter than the maximum.
      const target = await lastPositionOf(pool, projection.categories);
      started = performance.now();
      const runner = new ProjectionRunner(pool, store, projection, { maxBatch: 1_000, maxAttempts: 3, onBatch: ({ size }) => (applied += size) });
      runner.start();
      let failure: unknown;
      runner.finished.catch((error: unknown) => (failure = error));
      let ticks = 0;
      while (failure === undefined && runner.metrics.position < target) {
        await new Promise((resolveWait) => setTimeout(resolveWait, 20));
        if (++ticks % 250 === 0) status(`  ${projection.name}: ${format(applied)} events, ${format(runner.metrics.eventsPerSecond())} events/s`);
      }
      await runner.stop();
      if (failure !== undefined) throw failure;
      const seconds = (performance.now() - started) / 1000;
      catchUp.push({ name: projection.name, events: applied, seconds });
      status(`catch-up ${projection.name}: ${format(applied)} events in ${seconds.toFixed(1)} s = ${format(applied / seconds)} events/s`);
    }

    // 3. Rebuild of every read model, concurrently, as the CLI does.
    status('rebuilding all read models');
    started = performance.now();
    const rebuilt = await Promise.all(PROJECTIONS.map((projection) => rebuildProjection(pool, store, url, projection, { maxBatch: 1_000 })));
    const rebuildSeconds = (performance.now() - started) / 1000;
    if (rebuilt.some((result) => result.outcome !== 'swapped')) throw new Error('a rebuild did not swap');
    status(`rebuild all: ${rebuildSeconds.toFixed(1)} s`);

    // 4. The list endpoint on a large organization.
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

    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: url, DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'), DATA_DIR: join(tmpdir(), `ledger-bench-${process.pid}`), RUN_PROJECTIONS: 'false', LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: '1000000' });
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
    const list: { label: string; p50: number; p99: number; total: unknown }[] = [];
    for (const entry of cases) {
      const timings: number[] = [];
      let total: unknown;
      for (let i = 0; i < LIST_WARMUP + LIST_REQUESTS; i++) {
        const t0 = performance.now();
        const response = await fetch(`${base}${entry.path}`, { headers: { 'x-service-key': key } });
        const body = (await response.json()) as { status: boolean; data?: unknown[]; meta?: { total?: number } };
        const ms = performance.now() - t0;
        if (response.status !== 200 || !Array.isArray(body.data) || body.data.length === 0) throw new Error(`${entry.path} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
        total = body.meta?.total;
        if (i >= LIST_WARMUP) timings.push(ms);
      }
      timings.sort((a, b) => a - b);
      list.push({ label: entry.label, p50: percentile(timings, 50), p99: percentile(timings, 99), total });
      status(`list ${entry.label}: p50 ${percentile(timings, 50).toFixed(1)} ms, p99 ${percentile(timings, 99).toFixed(1)} ms (total ${String(total)})`);
    }

    // The table.
    const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
    const cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
    const version = (await pool.query<{ server_version: string }>('show server_version')).rows[0].server_version;
    const mark = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const lines = [
      `## Projections benchmark`,
      '',
      `Machine: ${cpus().length} cores (${cpuModel}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, PostgreSQL ${version}, Node ${process.version}`,
      `Log: ${format(log.events)} events (${ORGANIZATIONS} organizations), written in ${writeSeconds.toFixed(1)} s straight into the events table`,
      '',
      '| measure | value | target |',
      '|---|---|---|',
      ...catchUp.map((entry) => {
        const rate = entry.events / entry.seconds;
        // A few hundred events take less than the runner's start (lock, checkpoint, first read): no throughput figure.
        if (entry.events < MIN_EVENTS_FOR_RATE) {
          return `| catch-up ${entry.name} (${format(entry.events)} events) | ${entry.seconds.toFixed(2)} s in all (start-up bound) | not a throughput figure |`;
        }
        return `| catch-up ${entry.name} (${format(entry.events)} events) | ${format(rate)} events/s | ≥ ${format(TARGETS.catchUpEventsPerSecond)}: ${mark(rate >= TARGETS.catchUpEventsPerSecond)} |`;
      }),
      `| rebuild all read models | ${rebuildSeconds.toFixed(1)} s | ≤ ${TARGETS.rebuildSeconds} s: ${mark(rebuildSeconds <= TARGETS.rebuildSeconds)} |`,
      ...list.map((entry) => {
        const target = entry.label.startsWith('page 1') ? TARGETS.page1P99Ms : TARGETS.page5000P99Ms;
        return `| GET /v1/verifications ${entry.label} (${format(listRows)} rows) | p99 ${entry.p99.toFixed(1)} ms (p50 ${entry.p50.toFixed(1)}) | ≤ ${target} ms: ${mark(entry.p99 <= target)} |`;
      }),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await runCleanups(cleanups);
  }
}

runBench(main);
