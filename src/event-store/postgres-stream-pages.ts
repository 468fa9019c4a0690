import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { isConnectionError } from '../database/connection-errors.js';
import { prepared } from '../database/prepared.js';
import {
  assertReadCount,
  EventStoreUnavailableError,
  type CopyRowsSidecar,
  type JsonObject,
  type RecordedEvent,
  type SidecarPage,
  type SidecarPagesReader,
  type StreamPageReader,
  type StreamPagesReader,
} from './event-store.port.js';

export type { CopyRowsSidecar, SidecarPage, SidecarPagesReader, StreamPageReader, StreamPagesReader };

/**
 * One page of a stream, forwards, from the PostgreSQL event table: the same events as the
 * adapter's `readStream(streamId, { fromRevision, maxCount })`, decoded with less work for long
 * sequential reads (the finance audit reads every event of a wallet, a million or more).
 *
 * The row comes back as an array of text values, every type parser bypassed: `data` and `metadata`
 * are parsed here with JSON.parse, as pg's own jsonb parser does, and the commit time is sent as
 * milliseconds since the epoch (floored, as pg's timestamptz parser truncates to the millisecond)
 * instead of a timestamptz text, whose parser costs about as much as the rest of the row. The
 * stream id is the one asked for, not read back. This costs the client markedly less CPU per event
 * than `readStream` (bench:audit compares the readers: docs/benchmarks.md).
 */

const PAGE_SQL = `select position, revision, event_id, type, data, metadata, floor(extract(epoch from created_at) * 1000)
  from events where stream_id = $1 and revision >= $2 order by revision limit $3`;

const rawText = (value: string) => value;
const RAW_TYPES = { getTypeParser: () => rawText } as unknown as pg.CustomTypesConfig;

type PageRow = [position: string, revision: string, eventId: string, type: string, data: string, metadata: string, createdAtMs: string];

export function postgresStreamPages(pool: pg.Pool): StreamPageReader {
  return async (streamId, fromRevision, maxCount) => {
    assertReadCount(maxCount);
    if (fromRevision < 0n) throw new RangeError(`invalid revision ${fromRevision}`);
    let rows: PageRow[];
    try {
      rows = (await pool.query<PageRow>({ ...prepared(PAGE_SQL, [streamId, fromRevision.toString(), maxCount]), rowMode: 'array', types: RAW_TYPES })).rows;
    } catch (error) {
      if (isConnectionError(error)) throw new EventStoreUnavailableError('PostgreSQL event store unreachable', { cause: error });
      throw error;
    }
    const events: RecordedEvent[] = new Array<RecordedEvent>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      events[i] = {
        id: row[2],
        streamId,
        type: row[3],
        revision: BigInt(row[1]),
        position: BigInt(row[0]),
        data: JSON.parse(row[4]) as JsonObject,
        metadata: JSON.parse(row[5]) as JsonObject,
        createdAt: new Date(Number(row[6])),
      };
    }
    return events;
  };
}

/** Bytes PostgreSQL may send ahead of the reader, on top of the socket's own buffers: about 1,600 wallet events. */
export const COPY_READ_AHEAD_BYTES = 1 << 20;
/**
 * Bytes of COPY data gathered before they are cut into rows and handed to the sidecar: about 200
 * wallet events. The stream hands out whatever arrived since the last read, often a single 8 KiB
 * message of a dozen rows, and each run costs a message to the worker thread (a tenth of the
 * audit's main thread when sent per chunk), a concatenation with the partial row before it and a
 * decoding call.
 */
const COPY_GATHER_BYTES = 128 << 10;
const NEWLINE = 0x0a;
/** The columns the COPY readers select, in order: position, revision, event id, type, data, metadata, commit time. */
export const COPY_FIELDS = 7;

/**
 * Cuts the COPY row of the events table that starts at `start` in `rows` (whole rows in COPY's text
 * format, each ending with a newline) into `fields`; answers where the next row starts. The reader
 * below and the audit's chain hash worker (src/audit/chain-hashes.ts) cut the same rows alike.
 */
