import type pg from 'pg';
import { prepared } from '../../src/database/prepared.js';
import { MAX_READ_COUNT, type EventStore, type JsonObject, type RecordedEvent } from '../../src/event-store/event-store.port.js';

/** Reads one page of a projection's events after a position: at most `maxCount`, in position order. */
export type PageReader = (from: bigint, maxCount: number) => Promise<RecordedEvent[]>;

/**
 * The page of the PostgreSQL log after $1 in the given categories, at most $2 events, below the
 * visible bound (an event committed behind an older open transaction waits for the next page, as
 * with readAll; invisible positions all lie above the visible ones, so the visible rows of a page
 * are a prefix of it). The page is taken first, in position order on the primary key, and bounded
 * after, for the reason readAll gives (PostgresEventStore.readAll). Only what projections read is
 * sent: metadata's `occurredAt` rather than the whole metadata, and the commit time as
 * milliseconds rather than timestamptz text.
 *
 * The categories are literals in the text (a projection's few, fixed names; one prepared
 * statement per projection) and tested as prefixes of the stream id, which is what
 * `split_part(stream_id, '-', 1) = category` means: the planner estimates a prefix from the
 * column's statistics, but had no estimate for split_part, guessed 0.5 % of the log, and planned
 * a page from position 0 as a scan of the whole log and an on-disk sort of the category's every
 * event (2 s for a page of 20,000 at 1,000,000 events, against 0.1 s in position order).
 */
export function pageSql(categories: readonly string[]): string {
  const inCategories = categoriesCondition(categories);
  return `select position, stream_id, revision, event_id, type, data, occurred_at, created_ms from (
    select position, stream_id, revision, event_id, type, data, metadata ->> 'occurredAt' as occurred_at, floor(extract(epoch from created_at) * 1000) as created_ms
    from events where position > $1 and (${inCategories}) order by position limit $2) page
  where position < (select events_visible_bound()) order by position`;
}

/** `split_part(stream_id, '-', 1) = any(categories)` as prefix tests, which the planner can estimate (see pageSql). */
export function categoriesCondition(categories: readonly string[]): string {
  if (categories.length === 0 || categories.some((category) => !/^[A-Za-z0-9_]+$/.test(category))) throw new RangeError('invariant: a category is a non-empty word');
  return categories.map((category) => `stream_id ^@ '${category}-' or stream_id = '${category}'`).join(' or ');
}

const rawText = (value: string) => value;
const RAW_TYPES = { getTypeParser: () => rawText } as unknown as pg.CustomTypesConfig;

type PageRow = [position: string, streamId: string, revision: string, eventId: string, type: string, data: string, occurredAt: string | null, createdMs: string];

/** Bounds of a page, in events. */
export const MAX_PAGE_EVENTS = 100_000;
/** Events per statement of a page's read (pageReader's default). */
const READ_CHUNK_EVENTS = 2_000;

/**
 * Pages for a projection's bulk path. On PostgreSQL the rows come back as text, every type parser
 * bypassed, and only `data` is parsed: the events' metadata holds only `occurredAt`, the one field
 * of it projections read (Projection.applyPage says so). On another store, the store's readAll.
 */
export function pageReader(pool: pg.Pool, store: EventStore, categories: readonly string[], chunkEvents = READ_CHUNK_EVENTS): PageReader {
  if (store.kind !== 'postgres') return storePages(store, categories);
  const sql = pageSql(categories);
  const readChunk = async (from: bigint, maxCount: number, into: RecordedEvent[]): Promise<number> => {
    const { rows } = await pool.query<PageRow>({ ...prepared(sql, [from.toString(), maxCount]), rowMode: 'array', types: RAW_TYPES });
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      into.push({
        id: row[3],
        streamId: row[1],
        type: row[4],
        revision: BigInt(row[2]),
        position: BigInt(row[0]),
        data: JSON.parse(row[5]) as JsonObject,
        metadata: row[6] === null ? {} : { occurredAt: row[6] },
        createdAt: new Date(Number(row[7])),
      });
    }
    return rows.length;
  };
  // A page is read chunkEvents at a time, each chunk decoded as it arrives: the rows' text
  // then dies young instead of surviving, with the whole page's, the collections that run while
  // the page before is applied (garbage collection is a large share of the runner's time).
  return async (from, maxCount) => {
    if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > MAX_PAGE_EVENTS) throw new RangeError(`a page holds 1 to ${MAX_PAGE_EVENTS} events`);
    const events: RecordedEvent[] = [];
    for (let cursor = from; events.length < maxCount; cursor = events[events.length - 1].position) {
      const wanted = Math.min(chunkEvents, maxCount - events.length);
      // A short chunk is the visible head: what lies beyond waits for the next page.
      if ((await readChunk(cursor, wanted, events)) < wanted) break;
    }
    return events;
  };
}

/**
 * A page through the store's readAll, in reads of at most MAX_READ_COUNT. Only events after the
 * position are kept: EventStoreDB's read starts at the position given, PostgreSQL's after it.
 */
function storePages(store: EventStore, categories: readonly string[]): PageReader {
  const filter = { streamCategories: categories };
  return async (from, maxCount) => {
    const page: RecordedEvent[] = [];
    let cursor = from;
    while (page.length < maxCount) {
      const read = await store.readAll({ fromPosition: cursor === 0n ? undefined : cursor, maxCount: Math.min(MAX_READ_COUNT, maxCount - page.length + 1), filter });
      const fresh = read.filter((event) => event.position > cursor).slice(0, maxCount - page.length);
      if (fresh.length === 0) break;
      page.push(...fresh);
      cursor = fresh[fresh.length - 1].position;
    }
    return page;
  };
}

/**
 * The pages after `from`, each read while the one before is applied: at most one page ahead, so
 * the memory held is two pages. Ends after the first page shorter than `pageEvents` (the head, as
 * far as it was visible then) or when `more()` says no before the next read.
 */
export async function* pagesAfter(read: PageReader, from: bigint, pageEvents: number, more: () => boolean): AsyncGenerator<RecordedEvent[]> {
  let next: Promise<RecordedEvent[]> | undefined = read(from, pageEvents);
  try {
    while (next !== undefined) {
      const page = await next;
      next = undefined;
      if (page.length === 0) return;
      if (page[0].position <= from) throw new Error(`invariant: a page after ${from} starts at ${page[0].position}`);
      from = page[page.length - 1].position;
      if (page.length === pageEvents && more()) {
        next = read(from, pageEvents);
        // Awaited (and its failure handled) on the next turn, or dropped when the caller stops.
        next.catch(() => undefined);
      }
      yield page;
    }
  } finally {
    await next?.catch(() => undefined);
  }
}
