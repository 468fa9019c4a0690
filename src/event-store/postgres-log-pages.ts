import type pg from 'pg';
import { prepared } from '../database/prepared.js';
import type { CategoryPageReader, JsonObject, PendingEvents, PendingWindow, RecordedEvent } from './event-store.port.js';

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
 * event (on a 2-core virtual machine, 2 s for a page of 20,000 at 1,000,000 events, against 0.1 s
 * in position order).
 */
export function pageSql(categories: readonly string[]): string {
  const inCategories = categoriesCondition(categories);
  return `select position, stream_id, revision, event_id, type, data, occurred_at, created_ms from (
    select position, stream_id, revision, event_id, type, data, metadata ->> 'occurredAt' as occurred_at, floor(extract(epoch from created_at) * 1000) as created_ms
    from events where position > $1 and (${inCategories}) order by position limit $2) page
  where position < (select events_visible_bound()) order by position`;
}

/** `split_part(stream_id, '-', 1) = any(categories)` as prefix tests, which the planner can estimate (see pageSql). */
function categoriesCondition(categories: readonly string[]): string {
  if (categories.length === 0 || categories.some((category) => !/^[A-Za-z0-9_]+$/.test(category))) throw new RangeError('invariant: a category is a non-empty word');
  return categories.map((category) => `stream_id ^@ '${category}-' or stream_id = '${category}'`).join(' or ');
}

const rawText = (value: string) => value;
const RAW_TYPES = { getTypeParser: () => rawText } as unknown as pg.CustomTypesConfig;

type PageRow = [position: string, streamId: string, revision: string, eventId: string, type: string, data: string, occurredAt: string | null, createdMs: string];

/**
 * Pages for a projection's bulk path: the rows come back as text, every type parser bypassed, and
 * only `data` is parsed: the events' metadata holds only `occurredAt`, the one field of it
 * projections read (Projection.pages says so). A page is read `chunkEvents` at a time, each
 * chunk decoded as it arrives: the rows' text then dies young instead of surviving, with the whole
 * page's, the collections that run while the page before is applied (garbage collection is a large
 * share of the runner's time).
 */
export function postgresCategoryPages(pool: pg.Pool, categories: readonly string[], chunkEvents: number): CategoryPageReader {
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
  return async (from, maxCount) => {
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
 * About how many of the categories' events lie after `from`: the planner's estimate, from the
 * log's statistics. Counting them read every event of the log once more, a cost in proportion to
 * the whole log.
 */
export async function estimateEventsAfter(pool: pg.Pool, categories: readonly string[], from: bigint): Promise<number | null> {
  const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
    `explain (format json) select 1 from events where position > ${from.toString()} and (${categoriesCondition(categories)})`,
  );
  const estimate = rows[0]['QUERY PLAN'][0].Plan['Plan Rows'];
  return Number.isFinite(estimate) && estimate >= 0 ? Math.round(estimate) : null;
}

/** The categories' visible events after `from`; null when there are `limit` or more. */
export async function countVisibleEventsAfter(pool: pg.Pool, categories: readonly string[], from: bigint, limit: number): Promise<number | null> {
  const { rows } = await pool.query<{ count: string }>(
    `select count(*) as count from (select 1 from events where position > $1 and position < events_visible_bound() and split_part(stream_id, '-', 1) = any($2::text[]) limit $3) e`,
    [from.toString(), [...categories], limit],
  );
  const count = Number(rows[0].count);
  return count >= limit ? null : count;
}

/** The categories' events in the window, visible or not, counted (bounded by its limit) and aged in SQL. */
export async function pendingEvents(pool: pg.Pool, categories: readonly string[], window: PendingWindow): Promise<PendingEvents> {
  if (!Number.isInteger(window.limit) || window.limit < 1) throw new RangeError('invariant: a bounded count');
  const { rows } = await pool.query<{ count: string; oldest: Date | null; settled: string; settled_oldest: Date | null }>(
    `select count(*) as count, min(created_at) as oldest,
            count(*) filter (where position <= $4) as settled, min(created_at) filter (where position <= $4) as settled_oldest from (
       select position, created_at from events where position > $1 and position <= $2 and split_part(stream_id, '-', 1) = any($3::text[]) order by position limit ${window.limit}
     ) pending`,
    [window.from.toString(), window.newest.toString(), [...categories], window.head.toString()],
  );
  return { count: Number(rows[0].count), oldest: rows[0].oldest, settled: Number(rows[0].settled), settledOldest: rows[0].settled_oldest };
}
