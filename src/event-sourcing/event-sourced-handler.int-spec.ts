import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock.js';
import { InvariantViolated, ValidationFailed } from '../common/errors.js';
import { toAppend, type CommandContext, type Event } from '../common/event.js';
import { RandomIdGenerator } from '../common/ids.js';
import { EventStoreUnavailableError, type EventStore, type EventToAppend, type JsonObject } from '../event-store/event-store.port.js';
import { streamEvents, testEventStoreKind, useTestEventStore } from '../../test/support/event-store.js';
import type { EventCodec, EventEnvelope } from './codec.js';
import type { Decider } from './decider.js';
import { EventSourcedHandler, NO_STREAM, type AppendHook, type AppendingEvent, type HandlerOptions, type Stream } from './event-sourced-handler.js';
import { NO_RETRY } from './retry.js';

/** A tally: Add writes one event, Remove writes nothing when the total is below the amount (a refusal that writes nothing). */
type Added = Event<'Added', { amount: number }>;
type Removed = Event<'Removed', { amount: number }>;
type TallyEvent = Added | Removed;
type TallyCommand = { readonly type: 'Add'; readonly amounts: readonly number[] } | { readonly type: 'Remove'; readonly amount: number };
interface Tally {
  readonly total: number;
  readonly revisions: readonly bigint[];
}

const tally: Decider<Tally, TallyCommand, TallyEvent> = {
  initialState: { total: 0, revisions: [] },
  decide(command, state) {
    if (command.type === 'Add') {
      if (command.amounts.some((amount) => amount <= 0)) throw new ValidationFailed([{ field: 'amounts', message: 'must be positive' }]);
      return command.amounts.map((amount) => ({ type: 'Added', data: { schemaVersion: 1, amount } }));
    }
    return state.total < command.amount ? [] : [{ type: 'Removed', data: { schemaVersion: 1, amount: command.amount } }];
  },
  evolve: (state, event, meta) => ({ total: state.total + (event.type === 'Added' ? event.data.amount : -event.data.amount), revisions: [...state.revisions, meta.revision] }),
};

const AT = new Date('2026-03-04T05:06:07.000Z');
class FixedClock extends Clock {
  now(): Date {
    return AT;
  }
}
const context: CommandContext = { correlationId: 'req-kernel', actor: { type: 'system', id: 'test' } };
const add = (...amounts: number[]): TallyCommand => ({ type: 'Add', amounts });
const newStream = (): Stream<Tally, TallyCommand, TallyEvent> => ({ id: `tally-${randomUUID()}`, decider: tally });
const added = (amount: number): Added => ({ type: 'Added', data: { schemaVersion: 1, amount } });

/** Appends an event to the stream as another writer would, outside the handler under test. */
async function rivalAppend(store: EventStore, streamId: string, amount: number): Promise<void> {
  await store.append(streamId, [toAppend(added(amount), randomUUID(), { ...context, correlationId: 'rival' }, AT)], { expectedRevision: 'any' });
}

/** An append hook that counts events as its link, records what it sees and marks each event with the revision it saw. */
function watchingHook() {
  const seen: Array<{ streamId: string; revisions: bigint[] }> = [];
  const hook: AppendHook<number> = {
    initial: 0,
    afterRecorded: (count) => count + 1,
    beforeAppend(count, events: readonly AppendingEvent[]) {
      seen.push({ streamId: events[0].streamId, revisions: events.map((event) => event.revision) });
      return { events: events.map(({ event, revision }) => ({ ...event, metadata: { ...event.metadata, hookedAt: Number(revision) } })), link: count + events.length };
    },
  };
  return { hook, seen };
}

/** The identity codec, except that another writer appends to the stream while each of the first `rivals` attempts is being encoded. */
function racedCodec(store: EventStore, rivals: number): EventCodec<TallyEvent> {
  let left = rivals;
  return {
    async encode(event, envelope) {
      if (left-- > 0) await rivalAppend(store, envelope.streamId, 1);
      return toAppend(event, envelope.id, envelope.context, envelope.occurredAt);
    },
    decode: (recorded) => ({ type: recorded.type, data: recorded.data }) as TallyEvent,
  };
}

