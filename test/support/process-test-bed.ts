import { afterAll, beforeAll } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from './database.js';
import { createTestEventStore, type TestEventStore } from './event-store.js';

/** What a suite that runs the built service or CLIs as child processes needs: each set in beforeAll. */
export interface ProcessTestBed {
  readonly database: TestDatabase;
  readonly pool: pg.Pool;
  /** The run's event store (PostgreSQL, or the EventStoreDB test server), with the env its processes need. */
  readonly events: TestEventStore;
  /** A working directory of the suite's own (DATA_DIR, cwd of the CLIs), removed afterwards. */
  readonly dir: string;
}

/**
 * Registers the suite's beforeAll and afterAll: a test database, a pool on it, the run's event store
 * and a temporary directory named after `dirPrefix`. `beforeTeardown` runs first in afterAll (stop the
 * suite's child processes there). Reading a field before beforeAll has run throws.
 */
export function processTestBed(dirPrefix: string, options: { poolMax?: number; beforeTeardown?: () => Promise<void> } = {}): ProcessTestBed {
  let state: ProcessTestBed | undefined;
  const partial: { database?: TestDatabase; pool?: pg.Pool; events?: TestEventStore; dir?: string } = {};
  beforeAll(async () => {
    partial.database = await createTestDatabase();
    partial.pool = new pg.Pool({ connectionString: partial.database.url, max: options.poolMax ?? 2 });
    partial.events = await createTestEventStore(partial.database, partial.pool);
    partial.dir = await mkdtemp(join(tmpdir(), dirPrefix));
    state = partial as ProcessTestBed;
  });
  afterAll(async () => {
    await options.beforeTeardown?.();
    await partial.events?.close();
    await partial.pool?.end();
    await partial.database?.drop();
    if (partial.dir !== undefined) await rm(partial.dir, { recursive: true, force: true });
  });
  const ready = (): ProcessTestBed => {
    if (state === undefined) throw new Error('processTestBed: read before beforeAll ran');
    return state;
  };
  return {
    get database() {
      return ready().database;
    },
    get pool() {
      return ready().pool;
    },
    get events() {
      return ready().events;
    },
    get dir() {
      return ready().dir;
    },
  };
}
