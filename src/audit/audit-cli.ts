/**
 * `npm run audit:wallet -- --org <id> --env test|live [--from <iso>] [--to <iso>] [--format table|csv|json] [--reconcile]`
 *
 * Replays one wallet from the event log (never from the read models), verifies its hash chain,
 * and with --reconcile compares the replay with the read models the API answers from.
 * Exit codes: 0 verified (and reconciled), 1 the audit found a problem (a broken chain, an event
 * breaking the ledger's rules, a difference), 2 usage, 3 could not run (configuration, store
 * unreachable, unknown organization).
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { availableParallelism } from 'node:os';
import type cliProgress from 'cli-progress';
import type { Environment } from '../common/environment.js';
import type { EventStore } from '../event-store/event-store.port.js';
import { parseIsoInstant } from '../common/time.js';
import { AUDIT_FORMATS, type AuditFormat, type AuditWriter, CsvWriter, ENTRY_NO_ROOM, JsonWriter, summaryText, TableWriter } from './audit-format.js';
import type { ReconcileResult } from './reconcile.js';
import type { AuditEntry, ReplaySummary } from './wallet-replay.js';

/**
 * What every run needs, loaded once the arguments parsed (a usage error answers at once). The rest
 * is loaded by the run that needs it: TypeORM only when a migration is pending, the EventStoreDB
 * client only on that store, the read models only for --reconcile (together about a second of
 * start-up on a 2-core machine).
 */
async function loadKit() {
  const [pool, progress, streams, config, migrationStatus, database, openStore, replay, chainHashes] = await Promise.all([
    import('../database/pool.js'),
    import('cli-progress'),
    import('../common/streams.js'),
    import('../config/config.js'),
    import('../database/migration-status.js'),
    import('../database/resolve-database.js'),
    import('../event-store/open-event-store.js'),
    import('./wallet-replay.js'),
    import('./chain-hashes.js'),
  ]);
  return { ...pool, cliProgress: progress.default, ...streams, ...config, ...migrationStatus, ...database, ...openStore, ...replay, ...chainHashes };
}

const EXIT_OK = 0;
const EXIT_FINDINGS = 1;
const EXIT_USAGE = 2;
const EXIT_CANNOT_RUN = 3;
/** Replays shorter than this finish before a bar would be worth drawing. */
const PROGRESS_THRESHOLD_EVENTS = 10_000;
const MAX_ORGANIZATION_ID_LENGTH = 100;

export interface AuditArguments {
  readonly org: string;
  readonly env: Environment;
  readonly from?: Date;
  readonly to?: Date;
  readonly format: AuditFormat;
  readonly reconcile: boolean;
  readonly waitMs: number;
  readonly progress: boolean;
}

export function parseInstant(value: string, name: string): Date {
  const parsed = parseIsoInstant(value);
  if (parsed === undefined) {
    throw new InvalidArgumentError(`${name} must be an ISO 8601 date-time with an offset, e.g. 2026-03-03T14:00:00+01:00`);
  }
  return parsed;
}

function organizationId(value: string): string {
  if (value.length === 0 || value.length > MAX_ORGANIZATION_ID_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) throw new InvalidArgumentError('not an organization id');
  return value;
}

function milliseconds(value: string): number {
  if (!/^\d{1,7}$/.test(value)) throw new InvalidArgumentError('must be a whole number of milliseconds up to 9999999');
  return Number(value);
}

class UsageError extends Error {}

/** The arguments, or a UsageError / CommanderError (exit 2). */
export function parseAuditArguments(argv: readonly string[]): AuditArguments {
  const program = new Command('audit:wallet')
    .description('Replay a wallet from the event log: every entry with its running balance, the totals, the balance as of --to, the hash chain verified.')
    .requiredOption('--org <id>', 'organization id', organizationId)
    .addOption(new Option('--env <env>', 'environment').choices(['test', 'live']).makeOptionMandatory())
    .option('--from <iso>', 'show entries from this time (earlier ones are still replayed for the running balance)', (value) => parseInstant(value, '--from'))
    .option('--to <iso>', 'the as-of time: replay the events up to it', (value) => parseInstant(value, '--to'))
    .addOption(new Option('--format <format>', 'output').choices([...AUDIT_FORMATS]).default('table'))
    .option('--reconcile', 'compare the replay with the wallets, wallet-ledger and verifications read models; exit 1 listing every difference')
    .option('--wait-ms <ms>', 'with --reconcile: how long to wait for the projections to reach the wallet', milliseconds, 10_000)
    .option('--no-progress', 'no progress bar on stderr')
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });
  program.parse(argv, { from: 'node' });
  const options = program.opts<{ org: string; env: Environment; from?: Date; to?: Date; format: AuditFormat; reconcile?: boolean; waitMs: number; progress: boolean }>();
  if (options.from !== undefined && options.to !== undefined && options.from > options.to) throw new UsageError('--from is after --to');
  if (options.reconcile === true && options.to !== undefined)
    throw new UsageError('--reconcile compares the whole history with the read models as they are now: it cannot take --to');
  return { ...options, reconcile: options.reconcile === true };
}

