/**
 * Benchmark of the auditor's history pages: `npm run bench:history`.
 *
 * Writes one wallet of BENCH_EVENTS events (default 1,000,000) straight into the log, chained as
 * the ledger chains it (wallet-writer.ts), then asks for pages of it the way
 * `GET /admin/v1/organizations/{id}/wallets/{environment}/history` does (wallet-history.ts, in
 * this process, without HTTP):
 *  - once cold, with no history checkpoint: the whole wallet is replayed, and a checkpoint is
 *    written every 100 events (BENCH_CHECKPOINT_EVERY) and at the end (what every request cost
 *    before checkpoints);
 *  - then BENCH_REQUESTS times (default 30) each of: the first, the middle and the last page, the
 *    middle page again with the tail checkpoint dropped before each request (the figures at the end
 *    replayed from the newest regular checkpoint), and the first and the last page as of the moment
 *    of the wallet's middle event, pageSize 100 (the largest), in BENCH_ROUNDS rounds (default 3):
 *    p50 and p99 per round and their medians;
 *  - once after the newest checkpoint row has been tampered with (its figures changed): the row is
 *    not believed, the replay starts one checkpoint earlier and writes it afresh.
 * Target: every page within 200 ms.
 *
 * PostgreSQL: DATABASE_URL when set (a database named ledger_bench_* is created and dropped there),
 * else an ephemeral embedded cluster. Progress on stderr, the table on stdout.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { entryJson } from '../src/audit/audit-format.js';
import { HistoryCheckpoints, historyCheckpointKey } from '../src/audit/history-checkpoints.js';
import { DEFAULT_CHECKPOINT_EVERY, WalletHistory, type HistoryPageRequest } from '../src/audit/wallet-history.js';
import { occurredAt } from '../src/common/event.js';
import { streams } from '../src/common/streams.js';
import type { WalletId } from '../src/wallets/wallet-ledger.port.js';
import { benchDatabase, format, runBench, runCleanups, sizeFromEnv, status } from './bench-support.js';
import { writeWallet } from './wallet-writer.js';

const TARGET_MS = 200;
const PAGE_SIZE = 100;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}
const median = (values: readonly number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

async function main(): Promise<void> {
  const events = sizeFromEnv('BENCH_EVENTS', 1_000_000, { min: 10_000, max: 20_000_000 });
  const requests = sizeFromEnv('BENCH_REQUESTS', 30, { min: 5, max: 10_000 });
  const rounds = sizeFromEnv('BENCH_ROUNDS', 3, { min: 1, max: 20 });
  const every = sizeFromEnv('BENCH_CHECKPOINT_EVERY', DEFAULT_CHECKPOINT_EVERY, { min: 10, max: 100_000 });
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const { pool, store } = await benchDatabase('history', 8, cleanups);
    const wallet: WalletId = { organizationId: `org_bench_${randomBytes(4).toString('hex')}`, environment: 'live' };
    const streamId = streams.wallet(wallet.organizationId, wallet.environment);
    let started = performance.now();
    status(`writing ${format(events)} events to one wallet, chained as the ledger chains them`);
    const written = await writeWallet(store, wallet, events);
    status(`written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await pool.query('vacuum analyze events');

    const history = new WalletHistory(store, new HistoryCheckpoints(pool, historyCheckpointKey(randomBytes(32))), every);
    const ask = async (request: HistoryPageRequest) => {
      const page = await history.page(wallet, request);
      // What the controller adds: each entry as JSON.
      page.entries.map(entryJson);
      return page;
    };

    started = performance.now();
    const cold = await ask({ page: 1, pageSize: PAGE_SIZE });
    const coldMs = performance.now() - started;
    if (!cold.summary.chain.verified || cold.summary.eventsReplayed !== written) throw new Error('the cold request did not replay and verify the whole wallet');
    status(
      `cold request (no checkpoint): ${(coldMs / 1000).toFixed(1)} s, ${format(cold.stats.eventsReplayed)} events replayed, ${format(cold.stats.checkpointsWritten)} checkpoints written`,
    );

    const entries = cold.summary.entriesShown;
    const lastPage = Math.ceil(entries / PAGE_SIZE);
    const middlePage = Math.ceil(lastPage / 2);
    const [middleEvent] = await store.readStream(streamId, { fromRevision: BigInt(Math.floor(written / 2)), maxCount: 1 });
    if (middleEvent === undefined) throw new Error('no middle event');
    const asOf = occurredAt(middleEvent);
    const asOfPages = (await ask({ page: 1, pageSize: PAGE_SIZE, asOf })).summary.entriesShown;
    // The end checkpoint (left by the previous request) dropped before each request, and the newest regular ones until
    // the end is at least every - 1 events past the newest left: the figures are then replayed from there, as after a
    // burst of appends (every - 1 is the most the design allows: the replay to the end writes a regular checkpoint).
    const tailEvents = written % every;
    const droppedRegular = tailEvents >= every - 1 ? 0 : 1;
    const behind = tailEvents + droppedRegular * every;
    const dropTail = () =>
      pool.query('delete from wallet_history_checkpoints where stream_id = $1 and ((revision + 1) % $2 <> 0 or revision >= $3)', [streamId, every, written - behind]);
    const cases: { name: string; request: HistoryPageRequest; before?: () => Promise<unknown> }[] = [
      { name: 'first page', request: { page: 1, pageSize: PAGE_SIZE } },
      { name: `middle page (${format(middlePage)})`, request: { page: middlePage, pageSize: PAGE_SIZE } },
      { name: `last page (${format(lastPage)})`, request: { page: lastPage, pageSize: PAGE_SIZE } },
      {
        name: `middle page, no end checkpoint (the figures replayed from ${format(behind)} events behind the end)`,
        request: { page: middlePage, pageSize: PAGE_SIZE },
        before: dropTail,
      },
      { name: 'asOf the middle event, first page', request: { page: 1, pageSize: PAGE_SIZE, asOf } },
      { name: `asOf the middle event, last page (${format(Math.ceil(asOfPages / PAGE_SIZE))})`, request: { page: Math.ceil(asOfPages / PAGE_SIZE), pageSize: PAGE_SIZE, asOf } },
    ];

    const loadBefore = loadavg();
    const results = cases.map((testCase) => ({ ...testCase, p50: [] as number[], p99: [] as number[], replayed: 0 }));
    for (let round = 0; round < rounds; round++) {
      for (const result of results) {
        const { name, request, before } = result;
        const latencies: number[] = [];
        for (let i = 0; i < requests; i++) {
          await before?.();
          const at = performance.now();
          const page = await ask(request);
          latencies.push(performance.now() - at);
          result.replayed = Math.max(result.replayed, page.stats.eventsReplayed);
          if (page.stats.checkpointsRejected !== 0) throw new Error(`${name}: a checkpoint was rejected`);
        }
        latencies.sort((a, b) => a - b);
        result.p50.push(percentile(latencies, 50));
        result.p99.push(percentile(latencies, 99));
        status(`round ${round + 1}, ${name}: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`);
      }
    }
    const loadAfter = loadavg();

    // One checkpoint row changed by hand: not believed, the replay starts one checkpoint earlier.
    await pool.query(
      `update wallet_history_checkpoints set state = jsonb_set(state, '{fundedKobo}', to_jsonb((state->>'fundedKobo')::bigint + 1)) where stream_id = $1 and revision = (select max(revision) from wallet_history_checkpoints where stream_id = $1)`,
      [streamId],
    );
    started = performance.now();
    const tampered = await ask({ page: lastPage, pageSize: PAGE_SIZE });
    const tamperedMs = performance.now() - started;
    if (tampered.stats.checkpointsRejected !== 1 || tampered.summary.closing.fundedKobo !== cold.summary.closing.fundedKobo)
      throw new Error('the tampered checkpoint was believed');

    const cpuinfo = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
    const cpuModel = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
    const version = (await pool.query<{ server_version: string }>('show server_version')).rows[0]?.server_version ?? 'unknown';
    const tableBytes = Number((await pool.query<{ bytes: string }>("select pg_total_relation_size('wallet_history_checkpoints') as bytes")).rows[0]?.bytes ?? 0);
    const eventsBytes = Number((await pool.query<{ bytes: string }>("select pg_total_relation_size('events') as bytes")).rows[0]?.bytes ?? 0);
    const fmt = (values: readonly number[]) => values.map((value) => value.toFixed(0)).join(' / ');
    const lines = [
      '## History benchmark',
      '',
      `Machine: ${cpus().length} cores (${cpuModel}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, PostgreSQL ${version}, Node ${process.version}; load average ${loadBefore.map((v) => v.toFixed(1)).join(' ')} before the timed requests, ${loadAfter.map((v) => v.toFixed(1)).join(' ')} after`,
      `Wallet of ${format(written)} events (${format(entries)} entries), a checkpoint every ${format(every)} events, pageSize ${PAGE_SIZE}, ${requests} requests per case per round, ${rounds} round(s); target: every page within ${TARGET_MS} ms`,
      '',
      '| request | p50 ms (median; per round) | p99 ms (median; per round) | events replayed (most) | within target |',
      '|---|---|---|---|---|',
      ...results.map((result) => {
        return `| ${result.name} | ${median(result.p50).toFixed(1)}; ${fmt(result.p50)} | ${median(result.p99).toFixed(1)}; ${fmt(result.p99)} | ${format(result.replayed)} | ${median(result.p99) <= TARGET_MS ? 'yes' : 'NO'} |`;
      }),
      `| cold, no checkpoint (replays the whole wallet, writes the checkpoints) | ${coldMs.toFixed(0)} | — | ${format(cold.stats.eventsReplayed)} | — |`,
      `| last page after the newest checkpoint row was changed by hand (rejected, rebuilt from the one before) | ${tamperedMs.toFixed(0)} | — | ${format(tampered.stats.eventsReplayed)} | — |`,
      '',
      `wallet_history_checkpoints: ${(tableBytes / 2 ** 20).toFixed(1)} MiB with its indexes, against ${(eventsBytes / 2 ** 20).toFixed(0)} MiB for the events table`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await runCleanups(cleanups);
  }
}

runBench(main);
