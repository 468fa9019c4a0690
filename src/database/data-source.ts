import pg from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from './migrations/index.js';

/** Entities of the read models, registered by the features that own them. */
export const ENTITIES: Function[] = [];

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
 * starting together do not race.
 */
export async function runMigrations(url: string): Promise<string[]> {
  const lock = new pg.Client({ connectionString: url });
  lock.on('error', () => undefined); // A lost connection surfaces as a failed query below.
  await lock.connect();
  const dataSource = createDataSource(url, 2);
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await dataSource.initialize();
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}
