import type pg from 'pg';
import type { Runtime } from '../config/runtime.js';
import { EsdbEventStore } from './esdb-event-store.js';
import type { EventStore } from './event-store.port.js';
import { InstrumentedEventStore } from './instrumented-event-store.js';
import { PostgresEventStore } from './postgres-event-store.js';

/** The configured adapter, with its appends timed for /metrics. */
export function createEventStore(runtime: Runtime, pool: pg.Pool): EventStore {
  const { eventStore } = runtime.config;
  // loadConfig guarantees the connection string when EVENT_STORE=esdb.
  const adapter =
    eventStore.kind === 'esdb' ? new EsdbEventStore(eventStore.esdbConnectionString as string) : new PostgresEventStore({ pool, connectionString: runtime.databaseUrl });
  return new InstrumentedEventStore(adapter);
}
