import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { type EventStore, type EventToAppend, type RecordedEvent, type Subscription, WrongExpectedRevisionError } from '../../src/event-store/event-store.port.js';

export interface ContractTarget {
  readonly store: EventStore;
  /** A second, independent connection to the same store (another process, in effect). */
  readonly otherStore: EventStore;
  dispose(): Promise<void>;
}

const event = (type: string, data: Record<string, string | number> = {}): EventToAppend => ({
  id: randomUUID(),
  type,
  data: { schemaVersion: 1, ...data },
  metadata: { correlationId: 'test' },
});

/** A unique stream id per test: tests share one store and must not see each other's streams. */
const stream = (category: string) => `${category}-${randomUUID().replace(/-/g, '')}`;

async function expectWrongRevision(promise: Promise<unknown>, expected: unknown, actual: bigint | 'no_stream'): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(WrongExpectedRevisionError);
  expect((error as WrongExpectedRevisionError).expected).toBe(expected);
  expect((error as WrongExpectedRevisionError).actual).toBe(actual);
}

/** Collects events from a subscription until `until` holds, failing after `timeoutMs`. */
async function collect(subscription: Subscription, until: (seen: RecordedEvent[]) => boolean, timeoutMs = 60_000): Promise<RecordedEvent[]> {
  const seen: RecordedEvent[] = [];
  const deadline = setTimeout(() => void subscription.close(), timeoutMs);
  try {
    for await (const recorded of subscription) {
      seen.push(recorded);
      if (until(seen)) break;
    }
  } finally {
    clearTimeout(deadline);
    await subscription.close();
  }
  return seen;
}

function expectStrictlyIncreasing(events: readonly RecordedEvent[]): void {
  for (let i = 1; i < events.length; i++) expect(events[i].position > events[i - 1].position).toBe(true);
}