/** stdout, waiting when the consumer is slower than the replay, so that nothing piles up in memory. */
async function write(output: string | Uint8Array): Promise<void> {
  if (output.length === 0 || process.stdout.write(output)) return;
  await new Promise<void>((resolveDrain) => process.stdout.once('drain', resolveDrain));
}

/** Output gathered per write to stdout: a page of 1,000 CSV rows takes about a quarter of it. */
const OUTPUT_CHUNK_BYTES = 1 << 20;
/** UTF-8 takes at most 3 bytes per UTF-16 code unit. */
const MAX_UTF8_BYTES_PER_UNIT = 3;

/**
 * A page's rows in one write to stdout (one write per row, a system call each when stdout is a
 * file, cost more than formatting them), each row encoded into the chunk as it is formatted: the
 * rows concatenated into one string and then encoded cost twice the formatting itself. A chunk is
 * handed to stdout and not reused, as a write may hold on to it.
 */
async function writePage(writer: AuditWriter, page: readonly AuditEntry[]): Promise<void> {
  let chunk = Buffer.allocUnsafe(OUTPUT_CHUNK_BYTES);
  let used = 0;
  for (const entry of page) {
    if (writer.entryInto !== undefined) {
      let end = writer.entryInto(entry, chunk, used);
      if (end === ENTRY_NO_ROOM && used > 0) {
        // The chunk goes out, and the row is written at the start of a fresh one.
        await write(chunk.subarray(0, used));
        chunk = Buffer.allocUnsafe(OUTPUT_CHUNK_BYTES);
        used = 0;
        end = writer.entryInto(entry, chunk, used);
      }
      if (end >= 0) {
        used = end;
        continue;
      }
    }
    const row = writer.entry(entry);
    const room = row.length * MAX_UTF8_BYTES_PER_UNIT;
    if (used + room > chunk.length) {
      await write(chunk.subarray(0, used));
      chunk = Buffer.allocUnsafe(Math.max(OUTPUT_CHUNK_BYTES, room));
      used = 0;
    }
    used += chunk.write(row, used);
  }
  await write(chunk.subarray(0, used));
}

function writerFor(format: AuditFormat): AuditWriter {
  if (format === 'csv') return new CsvWriter();
  if (format === 'json') return new JsonWriter();
  return new TableWriter();
}

function reconcileText(result: ReconcileResult): string {
  const lines = result.differenceCount === 0 ? ['reconcile: the replay matches the read models'] : [`reconcile: ${result.differenceCount} difference(s)`];
  for (const difference of result.differences) lines.push(`  ${difference.check}: ${difference.message}`);
  for (const note of result.notes) lines.push(`  note: ${note}`);
  return `${lines.join('\n')}\n`;
}

function failures(summary: ReplaySummary, reconciled: ReconcileResult | undefined): string[] {
  const found: string[] = [];
  const broken = summary.chain.firstBreak;
  if (broken !== null) found.push(`hash chain broken at revision ${broken.revision} (position ${broken.position}, event ${broken.eventId}): ${broken.message}`);
  if (summary.ledgerProblemCount > 0) found.push(`${summary.ledgerProblemCount} event(s) break the ledger's rules`);
  if (reconciled !== undefined && reconciled.differenceCount > 0) found.push(`${reconciled.differenceCount} difference(s) between the log and the read models`);
  return found;
}

