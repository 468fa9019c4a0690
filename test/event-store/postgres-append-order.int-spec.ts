import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PostgresEventStore } from '../../src/event-store/postgres-event-store.js';
import type { ExpectedRevision } from '../../src/event-store/event-store.port.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { describeOnProject } from '../support/store-independent.js';

/**
 * A position comes from the id of the transaction that appends. An append that takes its id and
 * then waits for a stream another append writes meanwhile must still land above that append's
 * events: a stream's later event may never get a lower global position than an earlier one.
 */
describeOnProject('postgres', 'PostgreSQL appends with any or stream_exists that wait for a stream', "the PostgreSQL log's positions only", () => {
  let database: TestDatabase;
  const pools: pg.Pool[] = [];
  const stores: PostgresEventStore[] = [];

  function connect(): { pool: pg.Pool; store: PostgresEventStore } {
    const pool = new pg.Pool({ connectionString: database.url, max: 4 });
    const store = new PostgresEventStore({ pool, connectionString: database.url });
    pools.push(pool);
    stores.push(store);
    return { pool, store };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    for (const pool of pools) await pool.end();
    await database?.drop();
  });

  const event = () => ({ id: randomUUID(), type: 'Written', data: {} });
  const streamId = (name: string) => `${name}-${randomUUID().replace(/-/g, '')}`;

  /** Polls until `count` backends of this database wait for a lock. */
  async function waitersAtLeast(pool: pg.Pool, count: number): Promise<number> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const { rows } = await pool.query<{ waiting: number }>(
        "select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      if (rows[0].waiting >= count || Date.now() > deadline) return rows[0].waiting;
      await new Promise((wake) => setTimeout(wake, 20));
    }
  }

  it.each<ExpectedRevision>(['any', 'stream_exists'])("with %s: the stream's later event gets the higher position", async (expectedRevision) => {
    const first = connect();
    const second = connect();
    const [locked, shared] = [streamId('locked'), streamId('shared')];
    await first.store.append(locked, [event()], { expectedRevision: 'no_stream' });
    await first.store.append(shared, [event()], { expectedRevision: 'no_stream' });

    // Another writer holds the first stream of a two-stream append.
    const holder = await first.pool.connect();
    let late: Promise<unknown> | undefined;
    let early: Promise<unknown> | undefined;
    try {
      await holder.query('begin');
      await holder.query('select revision from event_streams where stream_id = $1 for update', [locked]);
      // This append waits for `locked` before it writes `shared`...
      early = first.store.appendMany([
        { streamId: locked, events: [event()], expectedRevision },
        { streamId: shared, events: [event()], expectedRevision },
      ]);
      expect(await waitersAtLeast(first.pool, 1)).toBeGreaterThanOrEqual(1);
      // ...while one from another process appends to `shared` (it either waits too, or is written now).
      late = second.store.append(shared, [event()], { expectedRevision });
      await Promise.race([late, waitersAtLeast(first.pool, 2)]);
    } finally {
      await holder.query('commit');
      holder.release();
    }
    await Promise.all([early, late]);

    const { rows } = await first.pool.query<{ revision: string; position: string }>('select revision, position from events where stream_id = $1 order by revision', [shared]);
    expect(rows.map((row) => row.revision)).toEqual(['0', '1', '2']);
    const positions = rows.map((row) => BigInt(row.position));
    for (let i = 1; i < positions.length; i += 1) expect(positions[i] > positions[i - 1]).toBe(true);
    // Read in log order, the stream's events come in revision order.
    const inLog = (await first.store.readAll({ maxCount: 100 })).filter((recorded) => recorded.streamId === shared).map((recorded) => recorded.revision);
    expect(inLog).toEqual([0n, 1n, 2n]);
  });
});