export function cutCopyRow(rows: string, start: number, fields: string[]): number {
  let from = start;
  for (let i = 0; i < COPY_FIELDS - 1; i++) {
    const tab = rows.indexOf('\t', from);
    if (tab < 0) throw new Error('invariant: a COPY row of the events table has fewer fields than selected');
    fields[i] = rows.slice(from, tab);
    from = tab + 1;
  }
  const newline = rows.indexOf('\n', from);
  if (newline < 0) throw new Error('invariant: a run of COPY rows ends inside a row');
  fields[COPY_FIELDS - 1] = rows.slice(from, newline);
  return newline + 1;
}
const COPY_ESCAPES: Readonly<Record<string, string>> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** A field of COPY's text format as stored: `\\` for a backslash, `\t` for a tab, and so on (only JSON with escapes in it has any). */
export function copyText(field: string): string {
  return field.includes('\\') ? field.replace(/\\(.)/g, (_, escaped: string) => COPY_ESCAPES[escaped] ?? escaped) : field;
}

/**
 * The same events as `postgresStreamPages`, read by one `COPY (select …) TO STDOUT` instead of a
 * query per page: PostgreSQL streams the rows while the caller folds the ones before (flow control
 * holds it to about a megabyte ahead, so memory stays flat), there is no round trip between pages,
 * and the rows arrive as lines of text that are cut here with less work than the driver's per-row
 * messages. One statement, so one snapshot: the events committed when the read began.
 */
export function postgresStreamCopy(pool: pg.Pool): StreamPagesReader {
  return async function* readPages(streamId, fromRevision, pageSize) {
    for await (const page of copyPages(pool, streamId, fromRevision, pageSize, undefined)) yield page.events;
  };
}

/**
 * The COPY reader with a sidecar: each chunk's rows go to `sidecar.submit` as they arrive, and a
 * page is handed out once the pages after it, up to one page ahead, are submitted, so that the
 * sidecar works on the next page while the caller folds this one. Memory stays at a few pages.
 */
export function postgresStreamCopyWith(pool: pg.Pool, sidecar: CopyRowsSidecar): SidecarPagesReader {
  return (streamId, fromRevision, pageSize) => copyPages(pool, streamId, fromRevision, pageSize, sidecar);
}

/** A run of a chunk's sidecar answer: the rows from `from` to `to` of that chunk. */
interface SideRun {
  readonly answer: Promise<string>;
  readonly from: number;
  readonly to: number;
}

interface PendingPage {
  readonly events: RecordedEvent[];
  readonly runs: SideRun[];
}

async function settle(page: PendingPage, width: number): Promise<SidecarPage> {
  let side = '';
  for (const run of page.runs) {
    const answer = await run.answer;
    side += run.from === 0 && run.to * width === answer.length ? answer : answer.slice(run.from * width, run.to * width);
  }
  if (side.length !== page.events.length * width) throw new Error('invariant: the sidecar answered for another number of rows than it was given');
  return { events: page.events, side };
}

/**
 * The COPY data as runs of whole rows of at least `minBytes` (the last run may be shorter), each a
 * view of one buffer kept for the whole read: valid only until the next run is asked for. A fresh
 * buffer per run (a concatenation, a copy for the sidecar) cost more than decoding the run: large
 * allocations are mapped, faulted in and unmapped each time.
 */
async function* wholeRowRuns(chunks: AsyncIterable<Buffer>, minBytes: number): AsyncGenerator<Buffer> {
  let buffer = Buffer.allocUnsafe(2 * minBytes);
  let filled = 0;
  for await (const chunk of chunks) {
    if (filled + chunk.length > buffer.length) {
      const larger = Buffer.allocUnsafe(Math.max(2 * buffer.length, filled + chunk.length));
      buffer.copy(larger, 0, 0, filled);
      buffer = larger;
    }
    filled += chunk.copy(buffer, filled);
    if (filled < minBytes) continue;
    // A row ends at a newline byte (one inside a value is sent as a backslash and an n, and no UTF-8 sequence holds that byte).
    const end = buffer.lastIndexOf(NEWLINE, filled - 1);
    if (end < 0) continue;
    yield buffer.subarray(0, end + 1);
    // The start of the next row, moved to the front.
    buffer.copyWithin(0, end + 1, filled);
    filled -= end + 1;
  }
  if (filled > 0 && buffer[filled - 1] !== NEWLINE) throw new Error('invariant: the COPY of the events table ended inside a row');
  if (filled > 0) yield buffer.subarray(0, filled);
}

