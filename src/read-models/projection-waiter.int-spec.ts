import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { describeOnPostgresProjectOnly } from '../../test/support/store-independent.js';
import { ProjectionWaiter } from './projection-waiter.js';

describeOnPostgresProjectOnly('ProjectionWaiter on projection_checkpoints', 'the checkpoints are in PostgreSQL on both event stores', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  const queries: string[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    // As the service's pool (src/database/pool.ts): an idle connection that loses its server is dropped.
    pool.on('error', () => undefined);
    await pool.query(`insert into projection_checkpoints (name, position) values ('alpha', 10), ('beta', 10)`);
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    // Counts the statements the waiter sends, to show that waiters share them.
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && args[0].includes('projection_checkpoints')) queries.push(args[0]);
      return query(...args);
    };
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const advance = (name: string, position: number) => pool.query('update projection_checkpoints set position = $2 where name = $1', [name, position]);

  it('answers true once every named checkpoint reached the position, false past the wait (checked once for 0)', async () => {
    const waiter = new ProjectionWaiter(pool);
    expect(await waiter.waitFor(['alpha', 'beta'], 10n, 0)).toBe(true);
    expect(await waiter.waitFor(['alpha', 'beta'], 11n, 0)).toBe(false);
    expect(await waiter.waitFor(['alpha', 'missing'], 1n, 30)).toBe(false);
    const waiting = waiter.waitFor(['alpha', 'beta'], 12n, 2_000);
    await advance('alpha', 12);
    await new Promise((wake) => setTimeout(wake, 50));
    await advance('beta', 15);
    expect(await waiting).toBe(true);
  });

  it('many waiters share one poll, and a position seen passed needs no query at all', async () => {
    const waiter = new ProjectionWaiter(pool);
    await advance('alpha', 20);
    const waiting = Array.from({ length: 50 }, (_, i) => waiter.waitFor(['alpha'], BigInt(21 + (i % 5)), 2_000));
    await new Promise((wake) => setTimeout(wake, 100));
    const before = queries.length;
    await advance('alpha', 30);
    expect(await Promise.all(waiting)).toEqual(Array(50).fill(true));
    // One poll every 5 ms for all fifty, not fifty.
    expect(queries.length - before).toBeLessThan(10);
    const settled = queries.length;
    expect(await waiter.waitFor(['alpha'], 30n, 0)).toBe(true);
    expect(await waiter.waitFor(['alpha'], 25n)).toBe(true);
    expect(queries.length).toBe(settled);
  });

  /*
   * Projection batches commit asynchronously: a crash of PostgreSQL can lose the last one, rows
   * and checkpoint together, while this process still remembers the higher checkpoint. Its
   * connections end with the crash; once they do, the remembered checkpoints are not trusted.
   */
  it('after its connections to PostgreSQL are ended, takes the checkpoints from the database again', async () => {
    const waiter = new ProjectionWaiter(pool);
    await pool.query(`insert into projection_checkpoints (name, position) values ('gamma', 30)`);
    await advance('gamma', 40);
    expect(await waiter.waitFor(['gamma'], 40n, 0)).toBe(true);
    expect(waiter.reached(['gamma'], 40n)).toBe(true);

    // The crash: every connection of the pool ends, and the database comes back without the last batch.
    const outside = new pg.Client({ connectionString: database.url });
    await outside.connect();
    try {
      await outside.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
      await outside.query("update projection_checkpoints set position = 30 where name = 'gamma'");
    } finally {
      await outside.end();
    }
    const deadline = Date.now() + 5_000;
    while (pool.totalCount > 0 && Date.now() < deadline) await new Promise((wake) => setTimeout(wake, 10));
    expect(pool.totalCount).toBe(0);

    expect(waiter.reached(['gamma'], 40n)).toBe(false);
    expect(await waiter.waitFor(['gamma'], 40n, 50)).toBe(false);
    expect(await waiter.waitFor(['gamma'], 30n, 0)).toBe(true);
    // The runner applies the lost batch again: the wait is answered.
    const waiting = waiter.waitFor(['gamma'], 40n, 2_000);
    await advance('gamma', 40);
    expect(await waiting).toBe(true);
  });
});
