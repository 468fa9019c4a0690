/**
 * Benchmark of the finance audit: `npm run bench:audit`.
 *
 * Writes two wallets straight into the log, chained as the wallet ledger chains them: one of
 * BENCH_EVENTS / 10 events and one of BENCH_EVENTS (default 1,000,000), in rounds of reservations
 * then captures (80 %) and releases (20 %). Then:
 *  - `audit:wallet --format csv` as its own process, stdout to /dev/null: wall time, events/s and
 *    peak RSS (VmHWM from /proc, sampled while it runs), on the small wallet once and on the large
 *    one BENCH_RUNS times (default 3, the median for information); the large
 *    one again with the V8 heap capped at 48 MiB, which it survives only if it holds no more than a
 *    few pages at a time.
 *  - the large wallet with `--reconcile`, after the wallets and wallet-ledger projections have
 *    caught up and the verifications read model holds the matching rows (seeded in SQL), BENCH_RUNS
 *    times, each right after a plain run: the median ratio of the two against the target of 2.
 *  - the in-process replay alone (what one GET …/history request costs), through the store's
 *    readStream, through the PostgreSQL page reader and through the COPY reader.
 *  - the replay as the command runs it (the COPY reader, the chain hash worker) against its floor,
 *    BENCH_RUNS times alternated: the same COPY of the same wallet's rows through Node, each row's
 *    bytes as stored hashed with SHA-256, nothing else. Target: the median ratio of the floor's
 *    time to the replay's at least 0.5.
 * The machine (cores, CPU, load average before and after) is printed with the figures.
 * BENCH_PHASES (a comma list of cli, reconcile, readers, floor; all by default) runs only some.
 *
 * PostgreSQL: DATABASE_URL when set (a database named ledger_bench_* is created and dropped there),
 * else an ephemeral embedded cluster. Linux only (peak RSS is read from /proc). Progress on stderr,
 * the table on stdout.
 */
import { spawn } from 'node:child_process';
import { hash, randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { ChainHashWorker } from '../src/audit/chain-hashes.js';
import { lastRevisionOf, WalletReplay } from '../src/audit/wallet-replay.js';
import type { PostgresEventStore } from '../src/event-store/postgres-event-store.js';
import { COPY_READ_AHEAD_BYTES, postgresStreamCopy, postgresStreamCopyWith, postgresStreamPages, streamCopySql } from '../src/event-store/postgres-stream-pages.js';
import type { WalletId } from '../src/wallets/wallet-ledger.port.js';
import { PROJECTIONS } from '../projections/index.js';
import { ProjectionRunner } from '../projections/runner/projection-runner.js';
import { benchDatabase, format, runBench, runCleanups, sizeFromEnv, status } from './bench-support.js';
import { ROUND_RESERVATIONS as ROUND_RESERVATIONS_OF_WRITER, writeWallet } from './wallet-writer.js';

const RSS_SAMPLE_MS = 50;
/** USER_HZ of /proc/<pid>/stat: 100 on every Linux build in use. */
const CLOCK_TICKS_PER_SECOND = 100;
const TARGET_RECONCILE_RATIO = 2;
/** Old-space limit of the capped run: far below what a 1,000,000-event wallet would take if it were held. */
const HEAP_CAP_MIB = 48;
/** The replay's least rate, as a share of its floor's in the same run. */
const TARGET_FLOOR_RATIO = 0.5;
const PHASES = ['cli', 'reconcile', 'readers', 'floor'];
const NEWLINE = 0x0a;

interface Timed {
  readonly events: number;
  readonly seconds: number;
  /** CPU of this process (every thread) per event, in microseconds. */
  readonly cpuUs: number;
}

async function timed(work: () => Promise<number>): Promise<Timed> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const events = await work();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { events, seconds, cpuUs: (cpu.user + cpu.system) / Math.max(1, events) };
}

/**
 * The replay's floor: the COPY the replay reads the wallet with, through Node (pg-copy-streams, the
 * same read-ahead), each row's bytes as stored hashed with SHA-256 into hex as the chain's hashes
 * are; no decoding, canonical form or output. Answers the rows hashed.
 */
