import { describe, expect, it } from '@jest/globals';
import { InvariantViolated } from '../common/errors.js';
import type { Event } from '../common/event.js';
import type { RecordedEvent } from '../event-store/event-store.port.js';
import { identityCodec } from './codec.js';
import type { Decider } from './decider.js';
import { foldRecorded, NO_STREAM, type AppendHook, type Folded, type Stream } from './event-sourced-handler.js';
import { assertRetryPolicy, boundedBackoffMs, exponentialJitter, linearJitter, MAX_ATTEMPTS, MAX_BACKOFF_MS, NO_RETRY } from './retry.js';

type Added = Event<'Added', { amount: number }>;
interface Tally {
  readonly total: number;
  readonly seen: readonly { revision: bigint; occurredAt: string }[];
}
const decider: Decider<Tally, number, Added> = {
  initialState: { total: 0, seen: [] },
  decide: (amount) => [{ type: 'Added', data: { schemaVersion: 1, amount } }],
  evolve: (state, event, meta) => ({ total: state.total + event.data.amount, seen: [...state.seen, { revision: meta.revision, occurredAt: meta.occurredAt.toISOString() }] }),
};
const stream: Stream<Tally, number, Added> = { id: 'tally-1', decider };
const counting: AppendHook<number> = {
  initial: 0,
  afterRecorded: (count) => count + 1,
  beforeAppend: (count, events) => ({ events: events.map(({ event }) => event), link: count + events.length }),
};
const start: Folded<Tally, number> = { state: decider.initialState, revision: NO_STREAM, position: null, link: 0 };

function recorded(revision: bigint, amount: number, streamId = stream.id): RecordedEvent {
  return {
    id: `00000000-0000-4000-8000-00000000000${revision}`,
    streamId,
    type: 'Added',
    revision,
    position: 100n + revision,
    data: { schemaVersion: 1, amount },
    metadata: { occurredAt: `2026-01-0${revision + 1n}T00:00:00.000Z` },
    createdAt: new Date('2030-01-01T00:00:00.000Z'),
  };
}

const foldAll = (events: readonly RecordedEvent[], from = start) =>
  events.reduce((folded, event) => foldRecorded(stream, counting, folded, event, identityCodec<Added>().decode(event) as Added), from);

describe('Folding recorded events', () => {
  it('hands evolve each event with its revision and the time from its metadata, and follows the position, the event id and the hook', () => {
    const folded = foldAll([recorded(0n, 2), recorded(1n, 3)]);
    expect(folded).toEqual({
      state: {
        total: 5,
        seen: [
          { revision: 0n, occurredAt: '2026-01-01T00:00:00.000Z' },
          { revision: 1n, occurredAt: '2026-01-02T00:00:00.000Z' },
        ],
      },
      revision: 1n,
      position: 101n,
      eventId: '00000000-0000-4000-8000-000000000001',
      link: 2,
    });
  });

  it('falls back to the commit time for an event written without one', () => {
    const { metadata: _stamped, ...event } = recorded(0n, 1);
    expect(foldAll([{ ...event, metadata: {} }]).state.seen[0].occurredAt).toBe('2030-01-01T00:00:00.000Z');
  });

  it('fails loudly on a revision gap, a repeated revision, or a stream that does not start at 0', () => {
    expect(() => foldAll([recorded(0n, 1), recorded(2n, 1)])).toThrow(InvariantViolated);
    expect(() => foldAll([recorded(0n, 1), recorded(0n, 1)])).toThrow(InvariantViolated);
    expect(() => foldAll([recorded(1n, 1)])).toThrow(InvariantViolated);
  });

  it('fails loudly on an event of another stream', () => expect(() => foldAll([recorded(0n, 1, 'tally-2')])).toThrow(InvariantViolated));
});

describe('The identity codec', () => {
  it('stores the body as decided with the command context as metadata, and reads back the same domain event', async () => {
    const codec = identityCodec<Added>();
    const event: Added = { type: 'Added', data: { schemaVersion: 1, amount: 7 } };
    const context = { correlationId: 'req-1', actor: { type: 'operator' as const, id: 'ops' } };
    const occurredAt = new Date('2026-05-01T12:00:00.000Z');
    const stored = await codec.encode(event, { id: '11111111-1111-4111-8111-111111111111', streamId: stream.id, revision: 0n, context, occurredAt });
    expect(stored).toEqual({
      id: '11111111-1111-4111-8111-111111111111',
      type: 'Added',
      data: { schemaVersion: 1, amount: 7 },
      metadata: { correlationId: 'req-1', causationId: null, actor: context.actor, occurredAt: occurredAt.toISOString() },
    });
    expect(await codec.decode({ ...recorded(0n, 0), type: stored.type, data: stored.data, metadata: stored.metadata ?? {} })).toEqual(event);
  });
});

describe('Retry policies', () => {
  it('refuse a number of attempts outside 1 to MAX_ATTEMPTS', () => {
    for (const maxAttempts of [0, -1, 1.5, MAX_ATTEMPTS + 1, Number.NaN]) expect(() => assertRetryPolicy({ maxAttempts, backoffMs: () => 0 })).toThrow(RangeError);
    for (const policy of [NO_RETRY, linearJitter(10, 5), exponentialJitter(MAX_ATTEMPTS, 2, 50)]) expect(() => assertRetryPolicy(policy)).not.toThrow();
  });

  it('pause within their bounds: linear up to step × refusals, exponential up to base × 2^(refusals-1) capped', () => {
    const linear = linearJitter(10, 5);
    const exponential = exponentialJitter(20, 2, 50);
    for (let refusals = 1; refusals <= 20; refusals++) {
      for (let sample = 0; sample < 10; sample++) {
        const linearMs = linear.backoffMs(refusals);
        expect(linearMs).toBeGreaterThanOrEqual(0);
        expect(linearMs).toBeLessThanOrEqual(5 * refusals);
        const exponentialMs = exponential.backoffMs(refusals);
        expect(exponentialMs).toBeGreaterThanOrEqual(0);
        expect(exponentialMs).toBeLessThanOrEqual(Math.min(50, 2 * 2 ** (refusals - 1)));
      }
    }
  });

  it('never pause outside 0 to MAX_BACKOFF_MS, whatever a policy computes', () => {
    expect(boundedBackoffMs({ maxAttempts: 2, backoffMs: () => -5 }, 1)).toBe(0);
    expect(boundedBackoffMs({ maxAttempts: 2, backoffMs: () => 1e9 }, 1)).toBe(MAX_BACKOFF_MS);
    expect(boundedBackoffMs({ maxAttempts: 2, backoffMs: () => Number.NaN }, 1)).toBe(MAX_BACKOFF_MS);
    expect(boundedBackoffMs(NO_RETRY, 1)).toBe(0);
  });
});