async function audit(args: AuditArguments): Promise<number> {
  const { createPool, cliProgress, streams, loadConfig, ConfigError, resolveDatabase, migrationsApplied, openEventStoreAdapter, lastRevisionOf, WalletReplay, ChainHashWorker } =
    await loadKit();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`error: config: ${error.message}\n`);
      return EXIT_CANNOT_RUN;
    }
    throw error;
  }
  const database = await resolveDatabase(config, { log: (line) => process.stderr.write(`${line}\n`) });
  const pool = createPool(database.url, 4);
  let store: EventStore | undefined;
  let bar: cliProgress.SingleBar | undefined;
  let hashWorker: InstanceType<typeof ChainHashWorker> | undefined;
  try {
    store = await openEventStoreAdapter(config.eventStore, pool, database.url);
    // The read models' tables, on a database the service has not started on yet.
    if (!(await migrationsApplied(pool))) await (await import('../database/data-source.js')).runMigrations(database.url);
    if ((await store.readStream(streams.organization(args.org), { maxCount: 1 })).length === 0) {
      process.stderr.write(`error: not_found: no organization ${args.org}\n`);
      return EXIT_CANNOT_RUN;
    }
    const wallet = { organizationId: args.org, environment: args.env };
    // With the store's log reader (the PostgreSQL log), the replay reads the stream in one COPY, the
    // events' hashes computed on a worker thread meanwhile; without one (EventStoreDB), page by page
    // through the client. On one core the worker would only add its own decoding to the same core's work.
    const log = store.logReader;
    if (log !== undefined && availableParallelism() > 1) hashWorker = new ChainHashWorker();
    const readHashedPages = log === undefined || hashWorker === undefined ? undefined : log.streamPagesWith(hashWorker);
    const total = Number(await lastRevisionOf(store, streams.wallet(args.org, args.env))) + 1;
    if (args.progress && total >= PROGRESS_THRESHOLD_EVENTS) {
      // cli-progress draws only on a terminal: stderr piped to a file stays clean.
      bar = new cliProgress.SingleBar(
        { stream: process.stderr, format: 'replay [{bar}] {percentage}% | {value}/{total} events | ETA {eta_formatted}', fps: 5, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0);
    }
    const onProgress = (read: number) => bar?.update(Math.min(read, total));
    const writer = writerFor(args.format);
    await write(writer.begin());

    let summary: ReplaySummary;
    let reconciled: ReconcileResult | undefined;
    if (args.reconcile) {
      const { reconcileWallet } = await import('./reconcile.js');
      reconciled = await reconcileWallet(store, pool, wallet, {
        from: args.from,
        onProgress,
        readHashedPages,
        recoveryDeadlineMs: config.verifications.recoveryDeadlineMs,
        waitMs: args.waitMs,
        now: () => new Date(),
        onPage: (page) => writePage(writer, page),
      });
      summary = reconciled.summary;
    } else {
      const replay = new WalletReplay(store, wallet, { from: args.from, to: args.to, onProgress, readHashedPages });
      for await (const page of replay.pages()) await writePage(writer, page);
      summary = replay.summary;
    }
    bar?.stop();
    bar = undefined;

    if (args.format === 'json') {
      const end = writer.end(summary);
      // The reconcile result joins the summary object of the one JSON document.
      await write(
        reconciled === undefined
          ? end
          : end.replace(
              /}\n$/,
              `,\n"reconcile":${JSON.stringify({ differenceCount: reconciled.differenceCount, differences: reconciled.differences, notes: reconciled.notes }, null, 2)}}\n`,
            ),
      );
    } else if (args.format === 'csv') {
      // The CSV stays one table a spreadsheet opens; the totals go beside it, on stderr.
      process.stderr.write(summaryText(summary));
      if (reconciled !== undefined) process.stderr.write(reconcileText(reconciled));
    } else {
      await write(writer.end(summary));
      if (reconciled !== undefined) await write(`\n${reconcileText(reconciled)}`);
    }

    const found = failures(summary, reconciled);
    for (const failure of found) process.stderr.write(`error: audit: ${failure}\n`);
    return found.length > 0 ? EXIT_FINDINGS : EXIT_OK;
  } finally {
    bar?.stop();
    await hashWorker?.close().catch(() => undefined);
    await store?.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await database.handle?.stop().catch(() => undefined);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let args: AuditArguments;
  try {
    args = parseAuditArguments(argv);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    if (error instanceof UsageError) {
      process.stderr.write(`error: usage: ${error.message}\n`);
      return EXIT_USAGE;
    }
    throw error;
  }
  try {
    return await audit(args);
  } catch (error) {
    process.stderr.write(`error: failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CANNOT_RUN;
  }
}

// Only when run as the command, not when a test imports the parser.
if (process.argv[1] !== undefined && /audit-cli\.js$/.test(process.argv[1])) {
  main(process.argv).then(
    (code) => process.stdout.write('', () => process.exit(code)),
    () => process.exit(EXIT_CANNOT_RUN),
  );
}