async function replayFloor(pool: pg.Pool, streamId: string): Promise<number> {
  const client = await pool.connect();
  let rows = 0;
  let digits = 0;
  try {
    const copy = client.query(copyTo(streamCopySql(client, streamId, 0n), { highWaterMark: COPY_READ_AHEAD_BYTES }));
    let carry: Buffer | undefined;
    for await (const chunk of copy as AsyncIterable<Buffer>) {
      const bytes = carry === undefined ? chunk : Buffer.concat([carry, chunk]);
      let start = 0;
      for (let end = bytes.indexOf(NEWLINE, start); end >= 0; end = bytes.indexOf(NEWLINE, start)) {
        // A digest's first digit, kept so that no hash can be left out as unused.
        digits += hash('sha256', bytes.subarray(start, end), 'hex').charCodeAt(0);
        rows++;
        start = end + 1;
      }
      carry = start < bytes.length ? bytes.subarray(start) : undefined;
    }
    if (carry !== undefined) throw new Error('the COPY ended inside a row');
  } finally {
    client.release();
  }
  if (digits === 0 && rows > 0) throw new Error('invariant: no digest was computed');
  return rows;
}

/** The replay as `audit:wallet` runs it on the PostgreSQL log: the COPY reader with the chain hash worker; answers the events replayed. */
async function commandReplay(pool: pg.Pool, store: PostgresEventStore, wallet: WalletId): Promise<number> {
  const worker = new ChainHashWorker();
  try {
    const replay = new WalletReplay(store, wallet, { readHashedPages: postgresStreamCopyWith(pool, worker) });
    let replayed = 0;
    for await (const page of replay.pages()) replayed += page.length;
    if (!replay.summary.chain.verified) throw new Error('the replay did not verify the chain');
    return replayed;
  } finally {
    await worker.close();
  }
}

interface CliRun {
  readonly seconds: number;
  /** User plus system CPU of the process (from /proc, sampled while it runs): on a shared machine, where wall time depends on the load, the steadier figure. */
  readonly cpuSeconds: number;
  readonly peakRssMiB: number;
  readonly code: number | null;
  readonly stderr: string;
}

