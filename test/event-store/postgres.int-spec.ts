import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PostgresEventStore } from '../../src/event-store/postgres-event-store.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { describeEventStoreContract } from './event-store.contract.js';

function connect(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 16 });
  const store = new PostgresEventStore({ pool, connectionString: url });
  return { pool, store };
}

describeEventStoreContract('postgres', async () => {
  const database = await createTestDatabase();
  const a = connect(database.url);
  const b = connect(database.url);
  return {
    store: a.store,
    otherStore: b.store,
    dispose: async () => {
      await a.store.close();
      await b.store.close();
      await a.pool.end();
      await b.pool.end();
      await database.drop();
    },
  };
});

describe('PostgreSQL event log specifics', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let store: PostgresEventStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    ({ pool, store } = connect(database.url));
  });
  afterAll(async () => {
    await store.close();
    await pool.end();
    await database.drop();
  });

  it('never lets a subscriber pass an event whose transaction commits after a faster one', async () => {
    const from = await store.headPosition();
    const slow = await pool.connect();
    try {
      // The slow transaction appends first but commits last.
      await slow.query('begin');
      await slow.query(`select * from append_events($1, -1, $2::uuid[], array['Slow'], array['{}'::jsonb], array['{}'::jsonb])`, [`gap-slow`, [randomUUID()]]);
      await store.append('gap-fast', [{ id: randomUUID(), type: 'Fast', data: {} }], { expectedRevision: 'no_stream' });

      const subscription = store.subscribeToAll({ fromPosition: from, filter: { streamCategories: ['gap'] } });
      const seen: RecordedEvent[] = [];
      const reading = (async () => {
        for await (const e of subscription) {
          seen.push(e);
          if (seen.length === 2) break;
        }
      })();
      await new Promise((r) => setTimeout(r, 500));
      // While the slow transaction is open, neither event is visible: the fast one is held back.
      expect(seen).toEqual([]);
      await slow.query('commit');
      await reading;
      await subscription.close();
      expect(seen.map((e) => e.type)).toEqual(['Slow', 'Fast']);
    } finally {
      slow.release();
    }
  });

  it('refuses to update or delete an event', async () => {
    await store.append('immutable-1', [{ id: randomUUID(), type: 'Fact', data: {} }], { expectedRevision: 'any' });
    await expect(pool.query(`update events set data = '{"x":1}' where stream_id = 'immutable-1'`)).rejects.toThrow(/append-only/);
    await expect(pool.query(`delete from events where stream_id = 'immutable-1'`)).rejects.toThrow(/append-only/);
  });
});
