import pg from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from './migrations/index.js';
import { ensurePositionEpoch } from './position-epoch.js';

/** Entities of the read models, registered by the features that own them. */
export const ENTITIES: (new (...args: never[]) => object)[] = [];

export function createDataSource(url: string, poolSize: number): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    logging: false,
    extra: { max: poolSize },
  });
}

/** Any key shared by every instance: only one of them migrates at a time. */
const MIGRATION_LOCK_KEY = 7_120_001;

/**
 * Runs pending migrations, each in its own transaction, holding an advisory lock so that instances
 * starting together do not race; then places the event log's positions above its newest event
 * (position-epoch.ts), which throws a PositionEpochError when it cannot: the process must not start.
 */
export async function runMigrations(url: string, options: { log?: (message: string) => void } = {}): Promise<string[]> {
  const lock = new pg.Client({ connectionString: url });
  lock.on('error', () => undefined); // A lost connection surfaces as a failed query below.
  await lock.connect();
  const dataSource = createDataSource(url, 2);
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await dataSource.initialize();
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    const epoch = await ensurePositionEpoch(lock);
    if (epoch.raised) {
      options.log?.(
        `The event log's positions were behind its newest event ${epoch.newestPosition} (the database came from another cluster): position epoch raised to ${epoch.epoch}`,
      );
    }
    return applied.map((migration) => migration.name);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}