/** The semantics both adapters promise. Run with `describeEventStoreContract('postgres', ...)`. */
export function describeEventStoreContract(name: string, connect: () => Promise<ContractTarget>): void {
  describe(`EventStore contract: ${name}`, () => {
    let target: ContractTarget;
    let store: EventStore;

    beforeAll(async () => {
      target = await connect();
      store = target.store;
    });
    afterAll(async () => target?.dispose());

    describe('append and read one stream', () => {
      it('writes revisions from 0 and reads back ids, types, data and metadata', async () => {
        const id = stream('order');
        const events = [event('Placed', { amountKobo: 500 }), event('Paid'), event('Shipped')];
        const result = await store.append(id, events, { expectedRevision: 'no_stream' });
        expect(result.nextExpectedRevision).toBe(2n);

        const read = await store.readStream(id, { maxCount: 10 });
        expect(read.map((e) => [e.id, e.type, e.revision, e.streamId])).toEqual(events.map((e, i) => [e.id, e.type, BigInt(i), id]));
        expect(read[0].data).toEqual({ schemaVersion: 1, amountKobo: 500 });
        expect(read[0].metadata).toEqual({ correlationId: 'test' });
        expect(read[0].createdAt).toBeInstanceOf(Date);
        expect(read[2].position).toBe(result.position);
        expectStrictlyIncreasing(read);
      });

      it('reads backwards, from a revision, and bounded', async () => {
        const id = stream('order');
        await store.append(id, [event('A'), event('B'), event('C'), event('D')], { expectedRevision: 'no_stream' });
        expect((await store.readStream(id, { direction: 'backwards', maxCount: 2 })).map((e) => e.type)).toEqual(['D', 'C']);
        expect((await store.readStream(id, { fromRevision: 1n, maxCount: 2 })).map((e) => e.type)).toEqual(['B', 'C']);
        expect((await store.readStream(id, { direction: 'backwards', fromRevision: 1n, maxCount: 10 })).map((e) => e.type)).toEqual(['B', 'A']);
      });

      it('reads a missing stream as empty', async () => {
        expect(await store.readStream(stream('missing'), { maxCount: 10 })).toEqual([]);
      });

      it('refuses unbounded reads and empty appends', async () => {
        await expect(store.readStream(stream('x'), { maxCount: 0 })).rejects.toThrow(RangeError);
        await expect(store.readAll({ maxCount: 1_000_000 })).rejects.toThrow(RangeError);
        await expect(store.append(stream('x'), [], { expectedRevision: 'any' })).rejects.toThrow(RangeError);
      });

      it('refuses event ids that are not UUIDs, system event types and negative revisions', async () => {
        await expect(store.append(stream('x'), [{ ...event('A'), id: 'not-a-uuid' }], { expectedRevision: 'any' })).rejects.toThrow(RangeError);
        await expect(store.append(stream('x'), [event('$system')], { expectedRevision: 'any' })).rejects.toThrow(RangeError);
        await expect(store.append(stream('x'), [event('A')], { expectedRevision: -1n })).rejects.toThrow(RangeError);
      });
    });

    describe('expected revision', () => {
      it('no_stream fails on an existing stream, carrying the actual revision', async () => {
        const id = stream('acct');
        await store.append(id, [event('Opened'), event('Funded')], { expectedRevision: 'no_stream' });
        await expectWrongRevision(store.append(id, [event('Again')], { expectedRevision: 'no_stream' }), 'no_stream', 1n);
      });

      it('an exact revision must match the current one', async () => {
        const id = stream('acct');
        await store.append(id, [event('Opened')], { expectedRevision: 'no_stream' });
        await expectWrongRevision(store.append(id, [event('Stale')], { expectedRevision: 5n }), 5n, 0n);
        const ok = await store.append(id, [event('Next')], { expectedRevision: 0n });
        expect(ok.nextExpectedRevision).toBe(1n);
        await expectWrongRevision(store.append(id, [event('Stale')], { expectedRevision: 0n }), 0n, 1n);
      });

      it('an exact revision on a missing stream reports no_stream', async () => {
        await expectWrongRevision(store.append(stream('acct'), [event('X')], { expectedRevision: 0n }), 0n, 'no_stream');
      });

      it('stream_exists needs the stream; any takes whatever is there', async () => {
        const id = stream('acct');
        await expectWrongRevision(store.append(id, [event('X')], { expectedRevision: 'stream_exists' }), 'stream_exists', 'no_stream');
        expect((await store.append(id, [event('A')], { expectedRevision: 'any' })).nextExpectedRevision).toBe(0n);
        expect((await store.append(id, [event('B')], { expectedRevision: 'stream_exists' })).nextExpectedRevision).toBe(1n);
        expect((await store.append(id, [event('C'), event('D')], { expectedRevision: 'any' })).nextExpectedRevision).toBe(3n);
      });

      it('nothing of a refused append is written', async () => {
        const id = stream('acct');
        await store.append(id, [event('Opened')], { expectedRevision: 'no_stream' });
        await store.append(id, [event('X'), event('Y')], { expectedRevision: 7n }).catch(() => undefined);
        expect((await store.readStream(id, { maxCount: 10 })).map((e) => e.type)).toEqual(['Opened']);
      });

      it('a retried append of the same event ids writes them once', async () => {
        const id = stream('acct');
        const events = [event('Opened'), event('Funded')];
        const first = await store.append(id, events, { expectedRevision: 'no_stream' });
        const retry = await store.append(id, events, { expectedRevision: 'no_stream' });
        expect(retry.nextExpectedRevision).toBe(first.nextExpectedRevision);
        expect(await store.readStream(id, { maxCount: 10 })).toHaveLength(2);
      });

      it('of two appenders racing on one revision, exactly one wins', async () => {
        for (let round = 0; round < 10; round++) {
          const id = stream('race');
          await store.append(id, [event('Opened')], { expectedRevision: 'no_stream' });
          const results = await Promise.allSettled([
            store.append(id, [event('First')], { expectedRevision: 0n }),
            target.otherStore.append(id, [event('Second')], { expectedRevision: 0n }),
          ]);
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          const loser = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
          expect(loser.reason).toBeInstanceOf(WrongExpectedRevisionError);
          expect(await store.readStream(id, { maxCount: 10 })).toHaveLength(2);
        }
      });

      it('of two creators racing on no_stream, exactly one wins', async () => {
        for (let round = 0; round < 10; round++) {
          const id = stream('race');
          const results = await Promise.allSettled([
            store.append(id, [event('A')], { expectedRevision: 'no_stream' }),
            target.otherStore.append(id, [event('B')], { expectedRevision: 'no_stream' }),
          ]);
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        }
      });
    });

    describe('append to several streams (appendMany)', () => {
      it('writes each stream at its own expected revision and answers one result per stream, in order', async () => {
        const order = stream('order');
        const wallet = stream('wallet');
        await store.append(wallet, [event('Opened'), event('Funded')], { expectedRevision: 'no_stream' });
        const placed = event('Placed');
        const held = event('Held');
        const results = await store.appendMany([
          { streamId: order, events: [placed], expectedRevision: 'no_stream' },
          { streamId: wallet, events: [held], expectedRevision: 1n },
        ]);
        expect(results.map((result) => result.nextExpectedRevision)).toEqual([0n, 2n]);
        const [readOrder] = await store.readStream(order, { maxCount: 10 });
        const readWallet = await store.readStream(wallet, { fromRevision: 2n, maxCount: 10 });
        expect([readOrder.id, readOrder.position]).toEqual([placed.id, results[0].position]);
        expect(readWallet.map((e) => [e.id, e.revision, e.position])).toEqual([[held.id, 2n, results[1].position]]);
      });

      it('refuses a stream whose revision does not match, naming it: on an atomic store nothing is written, in order the streams before it are', async () => {
        const first = stream('order');
        const refusing = stream('wallet');
        const last = stream('order');
        await store.append(refusing, [event('Opened')], { expectedRevision: 'no_stream' });
        const error = await store
          .appendMany([
            { streamId: first, events: [event('A')], expectedRevision: 'no_stream' },
            { streamId: refusing, events: [event('B')], expectedRevision: 5n },
            { streamId: last, events: [event('C')], expectedRevision: 'no_stream' },
          ])
          .then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect(error).toMatchObject({ streamId: refusing, expected: 5n, actual: 0n });
        expect(await store.readStream(refusing, { maxCount: 10 })).toHaveLength(1);
        expect(await store.readStream(last, { maxCount: 10 })).toEqual([]);
        expect(await store.readStream(first, { maxCount: 10 })).toHaveLength(store.multiStreamAppends === 'atomic' ? 0 : 1);
      });

      it('refuses a stream named twice and more events than one append takes', async () => {
        const id = stream('order');
        await expect(
          store.appendMany([
            { streamId: id, events: [event('A')], expectedRevision: 'any' },
            { streamId: id, events: [event('B')], expectedRevision: 'any' },
          ]),
        ).rejects.toThrow(RangeError);
        await expect(store.appendMany([])).rejects.toThrow(RangeError);
      });

      it('concurrent writes to shared streams: a refused one refuses only itself, the others are all written', async () => {
        const shared = stream('wallet');
        await store.append(shared, [event('Opened')], { expectedRevision: 'no_stream' });
        const own = Array.from({ length: 12 }, () => stream('order'));
        // All at once, so that an atomic store group-commits them: every one expects revision 0 of the
        // shared stream, only one can have it; the others' own streams must stay empty.
        const outcomes = await Promise.allSettled(
          own.map((id) =>
            store.appendMany([
              { streamId: id, events: [event('Placed')], expectedRevision: 'no_stream' },
              { streamId: shared, events: [event('Held')], expectedRevision: 0n },
            ]),
          ),
        );
        const won = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [index] : []));
        expect(won).toHaveLength(1);
        for (const outcome of outcomes) {
          if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ streamId: shared, expected: 0n, actual: 1n });
        }
        expect(await store.readStream(shared, { maxCount: 10 })).toHaveLength(2);
        const written = await Promise.all(own.map((id) => store.readStream(id, { maxCount: 10 })));
        expect(written.map((events) => events.length)).toEqual(own.map((_, index) => (won.includes(index) || store.multiStreamAppends === 'in_order' ? 1 : 0)));
      });
    });

    describe('expected event id (an append conditioned on the event at its expected revision)', () => {
      it('on a store that checks it, writes only when the stream holds that event at that revision; elsewhere refuses the condition, writing nothing', async () => {
        const id = stream('wallet');
        const [first, second] = [event('Opened'), event('Funded')];
        await store.append(id, [first, second], { expectedRevision: 'no_stream' });
        const onSecond = event('Held');
        const appending = store.append(id, [onSecond], { expectedRevision: 1n, expectedEventId: second.id });
        if (store.expectedEventIds !== 'checked') {
          await expect(appending).rejects.toThrow(RangeError);
          await expect(store.appendMany([{ streamId: id, events: [event('Held')], expectedRevision: 1n, expectedEventId: second.id }])).rejects.toThrow(RangeError);
          expect(await store.readStream(id, { maxCount: 10 })).toHaveLength(2);
          return;
        }
        expect((await appending).nextExpectedRevision).toBe(2n);
        // The right revision with another event there: the stream lost the fold's events and was written again.
        await expectWrongRevision(store.append(id, [event('Held')], { expectedRevision: 2n, expectedEventId: first.id }), 2n, 2n);
        await expectWrongRevision(store.append(id, [event('Held')], { expectedRevision: 2n, expectedEventId: randomUUID() }), 2n, 2n);
        // A wrong revision is refused as before, whatever the id.
        await expectWrongRevision(store.append(id, [event('Held')], { expectedRevision: 1n, expectedEventId: second.id }), 1n, 2n);
        expect((await store.readStream(id, { maxCount: 10 })).map((e) => e.id)).toEqual([first.id, second.id, onSecond.id]);
      });

      it('on a store that checks it, refuses a write-set whose append names another event, naming that stream and writing nothing of the set', async () => {
        if (store.expectedEventIds !== 'checked') return;
        const wallet = stream('wallet');
        const order = stream('order');
        const opened = event('Opened');
        await store.append(wallet, [opened], { expectedRevision: 'no_stream' });
        const error = await store
          .appendMany([
            { streamId: order, events: [event('Placed')], expectedRevision: 'no_stream' },
            { streamId: wallet, events: [event('Held')], expectedRevision: 0n, expectedEventId: randomUUID() },
          ])
          .then(
            () => undefined,
            (thrown: unknown) => thrown,
          );
        expect(error).toMatchObject({ streamId: wallet, expected: 0n, actual: 0n });
        expect(await store.readStream(order, { maxCount: 10 })).toEqual([]);
        const results = await store.appendMany([
          { streamId: order, events: [event('Placed')], expectedRevision: 'no_stream' },
          { streamId: wallet, events: [event('Held')], expectedRevision: 0n, expectedEventId: opened.id },
        ]);
        expect(results.map((result) => result.nextExpectedRevision)).toEqual([0n, 1n]);
      });

      it('refuses an expected event id that is not a UUID, or that comes without a revision number', async () => {
        const id = stream('wallet');
        await expect(store.append(id, [event('Opened')], { expectedRevision: 'no_stream', expectedEventId: randomUUID() })).rejects.toThrow(RangeError);
        await expect(store.append(id, [event('Opened')], { expectedRevision: 0n, expectedEventId: 'not-a-uuid' })).rejects.toThrow(RangeError);
        expect(await store.readStream(id, { maxCount: 10 })).toEqual([]);
      });
    });

    describe('read all', () => {
      it('reads forwards from an exclusive position and backwards from the end', async () => {
        const head = await store.headPosition();
        const id = stream('all');
        await store.append(id, [event('One'), event('Two'), event('Three')], { expectedRevision: 'no_stream' });
        const forwards = await store.readAll({ fromPosition: head, maxCount: 100, filter: { streamCategories: ['all'] } });
        const mine = forwards.filter((e) => e.streamId === id);
        expect(mine.map((e) => e.type)).toEqual(['One', 'Two', 'Three']);
        expectStrictlyIncreasing(forwards);

        const after = await store.readAll({ fromPosition: mine[0].position, maxCount: 100 });
        expect(after.find((e) => e.id === mine[0].id)).toBeUndefined();
        expect(after.find((e) => e.id === mine[1].id)).toBeDefined();

        const backwards = await store.readAll({ direction: 'backwards', maxCount: 3 });
        expect(backwards.map((e) => e.type)).toEqual(['Three', 'Two', 'One']);
        expect(await store.headPosition()).toBe(mine[2].position);
      });

      it('filters by stream category or event type', async () => {
        const head = await store.headPosition();
        const categoryA = `cata${randomUUID().slice(0, 8)}`;
        const categoryB = `catb${randomUUID().slice(0, 8)}`;
        const rareType = `Rare${randomUUID().slice(0, 8)}`;
        await store.append(`${categoryA}-1`, [event('X'), event('Y')], { expectedRevision: 'any' });
        await store.append(`${categoryB}-1`, [event('Z'), event(rareType)], { expectedRevision: 'any' });
        const byCategory = await store.readAll({ fromPosition: head, maxCount: 100, filter: { streamCategories: [categoryA] } });
        expect(byCategory.map((e) => e.type)).toEqual(['X', 'Y']);
        const byType = await store.readAll({ fromPosition: head, maxCount: 100, filter: { eventTypes: [rareType] } });
        expect(byType.map((e) => e.streamId)).toEqual([`${categoryB}-1`]);
      });
    });

    describe('catch-up subscription', () => {
      it('delivers stored events after the position, then live ones, filtered', async () => {
        const category = `sub${randomUUID().slice(0, 8)}`;
        const from = await store.headPosition();
        await store.append(`${category}-a`, [event('Before1'), event('Before2')], { expectedRevision: 'no_stream' });
        await store.append(stream('noise'), [event('Noise')], { expectedRevision: 'no_stream' });
        const subscription = store.subscribeToAll({ fromPosition: from, filter: { streamCategories: [category] } });
        const received = collect(subscription, (seen) => seen.length >= 4);
        await new Promise((r) => setTimeout(r, 300));
        await target.otherStore.append(`${category}-b`, [event('Live1')], { expectedRevision: 'no_stream' });
        await target.otherStore.append(`${category}-a`, [event('Live2')], { expectedRevision: 1n });
        const seen = await received;
        expect(seen.map((e) => e.type)).toEqual(['Before1', 'Before2', 'Live1', 'Live2']);
        expectStrictlyIncreasing(seen);
      });

      // A short run of the load shape: 16 writers on two store instances, their appends interleaved.
      // The full volume (appends for minutes, a catch-up over the whole log counted event for event)
      // is `npm run bench:event-store`'s.
      it('16 concurrent writers x 250 appends: the subscriber sees each event exactly once, in increasing positions', async () => {
        const category = `load${randomUUID().slice(0, 8)}`;
        const writers = 16;
        const perWriter = 250;
        const from = await store.headPosition();
        const subscription = store.subscribeToAll({ fromPosition: from, filter: { streamCategories: [category] } });
        const received = collect(subscription, (seen) => seen.length >= writers * perWriter, 240_000);
        const written: string[] = [];
        await Promise.all(
          Array.from({ length: writers }, async (_, writer) => {
            const writerStore = writer % 2 === 0 ? store : target.otherStore;
            for (let i = 0; i < perWriter; i++) {
              const e = event('Tick', { writer, i });
              written.push(e.id);
              await writerStore.append(`${category}-${writer}-${i}`, [e], { expectedRevision: 'no_stream' });
            }
          }),
        );
        const seen = await received;
        expect(seen).toHaveLength(writers * perWriter);
        expect(new Set(seen.map((e) => e.id)).size).toBe(writers * perWriter);
        expect(new Set(seen.map((e) => e.id))).toEqual(new Set(written));
        expectStrictlyIncreasing(seen);
      }, 300_000);

      it('a subscriber stopped mid-way and restarted from its last position loses and repeats nothing', async () => {
        const category = `resume${randomUUID().slice(0, 8)}`;
        const from = await store.headPosition();
        const total = 300;
        const writing = (async () => {
          for (let i = 0; i < total; i += 3) {
            await store.append(`${category}-${i}`, [event('E', { i }), event('E', { i: i + 1 }), event('E', { i: i + 2 })], { expectedRevision: 'no_stream' });
          }
        })();
        const first = await collect(store.subscribeToAll({ fromPosition: from, filter: { streamCategories: [category] } }), (seen) => seen.length >= 100);
        const checkpoint = first[first.length - 1].position;
        const second = await collect(
          target.otherStore.subscribeToAll({ fromPosition: checkpoint, filter: { streamCategories: [category] } }),
          (seen) => first.length + seen.length >= total,
        );
        await writing;
        const all = [...first, ...second];
        expect(all.map((e) => e.data.i)).toEqual(Array.from({ length: total }, (_, i) => i));
        expectStrictlyIncreasing(all);
      }, 120_000);
    });

    it('answers ping while reachable', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
