import type pg from 'pg';
import type { LogReader } from './event-store.port.js';
import { postgresLegacyEvents } from './postgres-legacy-events.js';
import { readLogHoldback } from './postgres-log-holdback.js';
import { countVisibleEventsAfter, estimateEventsAfter, pendingEvents, postgresCategoryPages } from './postgres-log-pages.js';
import { postgresStreamCopy, postgresStreamCopyWith, postgresStreamPages } from './postgres-stream-pages.js';

/** Events per statement of a category page's read (LogReader.categoryPages' default). */
const READ_CHUNK_EVENTS = 2_000;

/** The PostgreSQL adapter's log reader, reading through the adapter's pool. */
export function postgresLogReader(pool: pg.Pool): LogReader {
  return {
    streamPage: postgresStreamPages(pool),
    streamPages: postgresStreamCopy(pool),
    streamPagesWith: (sidecar) => postgresStreamCopyWith(pool, sidecar),
    categoryPages: (categories, chunkEvents = READ_CHUNK_EVENTS) => postgresCategoryPages(pool, categories, chunkEvents),
    estimateEventsAfter: (categories, from) => estimateEventsAfter(pool, categories, from),
    countVisibleEventsAfter: (categories, from, limit) => countVisibleEventsAfter(pool, categories, from, limit),
    pendingEvents: (categories, window) => pendingEvents(pool, categories, window),
    holdback: () => readLogHoldback(pool),
    legacyEvents: postgresLegacyEvents(pool),
  };
}