describe(`The event-sourcing kernel on the ${testEventStoreKind()} event store`, () => {
  const fixture = useTestEventStore({ poolSize: 4 });
  const handlerOn = <Link = undefined>(options: Partial<HandlerOptions<TallyEvent, Link>> = {}) =>
    new EventSourcedHandler<Tally, TallyCommand, TallyEvent, Link>({
      store: fixture.store,
      clock: new FixedClock(),
      ids: new RandomIdGenerator(),
      retry: NO_RETRY,
      paging: { pageSize: 3, maxPages: 10 },
      ...options,
    });

  it('appends a new stream at no_stream, then after the revision it folded, and reads back the state it answered', async () => {
    const handler = handlerOn();
    const stream = newStream();
    const first = await handler.handle(stream, add(1, 2), context);
    expect(first).toMatchObject({ status: 'appended', events: [added(1), added(2)], folded: { state: { total: 3, revisions: [0n, 1n] }, revision: 1n } });
    const second = await handler.handle(stream, (state) => add(state.total), context);
    expect(second).toMatchObject({ status: 'appended', events: [added(3)], folded: { state: { total: 6, revisions: [0n, 1n, 2n] }, revision: 2n } });
    if (second.status !== 'appended') throw new Error('unreachable');
    expect(second.folded.position).toBe(second.position);

    const read = await handler.read(stream);
    expect(read).toEqual(second.folded);
    const stored = await streamEvents(fixture.store, stream.id);
    expect(stored.map((event) => [event.revision, event.data.amount, event.metadata.correlationId, event.metadata.occurredAt])).toEqual([
      [0n, 1, 'req-kernel', AT.toISOString()],
      [1n, 2, 'req-kernel', AT.toISOString()],
      [2n, 3, 'req-kernel', AT.toISOString()],
    ]);
  });

  it('writes nothing and reads nothing more for a command already done on a fold it just read', async () => {
    const handler = handlerOn();
    const stream = newStream();
    await handler.handle(stream, add(1), context);
    const foldedBefore = handler.counters.eventsFolded;
    const done = await handler.handle(stream, { type: 'Remove', amount: 5 }, context);
    expect(done).toMatchObject({ status: 'unchanged', folded: { state: { total: 1 }, revision: 0n } });
    expect(handler.counters.eventsFolded - foldedBefore).toBe(1);
    expect(handler.counters.appends).toBe(1);
  });

  it('does not retry a refused command and writes nothing of it', async () => {
    const handler = handlerOn({ retry: { maxAttempts: 5, backoffMs: () => 0 } });
    const stream = newStream();
    await expect(handler.handle(stream, add(1, -1), context)).rejects.toBeInstanceOf(ValidationFailed);
    expect(handler.counters.decisions).toBe(1);
    expect(await streamEvents(fixture.store, stream.id)).toEqual([]);
  });

  it('folds a stream in pages, and fails loudly on one longer than its pages allow', async () => {
    const stream = newStream();
    await handlerOn().handle(stream, add(1, 1, 1, 1, 1, 1, 1), context);
    expect((await handlerOn({ paging: { pageSize: 3, maxPages: 3 } }).read(stream)).state.total).toBe(7);
    // 7 events need a third page; 6 would too (a full page asks for the next).
    await expect(handlerOn({ paging: { pageSize: 3, maxPages: 2 } }).read(stream)).rejects.toBeInstanceOf(InvariantViolated);
  });

  describe('when another writer moves the stream between the fold and the append', () => {
    it('refolds the tail and decides again on it, pausing as the policy says, until an attempt wins', async () => {
      const stream = newStream();
      const watch = watchingHook();
      const pauses: number[] = [];
      const handler = handlerOn<number>({ codec: racedCodec(fixture.store, 2), hook: watch.hook, retry: { maxAttempts: 3, backoffMs: (refusals) => (pauses.push(refusals), 1) } });

      const handled = await handler.handle(stream, (state) => add(state.total + 10), context);
      // Decided on the empty stream, then on 1, then on 2: each decision saw the stream as the last refusal left it.
      expect(handled).toMatchObject({ status: 'appended', events: [added(12)], folded: { state: { total: 14, revisions: [0n, 1n, 2n] }, revision: 2n, link: 3 } });
      expect(watch.seen).toEqual([
        { streamId: stream.id, revisions: [0n] },
        { streamId: stream.id, revisions: [1n] },
        { streamId: stream.id, revisions: [2n] },
      ]);
      expect(pauses).toEqual([1, 2]);
      expect(handler.counters).toMatchObject({ decisions: 3, conflicts: 2, appends: 1 });
      expect((await streamEvents(fixture.store, stream.id)).map((event) => [event.data.amount, event.metadata.correlationId, event.metadata.hookedAt])).toEqual([
        [1, 'rival', undefined],
        [1, 'rival', undefined],
        [12, 'req-kernel', 2],
      ]);
      expect(await handlerOn<number>({ hook: watch.hook }).read(stream)).toEqual(handled.folded);
    });

    it('gives up after maxAttempts appends with the stream as re-read, having written nothing', async () => {
      const stream = newStream();
      const pauses: number[] = [];
      const handler = handlerOn({ codec: racedCodec(fixture.store, 10), retry: { maxAttempts: 4, backoffMs: (refusals) => (pauses.push(refusals), 0) } });
      const handled = await handler.handle(stream, add(50), context);
      expect(handled).toMatchObject({ status: 'conflict', folded: { state: { total: 4 }, revision: 3n } });
      expect(pauses).toEqual([1, 2, 3]);
      expect(handler.counters).toMatchObject({ decisions: 4, conflicts: 4, appends: 0 });
      expect((await streamEvents(fixture.store, stream.id)).map((event) => event.metadata.correlationId)).toEqual(['rival', 'rival', 'rival', 'rival']);
    });

    it('with no retry, answers at once with the winner read onto the fold the caller held', async () => {
      const stream = newStream();
      const handler = handlerOn();
      const held = await handler.handle(stream, add(1), context);
      await rivalAppend(fixture.store, stream.id, 10);
      const handled = await handler.handle(stream, add(5), context, { from: { folded: held.folded, current: false } });
      expect(handled).toMatchObject({ status: 'conflict', folded: { state: { total: 11, revisions: [0n, 1n] }, revision: 1n } });
      expect(handler.counters.conflicts).toBe(1);
      expect((await streamEvents(fixture.store, stream.id)).map((event) => event.data.amount)).toEqual([1, 10]);
    });
  });

  describe('a held fold ahead of its stream (a log that lost events)', () => {
    const ahead = { state: { total: 100, revisions: [0n, 1n, 2n, 3n, 4n] }, revision: 4n, position: null, link: undefined };

    it('is folded afresh when an append from it is refused with the stream behind it, not caught up', async () => {
      const stream = newStream();
      await handlerOn().handle(stream, add(1, 2), context);
      const handler = handlerOn();
      const handled = await handler.handle(stream, add(5), context, { from: { folded: ahead, current: false } });
      expect(handled).toMatchObject({ status: 'conflict', folded: { state: { total: 3 }, revision: 1n } });
      expect(handler.counters.staleFolds).toBe(1);

      const retrying = handlerOn({ retry: { maxAttempts: 2, backoffMs: () => 0 } });
      const again = await retrying.handle(stream, add(5), context, { from: { folded: ahead, current: false } });
      expect(again).toMatchObject({ status: 'appended', folded: { state: { total: 8, revisions: [0n, 1n, 2n] }, revision: 2n } });
    });

    it("is folded afresh, with the caller's reload, when confirmed against the stream before an append (where a short stream lost events)", async () => {
      const stream = newStream();
      await handlerOn().handle(stream, add(1, 2), context);
      const handler = handlerOn({ confirmHeldStarts: true });
      let reloads = 0;
      const reload = () => ((reloads += 1), handler.read(stream));
      if (fixture.store.shortStreams === 'not_yet_readable') {
        // EventStoreDB: acknowledged events are not lost, only not readable yet. The fold is not
        // replaced by older data: after its re-reads the command is refused as unavailable, unwritten.
        await expect(handler.handle(stream, add(5), context, { from: { folded: ahead, current: false }, reload })).rejects.toBeInstanceOf(EventStoreUnavailableError);
        expect({ reloads, stale: handler.counters.staleFolds ?? 0 }).toEqual({ reloads: 0, stale: 0 });
        expect((await streamEvents(fixture.store, stream.id)).map((event) => event.data.amount)).toEqual([1, 2]);
        return;
      }
      const handled = await handler.handle(stream, add(5), context, { from: { folded: ahead, current: false }, reload });
      expect(handled).toMatchObject({ status: 'appended', folded: { state: { total: 8 }, revision: 2n } });
      expect({ reloads, stale: handler.counters.staleFolds, conflicts: handler.counters.conflicts }).toEqual({ reloads: 1, stale: 1, conflicts: 0 });
    });
  });

  describe('a held start confirmed before an append (confirmHeldStarts)', () => {
    /** A hook whose link is the id of the newest event, stored as the event's own id: the kernel's check of a held fold compares the two. */
    const idLink: AppendHook<string> = {
      initial: '',
      afterRecorded: (_link, recorded) => recorded.id,
      beforeAppend: (link, events) => ({ events: events.map(({ event }) => event), link: events.at(-1)?.event.id ?? link }),
      storedLink: (recorded) => recorded.id,
    };
    /** The fixture's store, counting reads of streams. */
    function countingReads() {
      const store = fixture.store;
      const counted = { reads: 0 };
      const counting: EventStore = {
        kind: store.kind,
        multiStreamAppends: store.multiStreamAppends,
        expectedEventIds: store.expectedEventIds,
        shortStreams: store.shortStreams,
        append: (...args) => store.append(...args),
        appendMany: (...args) => store.appendMany(...args),
        readStream: (...args) => ((counted.reads += 1), store.readStream(...args)),
        readAll: (...args) => store.readAll(...args),
        subscribeToAll: (...args) => store.subscribeToAll(...args),
        headPosition: () => store.headPosition(),
        ping: () => store.ping(),
        close: async () => undefined,
      };
      return { store: counting, counted };
    }

    it('is confirmed by the append itself where the store checks expected event ids, by a read first elsewhere', async () => {
      const stream = newStream();
      const held = await handlerOn<string>({ hook: idLink }).handle(stream, add(1, 2), context);
      if (held.status !== 'appended') throw new Error('unreachable');
      expect(held.folded.eventId).toBe((await streamEvents(fixture.store, stream.id)).at(-1)?.id);
      const { store, counted } = countingReads();
      const handler = handlerOn<string>({ hook: idLink, store, confirmHeldStarts: true });
      const handled = await handler.handle(stream, add(5), context, { from: { folded: held.folded, current: false } });
      expect(handled).toMatchObject({ status: 'appended', folded: { state: { total: 8 }, revision: 2n } });
      expect({ reads: counted.reads, conflicts: handler.counters.conflicts }).toEqual({ reads: fixture.store.expectedEventIds === 'checked' ? 0 : 1, conflicts: 0 });
    });

    it("is folded afresh, with the caller's reload, when the stream holds another event at its revision, and nothing is written from it", async () => {
      const stream = newStream();
      await handlerOn<string>({ hook: idLink }).handle(stream, add(1, 2), context);
      // A fold of a history the log no longer has: the stream was brought back to the same revision by other events.
      const lostId = randomUUID();
      const lost = { state: { total: 100, revisions: [0n, 1n] }, revision: 1n, position: null, eventId: lostId, link: lostId };
      const handler = handlerOn<string>({ hook: idLink, confirmHeldStarts: true, retry: { maxAttempts: 2, backoffMs: () => 0 } });
      let reloads = 0;
      const reload = () => ((reloads += 1), handler.read(stream));
      const handled = await handler.handle(stream, { type: 'Remove', amount: 50 }, context, { from: { folded: lost, current: false }, reload });
      // On the lost fold (100) the removal would be written; on the stream (3) it writes nothing.
      expect(handled).toMatchObject({ status: 'unchanged', folded: { state: { total: 3 }, revision: 1n } });
      expect({ reloads, stale: handler.counters.staleFolds }).toEqual({ reloads: 1, stale: 1 });
      expect((await streamEvents(fixture.store, stream.id)).map((event) => event.data.amount)).toEqual([1, 2]);
    });
  });

  describe('a start the caller holds', () => {
    it('is confirmed against the stream before a decision that writes nothing is answered, and decided again when it moved', async () => {
      const stream = newStream();
      const handler = handlerOn();
      const held = await handler.handle(stream, add(1), context);
      await rivalAppend(fixture.store, stream.id, 5);
      // On the held fold (1) the removal writes nothing; the stream (6) allows it.
      const handled = await handler.handle(stream, { type: 'Remove', amount: 3 }, context, { from: { folded: held.folded, current: false } });
      expect(handled).toMatchObject({ status: 'appended', events: [{ type: 'Removed', data: { amount: 3 } }], folded: { state: { total: 3 }, revision: 2n } });
      expect(handler.counters.conflicts).toBe(0);
    });

    it('is trusted when current, and only the appends it makes are checked by the store', async () => {
      const stream = newStream();
      const handler = handlerOn();
      const held = await handler.handle(stream, add(1), context);
      const foldedBefore = handler.counters.eventsFolded;
      const handled = await handler.handle(stream, { type: 'Remove', amount: 3 }, context, { from: { folded: held.folded, current: true } });
      expect(handled.status).toBe('unchanged');
      expect(handler.counters.eventsFolded).toBe(foldedBefore);
      const appended = await handler.handle(stream, add(2), context, { from: { folded: held.folded, current: true } });
      expect(appended).toMatchObject({ status: 'appended', folded: { state: { total: 3, revisions: [0n, 1n] }, revision: 1n } });
    });
  });

  it('lets the append hook see each event with its stream id and revision, and stores what it returns', async () => {
    const stream = newStream();
    const watch = watchingHook();
    const handler = handlerOn<number>({ hook: watch.hook });
    await handler.handle(stream, add(1, 1), context);
    await handler.handle(stream, add(1, 1, 1), context);
    expect(watch.seen).toEqual([
      { streamId: stream.id, revisions: [0n, 1n] },
      { streamId: stream.id, revisions: [2n, 3n, 4n] },
    ]);
    expect((await streamEvents(fixture.store, stream.id)).map((event) => [event.revision, event.metadata.hookedAt])).toEqual([0, 1, 2, 3, 4].map((n) => [BigInt(n), n]));
    // The link carried through appends is the one a fold from the start computes.
    const appended = await handler.handle(stream, add(1), context);
    expect(appended.folded.link).toBe(6);
    expect((await handler.read(stream)).link).toBe(6);
  });

  it('encodes through the codec (asynchronously) with the envelope of each event, and decodes what it stored', async () => {
    const envelopes: EventEnvelope[] = [];
    /** Seals the body as a base64 string, as a codec that encrypts personal fields would make it unreadable without the codec. */
    const sealing: EventCodec<TallyEvent> = {
      async encode(event, envelope) {
        envelopes.push(envelope);
        await new Promise((resolveLater) => setImmediate(resolveLater));
        const plain = toAppend(event, envelope.id, envelope.context, envelope.occurredAt);
        return { ...plain, data: { sealed: Buffer.from(JSON.stringify(event.data)).toString('base64') } } satisfies EventToAppend;
      },
      async decode(recorded) {
        const data = JSON.parse(Buffer.from(recorded.data.sealed as string, 'base64').toString('utf8')) as JsonObject;
        return { type: recorded.type, data } as TallyEvent;
      },
    };
    const stream = newStream();
    const handler = handlerOn({ codec: sealing });
    await handler.handle(stream, add(4, 5), context);
    expect(envelopes.map(({ streamId, revision, context: { correlationId }, occurredAt }) => ({ streamId, revision, correlationId, occurredAt }))).toEqual([
      { streamId: stream.id, revision: 0n, correlationId: 'req-kernel', occurredAt: AT },
      { streamId: stream.id, revision: 1n, correlationId: 'req-kernel', occurredAt: AT },
    ]);
    const stored = await streamEvents(fixture.store, stream.id);
    expect(stored.map((event) => event.id)).toEqual(envelopes.map((envelope) => envelope.id));
    expect(stored.every((event) => event.data.amount === undefined && typeof event.data.sealed === 'string')).toBe(true);
    expect((await handler.read(stream)).state).toEqual({ total: 9, revisions: [0n, 1n] });
  });

  it('fails loudly when an append ends at a revision other than the one it expected', async () => {
    const original = fixture.store;
    const misreporting: EventStore = Object.create(original, {
      append: { value: async (...args: Parameters<EventStore['append']>) => ({ ...(await original.append(...args)), nextExpectedRevision: 7n }) },
    });
    await expect(handlerOn({ store: misreporting }).handle(newStream(), add(1), context)).rejects.toBeInstanceOf(InvariantViolated);
  });

  it('answers the empty stream with the initial state', async () => {
    expect(await handlerOn().read(newStream())).toEqual({ state: tally.initialState, revision: NO_STREAM, position: null, link: undefined });
  });
});
