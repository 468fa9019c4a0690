import type pg from 'pg';
import type { AppConfig } from '../config/config.js';
import type { EventStore } from './event-store.port.js';

/**
 * The configured store's adapter alone, for the command-line tools: only its own client is loaded
 * (the EventStoreDB client only on that store), and its appends are not timed (createEventStore,
 * the service's, times them for /metrics).
 */
export async function openEventStoreAdapter(config: AppConfig['eventStore'], pool: pg.Pool, databaseUrl: string): Promise<EventStore> {
  if (config.kind === 'esdb') {
    const { EsdbEventStore } = await import('./esdb-event-store.js');
    // loadConfig guarantees the connection string when EVENT_STORE=esdb.
    return new EsdbEventStore(config.esdbConnectionString as string);
  }
  const { PostgresEventStore } = await import('./postgres-event-store.js');
  return new PostgresEventStore({ pool, connectionString: databaseUrl });
}
