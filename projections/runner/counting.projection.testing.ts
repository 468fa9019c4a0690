import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { EventStore, RecordedEvent } from '../../src/event-store/event-store.port.js';
import { eachEvent, type Projection } from '../projection.js';
import type { ProjectionRunner } from './projection-runner.js';
import { asError } from '../../src/common/errors.js';

/**
 * A projection for the machinery's own tests: counts the events of each stream of one category.
 * On purpose it is NOT idempotent (each application adds one), so that an event applied twice,
 * or a rolled-back batch that leaked rows, shows up as a wrong count.
 */
export function countingProjection(
  name: string,
  options: { fail?: (event: RecordedEvent) => boolean; before?: (event: RecordedEvent) => Promise<void> } = {},
): Projection & { readonly table: string; readonly category: string } {
  const table = `${name.replaceAll('-', '_')}_counts`;
  const category = `${name.replaceAll('-', '')}`;
  return {
    name,
    table,
    category,
    categories: [category],
    tables: [table],
    handle: eachEvent(async (event, context) => {
      await options.before?.(event);
      await context.query(
        `insert into ${context.table(table)} (stream_id, events, last_position) values ($1, 1, $2)
         on conflict (stream_id) do update set events = ${context.table(table)}.events + 1, last_position = excluded.last_position`,
        [event.streamId, event.position.toString()],
      );
      // After the write: a failure must roll back the write too.
      if (options.fail?.(event)) throw new Error(`refused event ${event.type}`);
    }),
  };
}

export async function createCountingTable(pool: pg.Pool, projection: { readonly table: string }): Promise<void> {
  await pool.query(`create table ${projection.table} (stream_id text primary key, events int not null, last_position bigint not null)`);
  await pool.query(`create index ${projection.table}_last on ${projection.table} (last_position)`);
}

/** Appends `perStream` events to each of `streams` streams of the category, in appends of up to `perAppend`. */
export async function appendCounted(
  store: EventStore,
  category: string,
  options: { streams: number; perStream: number; perAppend?: number; firstStream?: number; data?: (stream: number, index: number) => Record<string, string | number | boolean> },
): Promise<bigint> {
  let last = 0n;
  const perAppend = options.perAppend ?? options.perStream;
  for (let stream = options.firstStream ?? 0; stream < (options.firstStream ?? 0) + options.streams; stream++) {
    for (let index = 0; index < options.perStream; index += perAppend) {
      const count = Math.min(perAppend, options.perStream - index);
      const events = Array.from({ length: count }, (_, offset) => ({
        id: randomUUID(),
        type: 'Counted',
        data: { schemaVersion: 1, n: index + offset, ...options.data?.(stream, index + offset) },
      }));
      const result = await store.append(`${category}-${stream}`, events, { expectedRevision: 'any' });
      if (result.position > last) last = result.position;
    }
  }
  // The last position written: the head as a subscriber will see it once every older transaction ends.
  return last;
}

const COUNT_PAGE = 5_000;

/** The counts the projection must hold: straight from the log, through the port (either store). */
export async function expectedCounts(store: EventStore, category: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let fromPosition: bigint | undefined;
  for (;;) {
    const page = await store.readAll({ fromPosition, maxCount: COUNT_PAGE, filter: { streamCategories: [category] } });
    for (const event of page) counts[event.streamId] = (counts[event.streamId] ?? 0) + 1;
    if (page.length < COUNT_PAGE) return counts;
    fromPosition = (page.at(-1) as RecordedEvent).position;
  }
}

export async function actualCounts(pool: pg.Pool, table: string): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ stream_id: string; events: number }>(`select stream_id, events from ${table}`);
  return Object.fromEntries(rows.map((row) => [row.stream_id, row.events]));
}

export async function checkpointOf(
  pool: pg.Pool,
  name: string,
): Promise<{ position: bigint; state: string; error: string | null; failedPosition: bigint | null; eventsProcessed: number } | undefined> {
  const { rows } = await pool.query<{ position: string; state: string; error: string | null; failed_position: string | null; events_processed: string }>(
    'select * from projection_checkpoints where name = $1',
    [name],
  );
  const row = rows[0];
  return row === undefined
    ? undefined
    : {
        position: BigInt(row.position),
        state: row.state,
        error: row.error,
        failedPosition: row.failed_position === null ? null : BigInt(row.failed_position),
        eventsProcessed: Number(row.events_processed),
      };
}

/** Polls `condition` every `intervalMs` (a costly condition should poll less often than a cheap one). */
export async function waitUntil(condition: () => Promise<boolean> | boolean, timeoutMs: number, what: string, intervalMs = 25): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await condition()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, intervalMs));
  }
}

/** Runs `runner` until its checkpoint `checkpointName` reaches `last`, then stops it; a failure of the runner fails the wait. */
export async function runUntilCheckpoint(pool: pg.Pool, runner: ProjectionRunner, checkpointName: string, last: bigint): Promise<void> {
  runner.start();
  let failure: Error | undefined;
  runner.finished.catch((error: unknown) => (failure = asError(error)));
  await waitUntil(async () => failure !== undefined || ((await checkpointOf(pool, checkpointName))?.position ?? 0n) >= last, 60_000, `${checkpointName} to reach ${last}`);
  await runner.stop();
  if (failure !== undefined) throw failure;
}
