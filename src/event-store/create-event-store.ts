import type pg from 'pg';
import type { Runtime } from '../core.module.js';
import { EsdbEventStore } from './esdb-event-store.js';
import type { EventStore } from './event-store.port.js';
import { PostgresEventStore } from './postgres-event-store.js';

export function createEventStore(runtime: Runtime, pool: pg.Pool): EventStore {
  const { eventStore } = runtime.config;
  if (eventStore.kind === 'esdb') {
    // loadConfig guarantees the connection string when EVENT_STORE=esdb.
    return new EsdbEventStore(eventStore.esdbConnectionString as string);
  }
  return new PostgresEventStore({ pool, connectionString: runtime.databaseUrl });
}
