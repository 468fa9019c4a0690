import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { describeOnPostgresProjectOnly } from '../../test/support/store-independent.js';
import { createPool, poolConnection } from './pool.js';

describeOnPostgresProjectOnly('the service pool', 'the pool is the same on both event stores', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  it('plans a prepared statement once per connection, even one whose limit and offset are parameters', async () => {
    const pool = createPool(database.url, 1);
    try {
      const client = await pool.connect();
      try {
        const statement = { name: 'pool_spec_page', text: 'select g from generate_series(1, 1000) g order by g desc limit $1 offset $2' };
        for (let call = 0; call < 8; call += 1) {
          const { rows } = await client.query<{ g: number }>({ ...statement, values: [20, call * 20] });
          expect(rows[0]?.g).toBe(1000 - call * 20);
        }
        const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>('select generic_plans, custom_plans from pg_prepared_statements where name = $1', [
          statement.name,
        ]);
        // Under plan_cache_mode=auto this statement is planned afresh on every call (custom_plans 8).
        expect({ generic: Number(rows[0]?.generic_plans), custom: Number(rows[0]?.custom_plans) }).toEqual({ generic: 8, custom: 0 });
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  });

  it("keeps an unused connection through a lull longer than pg's default idle timeout (10 s)", async () => {
    const pool = createPool(database.url, 1);
    try {
      const backend = async () => (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
      const before = await backend();
      await new Promise((wake) => setTimeout(wake, 11_000));
      expect(await backend()).toBe(before);
    } finally {
      await pool.end();
    }
  }, 30_000);

  it('keeps the options of a database URL beside its own', async () => {
    expect(poolConnection('postgres://u@localhost/db')).toEqual({
      connectionString: 'postgres://u@localhost/db',
      options: '-c plan_cache_mode=force_generic_plan -c idle_in_transaction_session_timeout=60s',
    });
    const url = new URL(database.url);
    url.searchParams.set('options', '-c statement_timeout=4321');
    const pool = createPool(url.toString(), 1);
    try {
      const timeout = await pool.query<{ statement_timeout: string }>('show statement_timeout');
      const mode = await pool.query<{ plan_cache_mode: string }>('show plan_cache_mode');
      const idle = await pool.query<{ idle_in_transaction_session_timeout: string }>('show idle_in_transaction_session_timeout');
      expect([timeout.rows[0]?.statement_timeout, mode.rows[0]?.plan_cache_mode, idle.rows[0]?.idle_in_transaction_session_timeout]).toEqual([
        '4321ms',
        'force_generic_plan',
        '1min',
      ]);
    } finally {
      await pool.end();
    }
  });
});