/** The COPY statement of the readers above (bench:audit's replay floor runs the same one). */
export function streamCopySql(client: Pick<pg.ClientBase, 'escapeLiteral'>, streamId: string, fromRevision: bigint): string {
  // COPY takes no parameters: the stream id goes in as a quoted literal, the revision as a bigint's digits.
  return (
    `copy (select position, revision, event_id, type, data, metadata, floor(extract(epoch from created_at) * 1000) from events ` +
    `where stream_id = ${client.escapeLiteral(streamId)} and revision >= ${fromRevision.toString()} order by revision) to stdout`
  );
}

async function* copyPages(pool: pg.Pool, streamId: string, fromRevision: bigint, pageSize: number, sidecar: CopyRowsSidecar | undefined): AsyncGenerator<SidecarPage> {
  assertReadCount(pageSize);
  if (fromRevision < 0n) throw new RangeError(`invalid revision ${fromRevision}`);
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    if (isConnectionError(error)) throw new EventStoreUnavailableError('PostgreSQL event store unreachable', { cause: error });
    throw error;
  }
  const copy = client.query(copyTo(streamCopySql(client, streamId, fromRevision), { highWaterMark: COPY_READ_AHEAD_BYTES }));
  const width = sidecar?.width ?? 0;
  // Full pages not yet handed out (with a sidecar: held until the next page is submitted).
  const ready: PendingPage[] = [];
  // One array for every row: its fields are read into the event before the next row is cut.
  const fields = new Array<string>(COPY_FIELDS);
  let finished = false;
  try {
    let page: PendingPage = { events: [], runs: [] };
    for await (const rows of wholeRowRuns(copy as AsyncIterable<Buffer>, COPY_GATHER_BYTES)) {
      // The sidecar takes the rows before they are decoded here (and copies what it keeps: the view is reused).
      const answer = sidecar?.submit(streamId, rows);
      // The answer may be awaited only later, behind a failure of this reader: it must not fail unobserved meanwhile.
      void answer?.catch(() => undefined);
      let row = 0;
      let runFrom = 0;
      const lines = rows.toString('utf8');
      let start = 0;
      while (start < lines.length) {
        start = cutCopyRow(lines, start, fields);
        page.events.push({
          id: fields[2],
          streamId,
          type: copyText(fields[3]),
          revision: BigInt(fields[1]),
          position: BigInt(fields[0]),
          data: JSON.parse(copyText(fields[4])) as JsonObject,
          metadata: JSON.parse(copyText(fields[5])) as JsonObject,
          createdAt: new Date(Number(fields[6])),
        });
        row++;
        if (page.events.length === pageSize) {
          if (answer !== undefined) page.runs.push({ answer, from: runFrom, to: row });
          runFrom = row;
          if (sidecar === undefined) {
            yield { events: page.events, side: '' };
          } else {
            ready.push(page);
            // One full page submitted ahead of the one handed out.
            if (ready.length > 1) yield await settle(ready.shift() as PendingPage, width);
          }
          page = { events: [], runs: [] };
        }
      }
      if (answer !== undefined && row > runFrom) page.runs.push({ answer, from: runFrom, to: row });
    }
    for (const held of ready.splice(0)) yield await settle(held, width);
    if (page.events.length > 0) yield sidecar === undefined ? { events: page.events, side: '' } : await settle(page, width);
    finished = true;
  } catch (error) {
    if (isConnectionError(error)) throw new EventStoreUnavailableError('PostgreSQL event store unreachable', { cause: error });
    throw error;
  } finally {
    // A COPY broken off (the caller stopped early, or it failed) leaves the session mid-statement: it is closed, not pooled.
    if (!finished) copy.destroy();
    client.release(finished ? undefined : true);
  }
}
