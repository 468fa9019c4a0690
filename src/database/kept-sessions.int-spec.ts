import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { describeOnPostgresProjectOnly } from '../../test/support/store-independent.js';
import { isConnectionError } from './connection-errors.js';
import type pg from 'pg';
import { KeptSessions } from './kept-sessions.js';
import { createPool } from './pool.js';

const backendOf = async (session: { query: (text: string) => Promise<{ rows: { pid: number }[] }> }) => (await session.query('select pg_backend_pid() as pid')).rows[0].pid;

describeOnPostgresProjectOnly('sessions kept beside the pool', 'the pool is the same on both event stores', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database.drop();
  });

  // Each case: a pool of two and one session kept beside it.
  let pool: pg.Pool;
  let sessions: KeptSessions;

  beforeEach(() => {
    pool = createPool(database.url, 2);
    sessions = new KeptSessions(pool, 1);
  });

  afterEach(async () => {
    await sessions.close();
    await pool.end();
  });

  it("runs one call after another on the same session, with the pool's session options, outside the pool", async () => {
    const first = await sessions.use(backendOf);
    expect(await sessions.use(backendOf)).toBe(first);
    expect(pool.totalCount).toBe(0);
    // The pool's options reach the kept session (pool.ts: generic plans).
    expect(await sessions.use(async (session) => (await session.query<{ plan_cache_mode: string }>('show plan_cache_mode')).rows[0].plan_cache_mode)).toBe('force_generic_plan');
  });

  it('takes a pooled session for a call made while every kept one is busy', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const busy = sessions.use(async (session) => {
      const pid = await backendOf(session);
      await held;
      return pid;
    });
    // Let the first call open its session before the second asks.
    await new Promise((wake) => setTimeout(wake, 200));
    const meanwhile = await sessions.use(backendOf);
    release();
    const kept = await busy;
    expect(meanwhile).not.toBe(kept);
    expect(pool.totalCount).toBe(1);
    expect(await sessions.use(backendOf)).toBe(kept);
  });

  it('replaces a session whose connection was lost, in a call or while idle, and ends the idle ones when closed', async () => {
    const terminate = (pid: number) => pool.query('select pg_terminate_backend($1)', [pid]);
    const first = await sessions.use(backendOf);
    // Lost while idle: the session's error event drops it, and the next call opens another.
    await terminate(first);
    await new Promise((wake) => setTimeout(wake, 300));
    const second = await sessions.use(backendOf);
    expect(second).not.toBe(first);
    // Lost during a call: that call fails as a lost connection, the next one gets a new session.
    const failure = await sessions
      .use(async (session) => {
        await terminate(await backendOf(session));
        return session.query('select 1');
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isConnectionError(failure)).toBe(true);
    const third = await sessions.use(backendOf);
    expect([first, second]).not.toContain(third);
    await sessions.close();
    await new Promise((wake) => setTimeout(wake, 300));
    const { rows } = await pool.query<{ count: string }>('select count(*) as count from pg_stat_activity where pid = $1', [third]);
    expect(Number(rows[0].count)).toBe(0);
  });
});
