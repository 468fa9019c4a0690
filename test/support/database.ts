import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { TEMPLATE_DATABASE, withDatabase } from './database-url.js';
import { stopTestEventStoreOf } from './event-store.js';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** How long a drop waits for the database's sessions to end before it ends them itself. */
const DROP_GRACE_MS = 2_000;

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
      await withAdmin(async (client) => {
        // A pg pool's end() resolves before its connections have closed. Forcing the drop at once would
        // terminate a closing connection, whose error its pool then throws with no listener (seen on
        // Node 24 under load): give them a moment to go, then force whatever is left.
        const deadline = Date.now() + DROP_GRACE_MS;
        while (Date.now() < deadline) {
          const { rows } = await client.query<{ sessions: number }>('select count(*)::int as sessions from pg_stat_activity where datname = $1', [name]);
          if (rows[0].sessions === 0) break;
          await new Promise((wake) => setTimeout(wake, 20));
        }
        await client.query(`drop database if exists ${name} with (force)`);
      });
    },
  };
}
