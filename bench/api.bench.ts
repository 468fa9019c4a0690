/**
 * `npm run bench:api`: the HTTP API under load, on the embedded default with the sandbox provider.
 *
 * The service runs as its own process (node dist/src/main.js, a fresh embedded PostgreSQL under a
 * temporary DATA_DIR) so that the load generator does not share its event loop. Measures:
 *   1. POST /v1/nin (sandbox found), after a 10 s warm-up at 300/s: paced at a steady 600
 *      requests/s (open loop, at most 100 connections) for BENCH_SECONDS (default 30), then 100
 *      connections in a closed loop for as long.
 *   2. GET /v1/verifications/{reference} over the checks the POST phases wrote, closed loop;
 *      GET /v1/verifications with 100,000 verifications in the organization (rows seeded straight
 *      into the read model, as the issue allows): 100 connections in a closed loop, then, for
 *      information, paced at 1,000 requests/s.
 *   3. The machine's floors: the list's closed loop again, against bare node:http servers
 *      (floor-server.ts) that give the service's own answer from memory, by the list's statement
 *      per request, and by one statement shared by the requests waiting for it, so that a run
 *      shows what latency the load generator and the two cores allow before the service adds any.
 * Prints req/s, p50/p99 latency, non-2xx count and the service's peak RSS. Targets (2 cores):
 * >= 600 verifications/s at p99 <= 50 ms with no errors; list p99 <= 20 ms.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../src/database/embedded-postgres.js';
import { pacedLoad, type PacedLoadOptions, type PacedLoadResult } from './paced-load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const LIST_ROWS = Number(process.env.BENCH_LIST_ROWS ?? 100_000);
/** BENCH_WARMUP_SECONDS: how long the POST warm-up runs (paced at half the POST rate). */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
/** BENCH_SERIES=1: print each paced phase's latency second by second (p50, p99, max), to see what made its tail. */
const SERIES = process.env.BENCH_SERIES === '1';
/** BENCH_ONLY=post or list: run only that route's phases (for profiling one of them). */
const ONLY = process.env.BENCH_ONLY ?? '';
/** BENCH_POST_RATE: the paced POST phase's rate (default 600/s, the target's); lower it to compare changes on a slower machine. */
const POST_RATE = Number(process.env.BENCH_POST_RATE ?? 600);
/** BENCH_CLOSED=0: skip the POST closed loop (the maximum throughput). */
const POST_CLOSED = process.env.BENCH_CLOSED !== '0';
/** BENCH_FLOOR=0: skip the floor phases (the list's closed loop against bare node:http servers). */
const FLOOR = process.env.BENCH_FLOOR !== '0';
if (!['', 'post', 'list'].includes(ONLY)) throw new Error('BENCH_ONLY must be post or list');
/** A phase not run: no figures (NaN), printed as skipped under the phase's own name. */
const skipped: Omit<Result, 'name'> = { requestsPerSecond: NaN, p50Ms: NaN, p99Ms: NaN, non2xx: 0, errors: 0, total: 0 };

const log = (line: string) => process.stderr.write(`[bench:api] ${line}\n`);

/** The service's process and data directory, for the phases' CPU figures (set once it runs), and its database's URL. */
let measured: { pid: number; dataDir: string; databaseUrl?: string } | undefined;

/** The database's commits and inserted rows so far (pg_stat_database), or undefined before its URL is known. */
async function databaseCounts(): Promise<{ commits: number; inserted: number } | undefined> {
  if (measured?.databaseUrl === undefined) return undefined;
  const db = new pg.Client({ connectionString: measured.databaseUrl });
  await db.connect();
  try {
    // The statistics a backend reports reach the view at its next transaction end: flush them first.
    const { rows } = await db.query<{ commits: string; inserted: string }>('select xact_commit as commits, tup_inserted as inserted from pg_stat_database where datname = current_database()');
    if (process.env.BENCH_TABLES === '1') {
      const tables = await db.query<{ relname: string; n_tup_ins: string; n_tup_upd: string }>('select relname, n_tup_ins, n_tup_upd from pg_stat_user_tables order by relname');
      log(`  tables: ${tables.rows.filter((row) => row.n_tup_ins !== '0' || row.n_tup_upd !== '0').map((row) => `${row.relname} +${row.n_tup_ins}/~${row.n_tup_upd}`).join(', ')}`);
    }
    return { commits: Number(rows[0].commits), inserted: Number(rows[0].inserted) };
  } finally {
    await db.end();
  }
}

