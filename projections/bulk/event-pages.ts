import { MAX_READ_COUNT, type CategoryPageReader, type EventStore, type RecordedEvent } from '../../src/event-store/event-store.port.js';

/** Reads one page of a projection's events after a position: at most `maxCount`, in position order. */
export type PageReader = CategoryPageReader;

/** Bounds of a page, in events. */
export const MAX_PAGE_EVENTS = 100_000;

/**
 * Pages for a projection's bulk path: the store's log reader where it has one (the PostgreSQL log,
 * read in chunks of `chunkEvents` with only what projections read: LogReader.categoryPages), else
 * the store's readAll.
 */
export function pageReader(store: EventStore, categories: readonly string[], chunkEvents?: number): PageReader {
  const log = store.logReader;
  if (log === undefined) return storePages(store, categories);
  const read = log.categoryPages(categories, chunkEvents);
  return (from, maxCount) => {
    if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > MAX_PAGE_EVENTS) throw new RangeError(`a page holds 1 to ${MAX_PAGE_EVENTS} events`);
    return read(from, maxCount);
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