/** The audit command as its own process; peak RSS is the kernel's high-water mark of its resident set. */
function runAudit(args: readonly string[], env: Record<string, string>, nodeArgs: readonly string[] = []): Promise<CliRun> {
  return new Promise((resolveRun, rejectRun) => {
    const started = performance.now();
    const child = spawn(process.execPath, [...nodeArgs, resolve('dist/src/audit/audit-cli.js'), ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let peakKiB = 0;
    let cpuTicks = 0;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const sample = setInterval(() => {
      readFile(`/proc/${child.pid}/status`, 'utf8')
        .then((text) => {
          const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(text);
          if (hwm !== null) peakKiB = Math.max(peakKiB, Number(hwm[1]));
        })
        .catch(() => undefined);
      // utime and stime, fields 14 and 15 of /proc/<pid>/stat, after the command name in parentheses.
      readFile(`/proc/${child.pid}/stat`, 'utf8')
        .then((text) => {
          const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
          cpuTicks = Math.max(cpuTicks, Number(fields[11]) + Number(fields[12]));
        })
        .catch(() => undefined);
    }, RSS_SAMPLE_MS);
    child.on('error', rejectRun);
    child.on('exit', (code) => {
      clearInterval(sample);
      resolveRun({ seconds: (performance.now() - started) / 1000, cpuSeconds: cpuTicks / CLOCK_TICKS_PER_SECOND, peakRssMiB: peakKiB / 1024, code, stderr });
    });
  });
}

/**
 * The sizes of a kept organization's two wallets, when an earlier run wrote both to the end (its
 * organization event is the first thing written, so a run stopped while writing leaves the live
 * wallet short of the size asked for or missing: then undefined, and the caller stops).
 */
async function keptSizes(store: PostgresEventStore, organizationId: string): Promise<{ test: number; live: number } | undefined> {
  const registered = await store.readStream(`organization-${organizationId}`, { maxCount: 1 });
  if (registered.length === 0) return undefined;
  const test = Number(await lastRevisionOf(store, `wallet-${organizationId}.test`)) + 1;
  const live = Number(await lastRevisionOf(store, `wallet-${organizationId}.live`)) + 1;
  const expected = (events: number) => 1 + 2 * ROUND_RESERVATIONS_OF_WRITER * Math.max(1, Math.floor((events - 1) / (2 * ROUND_RESERVATIONS_OF_WRITER)));
  if (live !== expected(Number(organizationId.slice('org_bench_kept_'.length))) || test === 0) {
    throw new Error(`the kept database holds ${organizationId} with ${test} and ${live} events, not a finished write: drop the database and run again`);
  }
  return { test, live };
}

/** The run of median time (the upper one of an even count). */
function median(runs: readonly CliRun[]): CliRun {
  return [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)];
}

async function main(): Promise<void> {
  const largeEvents = sizeFromEnv('BENCH_EVENTS', 1_000_000, { min: 10_000, max: 20_000_000 });
  const runs = sizeFromEnv('BENCH_RUNS', 3, { min: 1, max: 9 });
  const smallEvents = Math.max(1_001, Math.floor(largeEvents / 10));
  const phases = new Set((process.env.BENCH_PHASES ?? PHASES.join(',')).split(',').map((phase) => phase.trim()));
  for (const phase of phases) if (!PHASES.includes(phase)) throw new Error(`BENCH_PHASES: unknown phase ${phase}`);
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const { url, pool, store } = await benchDatabase('audit', 8, cleanups);

    // In a database kept across runs (BENCH_DATABASE), the organization of this size is written once
    // and audited again by the next runs; otherwise each run writes its own.
    const kept = process.env.BENCH_DATABASE !== undefined && process.env.BENCH_DATABASE !== '';
    const organizationId = kept ? `org_bench_kept_${largeEvents}` : `org_bench_${randomBytes(4).toString('hex')}`;
    const small: WalletId = { organizationId, environment: 'test' };
    const large: WalletId = { organizationId, environment: 'live' };
    let started = performance.now();
    let writeSeconds: number | undefined;
    let sizes: { test: number; live: number };
    const existing = kept ? await keptSizes(store, organizationId) : undefined;
    if (existing !== undefined) {
      sizes = existing;
      status(`reusing the wallets of ${organizationId} in the kept database: ${format(sizes.test)} and ${format(sizes.live)} events`);
    } else {
      // The command checks that the organization exists: its stream needs one event.
      await store.append(
        `organization-${organizationId}`,
        [{ id: randomUUID(), type: 'OrganizationRegistered', data: { schemaVersion: 1, organizationId, name: 'Bench', email: 'bench@example.com' } }],
        {
          expectedRevision: 'no_stream',
        },
      );
      status(`writing ${format(smallEvents)} events to the test wallet and ${format(largeEvents)} to the live wallet, chained as the ledger chains them`);
      sizes = { test: await writeWallet(store, small, smallEvents), live: await writeWallet(store, large, largeEvents) };
      writeSeconds = (performance.now() - started) / 1000;
      status(`written in ${writeSeconds.toFixed(1)} s`);
      await pool.query('vacuum analyze events');
    }

    const env = {
      DATABASE_URL: url,
      DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      EVENT_STORE: 'postgres',
      DATA_DIR: join(tmpdir(), `ledger-bench-audit-${process.pid}`),
      LOG_LEVEL: 'error',
    };
    const rows: string[] = [];
    const loadBefore = loadavg()[0];
    if (phases.has('cli')) {
      const smallRun = await runAudit(['--org', organizationId, '--env', 'test', '--format', 'csv'], env);
      if (smallRun.code !== 0) throw new Error(`audit:wallet exited ${smallRun.code}: ${smallRun.stderr.slice(-2_000)}`);
      status(`audit --format csv, ${format(sizes.test)} events: ${smallRun.seconds.toFixed(1)} s, peak RSS ${smallRun.peakRssMiB.toFixed(0)} MiB`);
      rows.push(
        `| audit:wallet --format csv, ${format(sizes.test)} events | ${smallRun.seconds.toFixed(1)} s (${format(sizes.test / smallRun.seconds)} events/s) | ${smallRun.peakRssMiB.toFixed(0)} MiB | for information |`,
      );

      // The large wallet BENCH_RUNS times: the median run is the figure, with the spread beside it.
      const plainRuns: CliRun[] = [];
      for (let run = 0; run < runs; run++) {
        const plain = await runAudit(['--org', organizationId, '--env', 'live', '--format', 'csv'], env);
        if (plain.code !== 0) throw new Error(`audit:wallet exited ${plain.code}: ${plain.stderr.slice(-2_000)}`);
        status(
          `audit --format csv, ${format(sizes.live)} events, run ${run + 1}/${runs}: ${plain.seconds.toFixed(1)} s, CPU ${plain.cpuSeconds.toFixed(1)} s, peak RSS ${plain.peakRssMiB.toFixed(0)} MiB (load ${loadavg()[0].toFixed(1)})`,
        );
        plainRuns.push(plain);
      }
      const plain = median(plainRuns);
      const plainRate = sizes.live / plain.seconds;
      rows.push(
        `| audit:wallet --format csv, ${format(sizes.live)} events (median of ${runs}: ${plainRuns.map((run) => run.seconds.toFixed(1)).join(', ')} s) | ${plain.seconds.toFixed(1)} s (${format(plainRate)} events/s); CPU ${plain.cpuSeconds.toFixed(1)} s (${format(sizes.live / plain.cpuSeconds)} events per CPU second) | ${plain.peakRssMiB.toFixed(0)} MiB | for information (the floor phase judges the rate) |`,
      );

      // RSS alone includes whatever heap V8 chose to grow into; a small heap cap shows what the replay needs.
      const capped = await runAudit(['--org', organizationId, '--env', 'live', '--format', 'csv'], env, [`--max-old-space-size=${HEAP_CAP_MIB}`]);
      if (capped.code !== 0) throw new Error(`audit:wallet with a ${HEAP_CAP_MIB} MiB heap exited ${capped.code}: ${capped.stderr.slice(-2_000)}`);
      status(
        `audit --format csv, ${format(sizes.live)} events, V8 heap capped at ${HEAP_CAP_MIB} MiB: ${capped.seconds.toFixed(1)} s, peak RSS ${capped.peakRssMiB.toFixed(0)} MiB`,
      );
      rows.push(
        `| same, node --max-old-space-size=${HEAP_CAP_MIB} | ${capped.seconds.toFixed(1)} s (${format(sizes.live / capped.seconds)} events/s) | ${capped.peakRssMiB.toFixed(0)} MiB | memory flat: completes |`,
      );
    }
    if (phases.has('reconcile')) {
      // The read models, for --reconcile: the wallet projections caught up; verification rows seeded to match the debits and releases.
      started = performance.now();
      const head = await store.headPosition();
      for (const projection of PROJECTIONS.filter((candidate) => candidate.name === 'wallets' || candidate.name === 'wallet-ledger')) {
        const runner = new ProjectionRunner(pool, store, projection, { maxBatch: 1_000, maxAttempts: 3 });
        runner.start();
        let failure: unknown;
        runner.finished.catch((error: unknown) => (failure = error));
        while (failure === undefined && runner.metrics.position < head) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
        await runner.stop();
        if (failure !== undefined) throw failure;
      }
      // The writer's references do not name the organization: in a kept database, another size's
      // organization may hold them, and a reference is one verification. Its rows go, this one's come.
      await pool.query(`delete from verifications where key_id = 'key_bench' and organization_id <> $1`, [organizationId]);
      await pool.query(
        `insert into verifications (reference, organization_id, environment, key_id, scope, category, country_code, status, request, result, error_message, price_kobo, charged, created_at, completed_at)
         select reference, organization_id, environment, 'key_bench', 'nin', 'kyc', 'NG', case entry_type when 'debit' then 'found' else 'failed' end, '{}', '{}', null, amount_kobo,
                entry_type = 'debit', occurred_at, occurred_at
         from wallet_ledger where entry_type in ('debit', 'release') and organization_id = $1
         on conflict (reference) do nothing`,
        [organizationId],
      );
      status(`read models ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      // Each reconcile run right after a plain run, so that the ratio compares the two under the same load.
      const reconcileRuns: { plain: CliRun; reconciled: CliRun }[] = [];
      for (let run = 0; run < runs; run++) {
        const pair = await runAudit(['--org', organizationId, '--env', 'live', '--format', 'csv'], env);
        if (pair.code !== 0) throw new Error(`audit:wallet exited ${pair.code}: ${pair.stderr.slice(-2_000)}`);
        const reconciled = await runAudit(['--org', organizationId, '--env', 'live', '--format', 'csv', '--reconcile'], env);
        if (reconciled.code !== 0) throw new Error(`audit:wallet --reconcile exited ${reconciled.code}: ${reconciled.stderr.slice(-2_000)}`);
        status(
          `audit --reconcile, ${format(sizes.live)} events, run ${run + 1}/${runs}: ${reconciled.seconds.toFixed(1)} s against ${pair.seconds.toFixed(1)} s plain, peak RSS ${reconciled.peakRssMiB.toFixed(0)} MiB`,
        );
        reconcileRuns.push({ plain: pair, reconciled });
      }
      const ratios = reconcileRuns.map(({ plain: pair, reconciled }) => reconciled.seconds / pair.seconds);
      const ratio = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
      const reconciled = median(reconcileRuns.map((run) => run.reconciled));
      rows.push(
        `| audit:wallet --reconcile, ${format(sizes.live)} events (median of ${runs}: ${reconcileRuns.map((run) => run.reconciled.seconds.toFixed(1)).join(', ')} s) | ${reconciled.seconds.toFixed(1)} s, CPU ${reconciled.cpuSeconds.toFixed(1)} s; ${ratio.toFixed(2)}× the plain run beside it (${ratios.map((value) => value.toFixed(2)).join(', ')}) | ${reconciled.peakRssMiB.toFixed(0)} MiB | ≤ ${TARGET_RECONCILE_RATIO}× the plain replay: ${ratio <= TARGET_RECONCILE_RATIO ? 'met' : 'missed'} |`,
      );
    }
    if (phases.has('readers')) {
      // What one GET …/history request costs on the large wallet: the replay, in this process, through
      // the store's readStream (what the controller uses), through the PostgreSQL page reader, and
      // through the COPY reader (the CLI's).
      for (const [label, options] of [
        ['readStream', {}],
        ['page reader', { readPage: postgresStreamPages(pool) }],
        ['COPY reader', { readPages: postgresStreamCopy(pool) }],
      ] as const) {
        started = performance.now();
        const replay = new WalletReplay(store, large, options);
        let replayed = 0;
        for await (const page of replay.pages()) for (const entry of page) replayed += entry.revision === BigInt(replayed) ? 1 : Number.NaN;
        const replaySeconds = (performance.now() - started) / 1000;
        if (!replay.summary.chain.verified || replayed !== sizes.live) throw new Error('the in-process replay did not verify the whole wallet');
        rows.push(
          `| replay in process, ${label}, ${format(replayed)} events | ${replaySeconds.toFixed(1)} s (${format(replayed / replaySeconds)} events/s) | — | for information |`,
        );
      }
    }
    // The replay as the command runs it, against its floor, alternated run after run under the same load.
    if (phases.has('floor')) {
      const streamId = `wallet-${organizationId}.live`;
      const runsOf: { floor: Timed; replay: Timed; command: CliRun }[] = [];
      for (let run = 0; run < runs; run++) {
        const floor = await timed(() => replayFloor(pool, streamId));
        const replay = await timed(() => commandReplay(pool, store, large));
        const command = await runAudit(['--org', organizationId, '--env', 'live', '--format', 'csv'], env);
        if (command.code !== 0) throw new Error(`audit:wallet exited ${command.code}: ${command.stderr.slice(-2_000)}`);
        if (floor.events !== sizes.live || replay.events !== sizes.live) throw new Error(`the floor read ${floor.events} and the replay ${replay.events} of ${sizes.live} events`);
        runsOf.push({ floor, replay, command });
        status(
          `floor ${floor.seconds.toFixed(2)} s (${floor.cpuUs.toFixed(1)} µs CPU per event); replay in process ${replay.seconds.toFixed(2)} s (${replay.cpuUs.toFixed(1)} µs): ${(floor.seconds / replay.seconds).toFixed(2)}×; audit:wallet ${command.seconds.toFixed(2)} s (${((command.cpuSeconds * 1e6) / sizes.live).toFixed(1)} µs): ${(floor.seconds / command.seconds).toFixed(2)}×, run ${run + 1}/${runs} (load ${loadavg()[0].toFixed(1)})`,
        );
      }
      const middle = <T>(values: readonly T[], key: (value: T) => number): T => [...values].sort((x, y) => key(x) - key(y))[Math.floor(values.length / 2)];
      const list = (key: (value: (typeof runsOf)[number]) => number) => runsOf.map((value) => key(value).toFixed(2)).join(', ');
      const floorCell = (floor: Timed) => `floor ${floor.seconds.toFixed(2)} s (${format(sizes.live / floor.seconds)} events/s, ${floor.cpuUs.toFixed(1)} µs CPU per event)`;
      const commandRatio = (value: (typeof runsOf)[number]) => value.floor.seconds / value.command.seconds;
      const replayRatio = (value: (typeof runsOf)[number]) => value.floor.seconds / value.replay.seconds;
      const byCommand = middle(runsOf, commandRatio);
      rows.push(
        `| audit:wallet --format csv against the replay floor, ${format(sizes.live)} events, median of ${runs} | ${byCommand.command.seconds.toFixed(2)} s (${format(sizes.live / byCommand.command.seconds)} events/s, ${((byCommand.command.cpuSeconds * 1e6) / sizes.live).toFixed(1)} µs CPU per event); ${floorCell(byCommand.floor)}: **${commandRatio(byCommand).toFixed(2)}×** (runs ${list(commandRatio)}) | ${byCommand.command.peakRssMiB.toFixed(0)} MiB | ≥ ${TARGET_FLOOR_RATIO}× the floor: ${commandRatio(byCommand) >= TARGET_FLOOR_RATIO ? 'met' : 'missed'} |`,
      );
      const byReplay = middle(runsOf, replayRatio);
      rows.push(
        `| replay in process as the command reads (COPY, chain hash worker), same runs | ${byReplay.replay.seconds.toFixed(2)} s (${byReplay.replay.cpuUs.toFixed(1)} µs CPU per event); ${floorCell(byReplay.floor)}: **${replayRatio(byReplay).toFixed(2)}×** (runs ${list(replayRatio)}) | — | ≥ ${TARGET_FLOOR_RATIO}× the floor: ${replayRatio(byReplay) >= TARGET_FLOOR_RATIO ? 'met' : 'missed'} |`,
      );
    }

    const loadAfter = loadavg()[0];

    const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
    const cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
    const version = (await pool.query<{ server_version: string }>('show server_version')).rows[0].server_version;
    const lines = [
      '## Audit benchmark',
      '',
      `Machine: ${cpus().length} cores (${cpuModel}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, PostgreSQL ${version}, Node ${process.version}; load average ${loadBefore.toFixed(1)} when the audit runs began, ${loadAfter.toFixed(1)} at the end`,
      writeSeconds === undefined
        ? 'Wallets written by an earlier run into the kept database (BENCH_DATABASE)'
        : `Wallets appended straight to the log (chained as the ledger chains) in ${writeSeconds.toFixed(1)} s (${format((sizes.test + sizes.live) / writeSeconds)} events/s)`,
      `Targets: the replay (full chain verification, CSV out) at ≥ ${TARGET_FLOOR_RATIO}× its floor (the same COPY, each row's bytes hashed with SHA-256, nothing else) with memory flat in the wallet's length; --reconcile at most ${TARGET_RECONCILE_RATIO}× its time`,
      '',
      '| run | time | peak RSS | target |',
      '|---|---|---|---|',
      ...rows,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await runCleanups(cleanups);
  }
}

runBench(main);
