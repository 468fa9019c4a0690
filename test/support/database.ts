import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropDatabaseWhenIdle } from '../../src/database/drop-database.js';
import { TEMPLATE_DATABASE, withDatabase } from './database-url.js';
import { stopTestEventStoreOf } from './event-store.js';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

function adminUrl(): string {
  const url = process.env.TEST_PG_ADMIN_URL;
  if (url === undefined) throw new Error('TEST_PG_ADMIN_URL is not set: integration tests need the jest global setup');
  return url;
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(adminUrl(), 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of its own for one test file (a copy of the migrated template); on esdb, with its own event store (event-store.ts). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `ledger_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((client) => client.query(`create database ${name} template ${TEMPLATE_DATABASE}`));
  return {
    name,
    url: withDatabase(adminUrl(), name),
    drop: async () => {
      await stopTestEventStoreOf(name);
      await withAdmin((client) => dropDatabaseWhenIdle(client, name));
    },
  };
}