/** A phase that `runs`, announced by `announcement`, or, when it does not, its row of no figures. */
async function phase(name: string, runs: boolean, announcement: string, measure: () => Promise<Omit<Result, 'name'>>): Promise<Result> {
  if (!runs) return { name, ...skipped };
  log(announcement);
  const countsBefore = await databaseCounts();
  const before = measured === undefined ? undefined : cpuMs(measured.pid, measured.dataDir);
  const result = await measure();
  if (before === undefined || measured === undefined) return { ...result, name };
  const after = cpuMs(measured.pid, measured.dataDir);
  // The service's sessions report their statistics within a second of their last transaction.
  const countsAfter = countsBefore === undefined ? undefined : await new Promise((wake) => setTimeout(wake, 1_500)).then(databaseCounts);
  return {
    ...result,
    name,
    serviceCpuMs: (after.service - before.service) / result.total,
    postgresCpuMs: (after.postgres - before.postgres) / result.total,
    commits: countsBefore === undefined || countsAfter === undefined ? undefined : (countsAfter.commits - countsBefore.commits) / result.total,
    inserted: countsBefore === undefined || countsAfter === undefined ? undefined : (countsAfter.inserted - countsBefore.inserted) / result.total,
  };
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

interface Result {
  name: string;
  /** CPU ms per answered request, of the service and of PostgreSQL, during the phase. */
  serviceCpuMs?: number;
  postgresCpuMs?: number;
  /** Commits and rows inserted in the service's database per answered request, during the phase. */
  commits?: number;
  inserted?: number;
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
 * The list's closed loop against floor-server.ts (`args`: its mode and theirs), in a process of its
 * own as the service is, once its first answer is found to be the service's to the byte.
 */
async function floorLoop(path: string, headers: Record<string, string>, serviceAnswer: Buffer, args: string[]): Promise<Omit<Result, 'name'>> {
  const server = spawn(process.execPath, ['dist/bench/floor-server.js', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolvePort, reject) => {
      server.once('exit', (code) => reject(new Error(`the floor server exited with code ${code}`)));
      server.stdout.once('data', (chunk: Buffer) => resolvePort(Number(chunk.toString().trim())));
    });
    const url = `http://127.0.0.1:${port}${path}`;
    const first = Buffer.from(await (await fetch(url, { headers })).arrayBuffer());
    if (!first.equals(serviceAnswer)) throw new Error(`the floor server (${args[0]}) does not answer what the service answers`);
    return await closedLoop({ url, headers, connections: CONNECTIONS, duration: SECONDS });
  } finally {
    server.removeAllListeners('exit');
    if (server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
    }
  }
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
  const child = spawn(process.execPath, [...nodeArgs, 'dist/src/main.js'], {
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
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitForReady(baseUrl, child);
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
    log(`warm-up: POST /v1/nin paced at ${Math.round(POST_RATE / 2)} requests/s for ${WARMUP_SECONDS} s`);
    if (WARMUP_SECONDS > 0) await paced({ ...check, ratePerSecond: Math.round(POST_RATE / 2), seconds: WARMUP_SECONDS, connections: CONNECTIONS });

    // The embedded cluster's URL as the service has it: through its Unix socket when it has one.
    const { password } = JSON.parse(await readFile(join(dataDir, 'pg.json'), 'utf8')) as { password: string };
    const socketDir = join(dataDir, 'run');
    const databaseUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/ledger${existsSync(join(socketDir, `.s.PGSQL.${pgPort}`)) ? `?host=${encodeURIComponent(socketDir)}` : ''}`;
    measured = { pid: child.pid as number, dataDir, databaseUrl };

    // The target ("600/s at p99 <= 50 ms") is a latency at a rate: with 100 connections in a closed
    // loop, latency is connections / throughput (Little's law), so it is measured open-loop, with
    // requests paced evenly at 600/s (see paced-load.ts for why not autocannon's rate option). It
    // runs first, on the warmed service in its steady state; the closed loop after it measures the
    // most the service takes, and leaves a backlog (read models behind, autovacuum due) that would
    // otherwise count against the paced phase.
    const postRuns = ONLY !== 'list';
    const listRuns = ONLY !== 'post';
    const postAtRate = await phase(
      `POST /v1/nin (found), paced at ${POST_RATE}/s`,
      postRuns,
      `POST /v1/nin paced at ${POST_RATE} requests/s (open loop), at most ${CONNECTIONS} connections, ${SECONDS} s`,
      () => paced({ ...check, ratePerSecond: POST_RATE, seconds: SECONDS, connections: CONNECTIONS }),
    );
    const post = await phase('POST /v1/nin (found)', postRuns && POST_CLOSED, `POST /v1/nin, ${CONNECTIONS} connections, ${SECONDS} s`, () =>
      closedLoop({ ...check, connections: CONNECTIONS, duration: SECONDS }),
    );

    // A full verification by reference (the personal data opened for it), over the checks the POST
    // phases wrote, each connection's requests going round them.
    if (postRuns) await projectionsCaughtUp(baseUrl, admin);
    const references = postRuns ? await writtenReferences(databaseUrl, organizationId) : [];
    const byReference = await phase('GET /v1/verifications/{reference}', postRuns, `GET /v1/verifications/{reference} over ${references.length} checks, ${CONNECTIONS} connections, ${SECONDS} s`, () => {
      let next = 0;
      return closedLoop({
        url: baseUrl,
        connections: CONNECTIONS,
        duration: SECONDS,
        requests: [{ method: 'GET', headers: { 'x-service-key': key }, setupRequest: (request) => ({ ...request, path: `/v1/verifications/${references[next++ % references.length]}` }) }],
      });
    });

    if (listRuns) {
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
      floors.push(
        await phase(`floor: ${name}, bare node:http`, floorRuns, `floor: ${name} (${how}), ${CONNECTIONS} connections, ${SECONDS} s`, () =>
          floorLoop('/v1/verifications', { 'x-service-key': key }, listBody, [...args]),
        ),
      );
    }
    const rssMb = peakRssMb(child.pid as number);

    const cpu = cpus()[0]?.model ?? 'unknown CPU';
    const rows = [
      [`${post.name}, closed loop`, post.requestsPerSecond.toFixed(0), post.p50Ms.toFixed(1), post.p99Ms.toFixed(1), String(post.non2xx + post.errors), '>= 600/s, 0 errors',
        post.requestsPerSecond >= 600 && post.non2xx + post.errors === 0 ? 'PASS' : 'MISS'],
      [`${byReference.name}, closed loop`, byReference.requestsPerSecond.toFixed(0), byReference.p50Ms.toFixed(1), byReference.p99Ms.toFixed(1), String(byReference.non2xx + byReference.errors), '(for information)', ''],
      [postAtRate.name, postAtRate.requestsPerSecond.toFixed(0), postAtRate.p50Ms.toFixed(1), postAtRate.p99Ms.toFixed(1), String(postAtRate.non2xx + postAtRate.errors), '600/s sustained, p99 <= 50 ms, 0 errors',
        POST_RATE >= 600 && postAtRate.requestsPerSecond >= 590 && postAtRate.p99Ms <= 50 && postAtRate.non2xx + postAtRate.errors === 0 ? 'PASS' : 'MISS'],
      [`${list.name}, closed loop`, list.requestsPerSecond.toFixed(0), list.p50Ms.toFixed(1), list.p99Ms.toFixed(1), String(list.non2xx + list.errors), 'p99 <= 20 ms',
        list.p99Ms <= 20 && list.non2xx + list.errors === 0 ? 'PASS' : 'MISS'],
      [listAtRate.name, listAtRate.requestsPerSecond.toFixed(0), listAtRate.p50Ms.toFixed(1), listAtRate.p99Ms.toFixed(1), String(listAtRate.non2xx + listAtRate.errors), '(for information)', ''],
      ...floors.map((floor) => [`${floor.name}, closed loop`, floor.requestsPerSecond.toFixed(0), floor.p50Ms.toFixed(1), floor.p99Ms.toFixed(1), String(floor.non2xx + floor.errors),
        "(the machine's floor: for information)", '']),
    ];
    process.stdout.write(`\nbench:api — ${cpus().length} cores, ${cpu}, Node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s each, peak RSS of the service ${rssMb.toFixed(0)} MiB\n\n`);
    process.stdout.write('| route | req/s | p50 ms | p99 ms | non-2xx + errors | target | result |\n|---|---|---|---|---|---|---|\n');
    for (const row of rows) process.stdout.write(`| ${(row[1] === 'NaN' ? [row[0], '-', '-', '-', '-', row[5], 'skipped'] : row).join(' | ')} |\n`);
    // CPU per request: what a request costs the service and PostgreSQL, whatever else the machine runs.
    const costed = [post, byReference, postAtRate, list].filter((result) => result.serviceCpuMs !== undefined && Number.isFinite(result.requestsPerSecond));
    if (costed.length > 0) {
      process.stdout.write('\n| route | service CPU ms/request | PostgreSQL CPU ms/request | commits/request | rows inserted/request |\n|---|---|---|---|---|\n');
      for (const result of costed) {
        process.stdout.write(`| ${result.name} | ${result.serviceCpuMs?.toFixed(3)} | ${result.postgresCpuMs?.toFixed(3)} | ${result.commits?.toFixed(2) ?? '-'} | ${result.inserted?.toFixed(2) ?? '-'} |\n`);
      }
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:api failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
