/**
 * `npm run maintenance -- <command>`: one-off maintenance of the stores.
 *   encrypt-legacy-events [--batch-size <n>] [--pause-ms <ms>] [--no-progress]
 *       seals, in place, the personal fields of verification events written in plain text before
 *       sealing (PostgreSQL event store only; docs/data-protection.md has the EventStoreDB procedure).
 * The database is the service's: DATABASE_URL, else the embedded cluster under DATA_DIR.
 * Exit codes: 0 done, 1 refused or failed (or stopped by a signal: run it again to go on), 2 usage.
 */
import 'reflect-metadata';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type cliProgress from 'cli-progress';
import { DEFAULT_BATCH_EVENTS, MAX_BATCH_EVENTS, type SealingProgress, type SealingSummary } from './legacy-events.js';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;
const MAX_PAUSE_MS = 60_000;
const RATE_WINDOW_MS = 10_000;

interface EncryptOptions {
  readonly batchSize: number;
  readonly pauseMs: number;
  readonly progress: boolean;
}

function wholeNumber(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^\d{1,7}$/.test(value) || Number(value) < min || Number(value) > max) throw new InvalidArgumentError(`${name} is a whole number from ${min} to ${max}`);
    return Number(value);
  };
}

const err = (line: string) => process.stderr.write(`${line}\n`);

/** Everything heavy (pg, the stores, TypeORM's migrations), loaded once the arguments parsed, so a usage error answers at once. */
async function loadKit() {
  const [progress, config, migrations, pool, database, keys, kms, master, portraits, legacy, store] = await Promise.all([
    import('cli-progress'),
    import('../config/config.js'),
    import('../database/data-source.js'),
    import('../database/pool.js'),
    import('../database/resolve-database.js'),
    import('../data-protection/data-keys.js'),
    import('../data-protection/key-management.port.js'),
    import('../data-protection/master-key.js'),
    import('../portraits/portrait.store.js'),
    import('./legacy-events.js'),
    import('../event-store/open-event-store.js'),
  ]);
  return { cliProgress: progress.default, ...config, ...migrations, ...pool, ...database, ...keys, ...kms, ...master, ...portraits, ...legacy, ...store };
}

/** events done / total, events/s over the last seconds, time left; drawn on a terminal, a line every few seconds elsewhere. */
function progressBar(cli: typeof cliProgress) {
  const bar = new cli.SingleBar(
    {
      stream: process.stderr,
      format: 'encrypt-legacy-events [{bar}] {percentage}% | {value}/{total} events | {rate} events/s | ETA {left}',
      barsize: 30,
      hideCursor: true,
      fps: 5,
      noTTYOutput: true,
      notTTYSchedule: 5_000,
    },
    cli.Presets.shades_classic,
  );
  const samples: { atMs: number; done: number }[] = [];
  let started = false;
  return {
    update({ done, total }: SealingProgress): void {
      const nowMs = Date.now();
      samples.push({ atMs: nowMs, done });
      while (samples.length > 2 && nowMs - samples[0].atMs > RATE_WINDOW_MS) samples.shift();
      const elapsedMs = nowMs - samples[0].atMs;
      const rate = elapsedMs > 0 ? ((done - samples[0].done) * 1000) / elapsedMs : 0;
      const left = rate > 0 ? `${Math.ceil((total - done) / rate)}s` : '?';
      const payload = { rate: Math.round(rate).toLocaleString('en-US'), left };
      if (!started) {
        bar.start(Math.max(total, 1), done, payload);
        started = true;
      }
      bar.setTotal(Math.max(total, done, 1));
      bar.update(done, payload);
    },
    stop: () => (started ? bar.stop() : undefined),
  };
}

function summaryText(summary: SealingSummary): string {
  const lines = [
    `${summary.events} verification events sealed in place (${summary.shredded} of them under a discarded key: their verification had been erased)`,
    `${summary.dataKeysCreated} data keys created, ${summary.portraitsResealed} portraits sealed again under their data key`,
    `${summary.readModelRows} read-model fields replaced by their sealed form`,
  ];
  if (summary.interrupted) lines.push('Stopped before the end: run the command again to seal the rest.');
  else lines.push('No personal field of a verification event is left in plain text.');
  return lines.join('\n');
}

async function encryptLegacyEvents(options: EncryptOptions): Promise<number> {
  const kit = await loadKit();
  const config = kit.loadConfig();
  const database = await kit.resolveDatabase(config);
  const pool = kit.createPool(database.url, 4);
  const store = await kit.openEventStoreAdapter(config.eventStore, pool, database.url);
  // Only a store whose log is a table of this database (its log reader) can have events rewritten in place.
  const legacyEvents = store.logReader?.legacyEvents;
  if (legacyEvents === undefined) {
    err(
      'error: encrypt-legacy-events rewrites events in place, which only the PostgreSQL event store allows. On EventStoreDB (EVENT_STORE=esdb), ' +
        'copy the verification streams into fresh streams with sealed events, then truncate and scavenge the old ones: docs/data-protection.md, "EventStoreDB: a copy into fresh streams".',
    );
    await store.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await database.handle?.stop().catch(() => undefined);
    return EXIT_FAILED;
  }
  const portraits = await kit.FilePortraitStore.open(config);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const bar = options.progress ? progressBar(kit.cliProgress) : undefined;
  try {
    await kit.runMigrations(database.url);
    const keys = new kit.DataKeys(pool, await kit.keyManagement(config));
    const sealer = new kit.LegacyEventSealer(pool, legacyEvents, keys, portraits);
    const summary = await sealer.run({ batchSize: options.batchSize, pauseMs: options.pauseMs, signal: stop.signal, onProgress: (progress) => bar?.update(progress) });
    bar?.stop();
    process.stdout.write(`${summaryText(summary)}\n`);
    return summary.interrupted ? EXIT_FAILED : EXIT_OK;
  } catch (error) {
    bar?.stop();
    if (error instanceof kit.AnotherRunInProgress) err(`error: ${error.message}; let it finish (or stop it) first`);
    // Messages only: a driver error's detail could quote a row.
    else err(`error: ${error instanceof Error ? `${error.name}: ${error.message}` : 'unknown failure'}`);
    return EXIT_FAILED;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await portraits.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await database.handle?.stop().catch(() => undefined);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let job: (() => Promise<number>) | undefined;
  const program = new Command('maintenance').description('One-off maintenance of the stores.').exitOverride();
  program
    .command('encrypt-legacy-events')
    .description(
      'Seal, in place and in batches, the personal fields of verification events written in plain text before sealing (PostgreSQL event store). Resumable: run it again after a stop.',
    )
    .option('--batch-size <n>', `events sealed per transaction (1 to ${MAX_BATCH_EVENTS})`, wholeNumber('--batch-size', 1, MAX_BATCH_EVENTS), DEFAULT_BATCH_EVENTS)
    .option('--pause-ms <ms>', 'pause after each batch, to leave room to the service', wholeNumber('--pause-ms', 0, MAX_PAUSE_MS), 0)
    .option('--no-progress', 'no progress bar')
    .action((options: EncryptOptions) => {
      job = () => encryptLegacyEvents(options);
    });
  try {
    program.parse(argv, { from: 'node' });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    throw error;
  }
  if (job === undefined) {
    program.outputHelp({ error: true });
    return EXIT_USAGE;
  }
  return job();
}

main(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => {
    err(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(EXIT_FAILED);
  },
);
