/**
 * `npm run bench:wallet-ledger`: what the first check on a large wallet waits for after a start,
 * when the wallet ledger has no fold of the wallet in memory yet.
 *
 * Writes one wallet of BENCH_EVENTS events (default 300,000) straight into the log, chained as the
 * ledger chains them (wallet-writer.ts), then times a cold ledger's first read of the balance,
 * BENCH_RUNS times (default 3, median printed):
 *   1. without snapshots: the whole stream folded (the ledger before snapshots);
 *   2. with snapshots: the wallet's snapshot read, matched to the stream, and the events written
 *      after it folded. Before this phase a ledger folds the wallet once (writing its snapshot) and
 *      then writes SNAPSHOT_GAP reservations, the most a snapshot can be behind with the default
 *      of one every 1,000 events.
 * PostgreSQL: DATABASE_URL when set, else an ephemeral embedded cluster (bench-support.ts).
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { SystemClock } from '../src/common/clock.js';
import { RandomIdGenerator } from '../src/common/ids.js';
import { DEFAULT_WALLET_LEDGER_OPTIONS, EventSourcedWalletLedger } from '../src/wallets/wallet-ledger.js';
import type { WalletId } from '../src/wallets/wallet-ledger.port.js';
import { PostgresWalletSnapshots } from '../src/wallets/wallet-snapshots.js';
import { benchDatabase, format, runBench, runCleanups, sizeFromEnv, status } from './bench-support.js';
import { writeWallet } from './wallet-writer.js';

const SNAPSHOT_GAP = DEFAULT_WALLET_LEDGER_OPTIONS.snapshotEvery - 1;
const CONTEXT = { correlationId: 'bench-wallet-ledger', actor: { type: 'system' as const, id: 'bench' } };

const median = (values: readonly number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const events = sizeFromEnv('BENCH_EVENTS', 300_000, { min: 2_000, max: 20_000_000 });
  const runs = sizeFromEnv('BENCH_RUNS', 3, { min: 1, max: 50 });
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const { pool, store } = await benchDatabase('wallet-ledger', 8, cleanups);
    const wallet: WalletId = { organizationId: `org_bench_${randomBytes(4).toString('hex')}`, environment: 'live' };
    status(`writing ${format(events)} events to one wallet, chained as the ledger chains them`);
    const written = await writeWallet(store, wallet, events);
    await pool.query('vacuum analyze events');
    const snapshots = new PostgresWalletSnapshots(pool);
    const coldLedger = (withSnapshots: boolean) =>
      withSnapshots
        ? new EventSourcedWalletLedger(store, new SystemClock(), new RandomIdGenerator(), {}, snapshots)
        : new EventSourcedWalletLedger(store, new SystemClock(), new RandomIdGenerator(), { snapshotEvery: 0 });

    /** The first balance read of `runs` cold ledgers: median seconds, and the events each folded. */
    async function firstReads(withSnapshots: boolean): Promise<{ seconds: number; folded: number }> {
      const seconds: number[] = [];
      let folded = 0;
      for (let run = 0; run < runs; run++) {
        const ledger = coldLedger(withSnapshots);
        const started = performance.now();
        await ledger.balance(wallet);
        seconds.push((performance.now() - started) / 1000);
        folded = ledger.stats.eventsFolded;
        await ledger.snapshotsWritten();
      }
      return { seconds: median(seconds), folded };
    }

    status(`without snapshots: ${runs} cold ledgers fold the whole wallet`);
    const whole = await firstReads(false);

    status(`with snapshots: one fold writes the snapshot, then ${format(SNAPSHOT_GAP)} reservations are written after it`);
    const writer = coldLedger(true);
    await writer.balance(wallet);
    await writer.snapshotsWritten();
    if (writer.stats.snapshotsSaved !== 1) throw new Error('the first fold wrote no snapshot');
    for (let i = 0; i < SNAPSHOT_GAP; i++) await writer.reserve(wallet, { reference: `vrf_gap_${i}`, amountKobo: 1, scope: 'nin' }, CONTEXT);
    await writer.snapshotsWritten();
    if (writer.stats.snapshotsSaved !== 1) throw new Error('the reservations after the snapshot wrote another one');
    status(`with snapshots: ${runs} cold ledgers start from the snapshot`);
    const fromSnapshot = await firstReads(true);
    if (fromSnapshot.folded !== SNAPSHOT_GAP) throw new Error(`a cold ledger folded ${fromSnapshot.folded} events after the snapshot, not ${SNAPSHOT_GAP}`);

    process.stdout.write(
      [
        `bench:wallet-ledger — ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; one wallet of ${format(written)} events; median of ${runs} cold ledgers`,
        '',
        "| a cold ledger's first balance read | events folded | time |",
        '|---|---|---|',
        `| without snapshots (the whole stream) | ${format(whole.folded)} | ${(whole.seconds * 1000).toFixed(0)} ms |`,
        `| from the snapshot, ${format(SNAPSHOT_GAP)} events behind | ${format(fromSnapshot.folded)} | ${(fromSnapshot.seconds * 1000).toFixed(0)} ms |`,
        '',
      ].join('\n'),
    );
  } finally {
    await runCleanups(cleanups);
  }
}

runBench(main);
