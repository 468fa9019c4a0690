import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import type { EventToAppend, JsonObject } from './event-store.port.js';
import { PostgresEventStore } from './postgres-event-store.js';
import { postgresStreamPages } from './postgres-stream-pages.js';

// Reads the PostgreSQL event table whichever store the run is configured for: it is that table's reader.
describe('The PostgreSQL page reader of one stream', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let store: PostgresEventStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    store = new PostgresEventStore({ pool, connectionString: database.url });
  });

  afterAll(async () => {
    await store.close();
    await pool.end();
    await database.drop();
  });

  it('gives the events readStream gives, page by page, data and metadata as stored', async () => {
    const streamId = `wallet-org_${randomUUID().slice(0, 8)}.test`;
    const events: EventToAppend[] = Array.from({ length: 7 }, (_, i) => ({
      id: randomUUID(),
      type: i % 2 === 0 ? 'WalletFundsReserved' : 'WalletDebited',
      data: { reference: `vrf_${i}`, amountKobo: 10 ** i, nested: { list: [1, 'é', null, true, 1.5e-7], '10': 'x', '9': 'y' }, text: 'quote " back\\slash \u0001 😀' },
      metadata: i === 3 ? ({} as JsonObject) : { occurredAt: new Date(Date.UTC(2026, 2, 3, 13, 0, i)).toISOString(), actor: { type: 'system', id: 'test' } },
    }));
    await store.append(streamId, events, { expectedRevision: 'no_stream' });
    await store.append(`other-${randomUUID()}`, [{ id: randomUUID(), type: 'Other', data: {} }], { expectedRevision: 'no_stream' });

    const read = postgresStreamPages(pool);
    const expected = await store.readStream(streamId, { direction: 'forwards', maxCount: 100 });
    const pages = [await read(streamId, 0n, 3), await read(streamId, 3n, 3), await read(streamId, 6n, 3), await read(streamId, 7n, 3)];
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1, 0]);
    expect(pages.flat()).toEqual(expected);
    expect(expected).toHaveLength(7);
    expect(await read(`wallet-none-${randomUUID()}`, 0n, 10)).toEqual([]);
    await expect(read(streamId, -1n, 10)).rejects.toThrow(RangeError);
    await expect(read(streamId, 0n, 0)).rejects.toThrow();
  });
});
