import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import type { EventToAppend, JsonObject } from './event-store.port.js';
import { PostgresEventStore } from './postgres-event-store.js';
import { postgresStreamCopy, postgresStreamPages } from './postgres-stream-pages.js';

/** An event with empty metadata, beside the others' full metadata. */
const NO_METADATA: JsonObject = {};

// Reads the PostgreSQL event table whichever store the run is configured for: it is that table's reader.
describe('The PostgreSQL readers of one stream', () => {
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
      metadata: i === 3 ? NO_METADATA : { occurredAt: new Date(Date.UTC(2026, 2, 3, 13, 0, i)).toISOString(), actor: { type: 'system', id: 'test' } },
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

  it('reads by COPY the events readStream gives, in pages, escapes and all, and ends a read broken off', async () => {
    const streamId = `wallet-org_${randomUUID().slice(0, 8)}.live`;
    // Every character COPY's text format escapes (backslash, tab, newline, carriage return, backspace, form feed, vertical tab), in data and in a type.
    const awkward = 'tab\there\nnew line\r\u0008\u000c\u000b back\\slash \\N "quote" é 😀';
    const events: EventToAppend[] = Array.from({ length: 2_500 }, (_, i) => ({
      id: randomUUID(),
      type: i === 1_234 ? `Odd\ttype\\${i}` : 'WalletFundsReserved',
      data: { reference: `vrf_${i}`, amountKobo: i, text: i % 100 === 0 ? awkward : 'plain', nested: { list: [1, 'é', null, true, 1.5e-7] } },
      metadata: i === 3 ? NO_METADATA : { occurredAt: new Date(Date.UTC(2026, 2, 3, 13, 0, i % 60)).toISOString(), actor: { type: 'system', id: 'test' } },
    }));
    for (let i = 0; i < events.length; i += 1_000) {
      await store.append(streamId, events.slice(i, i + 1_000), { expectedRevision: i === 0 ? 'no_stream' : BigInt(i - 1) });
    }
    const expected = await store.readStream(streamId, { direction: 'forwards', maxCount: 10_000 });
    expect(expected).toHaveLength(2_500);

    const read = postgresStreamCopy(pool);
    const pages = [];
    for await (const page of read(streamId, 0n, 1_000)) pages.push(page);
    expect(pages.map((page) => page.length)).toEqual([1_000, 1_000, 500]);
    expect(pages.flat()).toEqual(expected);
    expect(pages.flat()[1_234].type).toBe('Odd\ttype\\1234');
    expect(pages.flat()[100].data.text).toBe(awkward);

    const fromMiddle = [];
    for await (const page of read(streamId, 2_499n, 1_000)) fromMiddle.push(...page);
    expect(fromMiddle).toEqual(expected.slice(2_499));
    const none = [];
    for await (const page of read(`wallet-none-${randomUUID()}`, 0n, 10)) none.push(page);
    expect(none).toEqual([]);

    // Broken off after the first page: the COPY's session is closed, not handed back mid-statement, and the pool goes on.
    let during = 0;
    for await (const page of read(streamId, 0n, 10)) {
      expect(page).toEqual(expected.slice(0, 10));
      during = pool.totalCount;
      break;
    }
    expect(pool.totalCount).toBe(during - 1);
    expect((await pool.query<{ one: number }>('select 1 as one')).rows[0].one).toBe(1);
    const again = [];
    for await (const page of read(streamId, 0n, 1_000)) again.push(...page);
    expect(again).toHaveLength(2_500);

    await expect(read(streamId, -1n, 10)[Symbol.asyncIterator]().next()).rejects.toThrow(RangeError);
    await expect(read(streamId, 0n, 0)[Symbol.asyncIterator]().next()).rejects.toThrow();
  });
});
