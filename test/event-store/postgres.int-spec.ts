import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PostgresEventStore } from '../../src/event-store/postgres-event-store.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { writeSampleLogInDatabase } from '../../src/event-store/postgres-sample-log.testing.js';
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

  it('writes an appendMany in one transaction, and group-commits many of them (one refused) without the refused one', async () => {
    const id = () => `ws-${randomUUID().replace(/-/g, '')}`;
    const event = () => ({ id: randomUUID(), type: 'Written', data: {} });
    const [a, b] = [id(), id()];
    await store.appendMany([
      { streamId: a, events: [event(), event()], expectedRevision: 'no_stream' },
      { streamId: b, events: [event()], expectedRevision: 'no_stream' },
    ]);
    const one = await pool.query<{ xmin: string }>('select distinct xmin::text from events where stream_id = any($1)', [[a, b]]);
    expect(one.rows).toHaveLength(1);

    const shared = id();
    await store.append(shared, [event()], { expectedRevision: 'no_stream' });
    const sets = Array.from({ length: 40 }, (_, index) => [
      { streamId: id(), events: [event()], expectedRevision: 'no_stream' as const },
      // One of them expects a revision the shared stream does not have.
      { streamId: shared, events: [event()], expectedRevision: index === 7 ? 99n : ('any' as const) },
    ]);
    const outcomes = await Promise.allSettled(sets.map((set) => store.appendMany(set)));
    expect(outcomes.map((outcome) => outcome.status === 'fulfilled')).toEqual(sets.map((_, index) => index !== 7));
    const own = await pool.query<{ stream_id: string; xmin: string }>('select stream_id, xmin::text from events where stream_id = any($1)', [sets.map((set) => set[0].streamId)]);
    expect(own.rows.map((row) => row.stream_id).sort()).toEqual(
      sets
        .filter((_, index) => index !== 7)
        .map((set) => set[0].streamId)
        .sort(),
    );
    // Group commit: fewer transactions than write-sets.
    expect(new Set(own.rows.map((row) => row.xmin)).size).toBeLessThan(39);
    expect((await store.readStream(shared, { maxCount: 100 })).map((e) => e.revision)).toEqual(Array.from({ length: 40 }, (_, index) => BigInt(index)));
  });

  it('write-sets of two processes creating one new stream at once: exactly one is written, each other refused whole', async () => {
    const other = connect(database.url);
    try {
      const id = () => `ws-${randomUUID().replace(/-/g, '')}`;
      const event = () => ({ id: randomUUID(), type: 'Written', data: {} });
      for (let round = 0; round < 3; round++) {
        const shared = id();
        // Batched on both sides: a batch whose new stream the other side's transaction creates
        // meanwhile fails whole, and its write-sets are written again one by one.
        const sets = Array.from({ length: 24 }, () => [
          { streamId: id(), events: [event()], expectedRevision: 'no_stream' as const },
          { streamId: shared, events: [event()], expectedRevision: 'no_stream' as const },
        ]);
        const outcomes = await Promise.allSettled(sets.map((set, index) => (index % 2 === 0 ? store : other.store).appendMany(set)));
        const won = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [index] : []));
        expect(won).toHaveLength(1);
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ streamId: shared, expected: 'no_stream', actual: 0n });
        }
        const own = await pool.query<{ stream_id: string }>('select stream_id from events where stream_id = any($1)', [sets.map((set) => set[0].streamId)]);
        expect(own.rows.map((row) => row.stream_id)).toEqual([sets[won[0]][0].streamId]);
      }
    } finally {
      await other.store.close();
      await other.pool.end();
    }
  });

  it('writes the key rows of a write-set in its transaction: none left by a refused set, the first of two keys for one reference kept', async () => {
    const id = () => randomUUID().replace(/-/g, '');
    const event = () => ({ id: randomUUID(), type: 'Written', data: {} });
    const rows = (reference: string, wrappedKey: string | null, tokens: string[]) => ({ reference, organizationId: 'org-k', environment: 'test', wrappedKey, tokens });
    const shared = `wallet-${id()}`;
    await store.append(shared, [event()], { expectedRevision: 'no_stream' });
    const references = Array.from({ length: 30 }, id);
    // Batched: each set a new verification stream with its key and tokens, beside one shared stream; set 5 refused.
    const sets = references.map((reference, index) => [
      {
        streamId: `verification-${reference}`,
        events: [event()],
        expectedRevision: 'no_stream' as const,
        keyRows: rows(reference, `key-${index}`, [`t1-${reference}`, `t2-${reference}`]),
      },
      { streamId: shared, events: [event()], expectedRevision: index === 5 ? 99n : ('any' as const) },
    ]);
    // Two sets creating one stream in the same moment, with different keys: one is written, and its key kept.
    const twin = id();
    const twins = [0, 1].map((n) => [
      { streamId: `verification-${twin}`, events: [event()], expectedRevision: 'no_stream' as const, keyRows: rows(twin, `twin-${n}`, [`twin-${n}`]) },
    ]);
    const outcomes = await Promise.allSettled([...sets, ...twins].map((set) => store.appendMany(set)));
    expect(outcomes.slice(0, 30).map((outcome) => outcome.status === 'fulfilled')).toEqual(references.map((_, index) => index !== 5));
    expect(outcomes.slice(30).filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);

    const keys = await pool.query<{ reference: string; wrapped_key: string; xmin: string }>(
      'select reference, wrapped_key, xmin::text from verification_keys where reference = any($1)',
      [references],
    );
    const tokens = await pool.query<{ reference: string; xmin: string }>('select reference, xmin::text from verification_subjects where reference = any($1)', [references]);
    const events = await pool.query<{ stream_id: string; xmin: string }>('select stream_id, xmin::text from events where stream_id = any($1)', [
      references.map((r) => `verification-${r}`),
    ]);
    const written = references.filter((_, index) => index !== 5);
    expect(keys.rows.map((row) => row.reference).sort()).toEqual([...written].sort());
    expect(tokens.rows).toHaveLength(2 * written.length);
    const eventXmin = new Map(events.rows.map((row) => [row.stream_id.slice('verification-'.length), row.xmin]));
    for (const row of [...keys.rows, ...tokens.rows]) expect(row.xmin).toBe(eventXmin.get(row.reference));
    expect(new Set(keys.rows.map((row) => row.xmin)).size).toBeLessThan(written.length);

    const winner = outcomes.findIndex((outcome, index) => index >= 30 && outcome.status === 'fulfilled') - 30;
    const twinKey = await pool.query<{ wrapped_key: string }>('select wrapped_key from verification_keys where reference = $1', [twin]);
    expect(twinKey.rows).toEqual([{ wrapped_key: `twin-${winner}` }]);
    const twinTokens = await pool.query<{ token: string }>('select token from verification_subjects where reference = $1', [twin]);
    expect(twinTokens.rows).toEqual([{ token: `twin-${winner}` }]);

    // A key row left without events (an earlier attempt whose append never committed) sealed nothing: the set creating the stream replaces it.
    const stale = id();
    await pool.query(`insert into verification_keys (reference, organization_id, wrapped_key) values ($1, 'org-k', 'stale')`, [stale]);
    await store.appendMany([{ streamId: `verification-${stale}`, events: [event()], expectedRevision: 'no_stream', keyRows: rows(stale, 'fresh', []) }]);
    expect((await pool.query('select wrapped_key from verification_keys where reference = $1', [stale])).rows).toEqual([{ wrapped_key: 'fresh' }]);
    // Tokens alone ride on any append; a data key only on the one creating its stream.
    await store.appendMany([{ streamId: `verification-${stale}`, events: [event()], expectedRevision: 0n, keyRows: rows(stale, null, ['later']) }]);
    expect((await pool.query('select token from verification_subjects where reference = $1', [stale])).rows).toEqual([{ token: 'later' }]);
    await expect(store.appendMany([{ streamId: `verification-${stale}`, events: [event()], expectedRevision: 1n, keyRows: rows(stale, 'again', []) }])).rejects.toThrow(RangeError);
  });

  it('never lets a subscriber pass an event whose transaction commits after a faster one', async () => {
    const from = await store.headPosition();
    const slow = await pool.connect();
    try {
      // The slow transaction appends first but commits last.
      await slow.query('begin');
      await slow.query(`select * from append_events($1, -1, $2)`, [`gap-slow`, JSON.stringify([{ id: randomUUID(), type: 'Slow', data: {}, metadata: {} }])]);
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

  it('reads its own appends: a readAll after an acknowledged append waits while an older transaction holds the bound back', async () => {
    const slow = await pool.connect();
    try {
      await slow.query('begin');
      await slow.query('select pg_current_xact_id()'); // an xid older than the append's
      const appended = await store.append('own-read-1', [{ id: randomUUID(), type: 'Mine', data: {} }], { expectedRevision: 'no_stream' });
      const reading = store.readAll({ direction: 'backwards', maxCount: 1, filter: { streamCategories: ['own'] } });
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
      await slow.query('commit');
      expect((await reading).map((event) => event.position)).toEqual([appended.position]);
    } finally {
      slow.release();
    }
  });

  it('refuses to update or delete an event', async () => {
    await store.append('immutable-1', [{ id: randomUUID(), type: 'Fact', data: {} }], { expectedRevision: 'any' });
    await expect(pool.query(`update events set data = '{"x":1}' where stream_id = 'immutable-1'`)).rejects.toThrow(/append-only/);
    await expect(pool.query(`delete from events where stream_id = 'immutable-1'`)).rejects.toThrow(/append-only/);
  });

  it('catching up over several windows, each read while the one before is delivered, a filtered subscription delivers every matching event once, in order, with its commit time', async () => {
    const from = await store.headPosition();
    // 24,012 events, 12,003 of them wallet events: three catch-up windows, the last one short.
    const log = await writeSampleLogInDatabase(pool, { organizations: 3, verifications: 6_000, chunk: 2_500 });
    expect(log.events).toBe(24_012);
    const { rows } = await pool.query<{ position: string; created_at: Date }>(
      `select position, created_at from events where position > $1 and split_part(stream_id, '-', 1) = 'wallet' order by position`,
      [from.toString()],
    );
    expect(rows).toHaveLength(12_003);
    // The generated log is consistent: revisions run 0, 1, 2, … in each stream, and the adapter's stream revisions follow.
    const { rows: broken } = await pool.query(
      `select stream_id from (select stream_id, revision, row_number() over (partition by stream_id order by position) - 1 as expected from events where position > $1) e
       where revision <> expected
       union all
       select e.stream_id from events e join event_streams s using (stream_id) where e.position > $1 group by e.stream_id, s.revision having max(e.revision) <> s.revision`,
      [from.toString()],
    );
    expect(broken).toEqual([]);

    const subscription = store.subscribeToAll({ fromPosition: from, filter: { streamCategories: ['wallet'] } });
    const seen: RecordedEvent[] = [];
    for await (const event of subscription) {
      seen.push(event);
      if (seen.length === rows.length) break;
    }
    await subscription.close();
    expect(seen.map((event) => event.position.toString())).toEqual(rows.map((row) => row.position));
    expect(seen.map((event) => event.createdAt.getTime())).toEqual(rows.map((row) => row.created_at.getTime()));
    expect(new Set(seen.map((event) => event.type))).toEqual(new Set(['WalletFunded', 'WalletFundsReserved', 'WalletDebited', 'WalletReservationReleased']));
  });

  it('a catch-up subscription closed while its next window is being read ends cleanly', async () => {
    const from = await store.headPosition();
    await writeSampleLogInDatabase(pool, { organizations: 2, verifications: 5_000 });
    const subscription = store.subscribeToAll({ fromPosition: from });
    let delivered = 0;
    for await (const event of subscription) {
      expect(event.position).toBeGreaterThan(from);
      if (++delivered === 10) break;
    }
    await subscription.close();
    expect(delivered).toBe(10);
  });

  describe('group commit: appends made together are written in one transaction, each with its own expected revision', () => {
    const fact = (n: number) => ({ id: randomUUID(), type: 'Fact', data: { n } });
    const transactionOf = (position: bigint) => position / 1_000_000n;

    it('writes concurrent appends to many streams in fewer transactions, each stream in order and complete', async () => {
      const results = await Promise.all(Array.from({ length: 60 }, (_, index) => store.append(`group-${index}`, [fact(0), fact(1)], { expectedRevision: 'no_stream' })));
      expect(results.every((result) => result.nextExpectedRevision === 1n)).toBe(true);
      // At most two batches are in flight, so 60 appends made at once share transactions.
      expect(new Set(results.map((result) => transactionOf(result.position))).size).toBeLessThan(60);
      for (let index = 0; index < 60; index += 1) {
        const events = await store.readStream(`group-${index}`, { maxCount: 10 });
        expect(events.map((event) => [event.revision, event.data.n])).toEqual([
          [0n, 0],
          [1n, 1],
        ]);
        expect(events[1].position).toBe(results[index].position);
      }
    });

    it('refuses only the append whose expected revision is wrong; the others in its batch are written', async () => {
      await store.append('group-conflict', [fact(0)], { expectedRevision: 'no_stream' });
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 10 }, (_, index) => store.append(`group-ok-${index}`, [fact(0)], { expectedRevision: 'no_stream' })),
        store.append('group-conflict', [fact(1)], { expectedRevision: 5n }),
        store.append('group-conflict', [fact(2)], { expectedRevision: 0n }),
      ]);
      expect(outcomes.slice(0, 10).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
      expect(outcomes[10]).toMatchObject({ status: 'rejected', reason: { code: 'wrong_expected_revision' } });
      expect(outcomes[11]).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 1n } });
      expect((await store.readStream('group-conflict', { maxCount: 10 })).map((event) => event.data.n)).toEqual([0, 2]);
    });

    it('keeps the order of appends to one stream made together, each checked against the one before', async () => {
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 10 }, (_, index) => store.append(`group-filler-${index}`, [fact(0)], { expectedRevision: 'any' })),
        store.append('group-same', [fact(0)], { expectedRevision: 'no_stream' }),
        store.append('group-same', [fact(1), fact(2)], { expectedRevision: 0n }),
        store.append('group-same', [fact(3)], { expectedRevision: 0n }),
      ]);
      expect(outcomes[10]).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 0n } });
      expect(outcomes[11]).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 2n } });
      expect(outcomes[12]).toMatchObject({ status: 'rejected', reason: { code: 'wrong_expected_revision', actual: 2n } });
      expect((await store.readStream('group-same', { maxCount: 10 })).map((event) => [event.revision, event.data.n])).toEqual([
        [0n, 0],
        [1n, 1],
        [2n, 2],
      ]);
    });

    it('checks an expected event id against the events of an earlier append of the same batch', async () => {
      const opened = fact(0);
      await store.append('group-chained', [opened], { expectedRevision: 'no_stream' });
      const held = [fact(1), fact(2)];
      // One statement, so one batch whatever the timing: the second and third sets expect revision 2,
      // which only the first set of the batch brings the stream to.
      const sets = [
        { streamId: 'group-chained', events: held, expectedRevision: 0n, expectedEventId: opened.id },
        { streamId: 'group-chained', events: [fact(3)], expectedRevision: 2n, expectedEventId: held[0].id },
        { streamId: 'group-chained', events: [fact(4)], expectedRevision: 2n, expectedEventId: held[1].id },
      ];
      const { rows } = await pool.query<{ next_revision: string | null; actual: string | null }>(
        'select next_revision, actual from append_write_sets($1, $2, $3, $4, $5, $6, $7)',
        [
          sets.map((set) => set.streamId),
          sets.map((set) => set.expectedRevision.toString()),
          sets.map((set) => set.events.length),
          [1, 2, 3],
          sets.flatMap((set, index) => set.events.map(() => index + 1)),
          JSON.stringify(sets.flatMap((set) => set.events.map((event) => ({ ...event, metadata: {} })))),
          sets.map((set) => set.expectedEventId),
        ],
      );
      expect(rows).toEqual([
        { next_revision: '2', actual: null },
        { next_revision: null, actual: '2' },
        { next_revision: '3', actual: null },
      ]);
      expect((await store.readStream('group-chained', { maxCount: 10 })).map((event) => [event.revision, event.data.n])).toEqual([
        [0n, 0],
        [1n, 1],
        [2n, 2],
        [3n, 4],
      ]);
    });

    it('fails only the append PostgreSQL refuses, and answers a retried append with its first result', async () => {
      const first = fact(0);
      const original = await store.append('group-retry', [first], { expectedRevision: 'no_stream' });
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 10 }, (_, index) => store.append(`group-neighbour-${index}`, [fact(0)], { expectedRevision: 'no_stream' })),
        store.append('group-bad', [{ id: randomUUID(), type: 'Fact', data: { text: 'nul \u0000 byte' } }], { expectedRevision: 'no_stream' }),
        store.append('group-retry', [first], { expectedRevision: 'no_stream' }),
      ]);
      expect(outcomes.slice(0, 10).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
      expect(outcomes[10].status).toBe('rejected');
      expect(outcomes[11]).toEqual({ status: 'fulfilled', value: original });
      expect(await store.readStream('group-bad', { maxCount: 10 })).toEqual([]);
      expect(await store.readStream('group-retry', { maxCount: 10 })).toHaveLength(1);
    });
  });
});
