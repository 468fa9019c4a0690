import type { Clock } from '../common/clock.js';
import { InvariantViolated } from '../common/errors.js';
import { occurredAt, type CommandContext } from '../common/event.js';
import type { IdGenerator } from '../common/ids.js';
import {
  EventStoreUnavailableError,
  MAX_READ_COUNT,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type RecordedEvent,
  type StreamAppend,
} from '../event-store/event-store.port.js';
import { identityCodec, type EventCodec } from './codec.js';
import type { Decider, DomainEvent, EventMeta } from './decider.js';
import { assertRetryPolicy, boundedBackoffMs, type RetryPolicy } from './retry.js';

/** One stream and the rules it is folded and decided by (built per stream when the initial state depends on it). */
export interface Stream<State, Command, E extends DomainEvent> {
  readonly id: string;
  readonly decider: Decider<State, Command, E>;
}

/** The revision of a stream that does not exist yet. */
export const NO_STREAM = -1n;

/**
 * A stream folded up to `revision` (NO_STREAM: nothing yet). `position` is the global position of
 * the newest event folded, null when unknown (nothing folded, or a start handed in by the caller);
 * `eventId` that event's id, when known; `link` is what the append hook carries from event to event.
 */
export interface Folded<State, Link = undefined> {
  readonly state: State;
  readonly revision: bigint;
  readonly position: bigint | null;
  readonly eventId?: string;
  readonly link: Link;
}

/** An event about to be appended, in its stored form, with where it will land. */
export interface AppendingEvent {
  readonly streamId: string;
  readonly revision: bigint;
  readonly event: EventToAppend;
}

/**
 * Follows the stored form of a stream's events (not the decoded domain events): while folding, the
 * link after each recorded event; before an append, the events as they will be stored (they may be
 * rewritten, e.g. to carry a hash of their predecessor) and the link after them. A refused append
 * is decided and hooked again on the refolded stream.
 */
export interface AppendHook<Link> {
  readonly initial: Link;
  afterRecorded(link: Link, recorded: RecordedEvent): Link;
  beforeAppend(link: Link, events: readonly AppendingEvent[]): { readonly events: readonly EventToAppend[]; readonly link: Link };
  /**
   * The link a recorded event carries as stored, when it carries one (the wallet's chain hash). The
   * kernel compares it with a held fold's link to tell whether the stream still holds the events
   * the fold was made of (for an event that carries none, their positions). Without it the kernel
   * checks only that the stream still has the fold's revision.
   */
  storedLink?(recorded: RecordedEvent): Link | undefined;
}

const NO_HOOK: AppendHook<undefined> = {
  initial: undefined,
  afterRecorded: () => undefined,
  beforeAppend: (_link, events) => ({ events: events.map(({ event }) => event), link: undefined }),
};

/** Reads of one fold: `pageSize` events per read, at most `maxPages` reads (a longer stream is a bug). */
export interface Paging {
  readonly pageSize: number;
  readonly maxPages: number;
}

/** Counters since start, for metrics and tests. */
export interface HandlerCounters {
  decisions: number;
  appends: number;
  conflicts: number;
  eventsFolded: number;
  /** Held folds found ahead of, or different from, the stream (a log that lost events) and folded again. */
  staleFolds?: number;
}

export interface HandlerOptions<E extends DomainEvent, Link> {
  readonly store: EventStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly retry: RetryPolicy;
  readonly paging: Paging;
  /** Defaults to the identity codec. */
  readonly codec?: EventCodec<E>;
  /** Without a hook, `Link` is undefined. */
  readonly hook?: AppendHook<Link>;
  readonly counters?: HandlerCounters;
  /**
   * Confirm a held start (not current) against the stream before appending from it, not only
   * before answering a decision that writes nothing: the stream's event at the fold's revision must
   * be the one the fold ends with. For streams whose decisions must never rest on events the log no
   * longer has (the wallets): an expected-revision append alone succeeds on a stream that lost
   * events and was brought back to the same revision by other writers. Where the store checks
   * expected event ids and the fold knows its last event's, the append itself carries the
   * condition (a refusal there is a stale fold, folded afresh); elsewhere one read of the stream
   * from the fold's revision comes first. Off for the others, whose starts are the caller's own
   * writes.
   */
  readonly confirmHeldStarts?: boolean;
}

/** An event a decision wants appended, with the context of the command that caused it. */
export interface DecidedEvent<E> {
  readonly event: E;
  readonly context: CommandContext;
}

/**
 * What a decision function returns: the events to append (possibly none), the state after them, and an answer of its own.
 * `alongside`: appends to other streams (already in their stored form) that must be written in the
 * same transaction as this stream's events, all or nothing (the check's request beside the wallet's
 * reservation). Made after each decision, so a refused append decided again makes them again. Only
 * on a store whose multi-stream appends are atomic.
 */
export interface Decision<State, E, Result> {
  readonly events: readonly DecidedEvent<E>[];
  readonly state: State;
  readonly result: Result;
  readonly alongside?: () => Promise<readonly StreamAppend[]>;
}

/**
 * An append made alongside a stream's own was refused for its expected revision: nothing of the
 * write-set was written. Not retried by the kernel (the stream's own decision was not at fault):
 * the caller decides what the other stream's refusal means.
 */
export class AlongsideRefused extends Error {
  readonly code = 'alongside_refused';
  constructor(readonly refusal: WrongExpectedRevisionError) {
    super(`an append alongside was refused: ${refusal.message}`);
  }

  get streamId(): string {
    return this.refusal.streamId;
  }
}

/**
 * Where a command starts: a fold the caller already holds (a cache, a snapshot caught up, the
 * state it just wrote). `current`: read from the stream just now. A start that is not current is
 * confirmed against the stream before a decision that writes nothing is answered; a decision that
 * writes is guarded by the expected revision anyway.
 */
export interface Start<State, Link> {
  readonly folded: Folded<State, Link>;
  readonly current: boolean;
}

/** How a caller folds its stream afresh when a held fold turned out stale (the wallet: from its snapshot). */
export type Reload<State, Link> = () => Promise<Folded<State, Link>>;

/** `alongside`: the results of the decision's appends to other streams, in their order (empty when it had none). */
export type Handled<State, E, Link, Result> =
  | {
      readonly status: 'appended';
      readonly folded: Folded<State, Link>;
      readonly events: readonly E[];
      readonly position: bigint;
      readonly result: Result;
      readonly alongside: readonly AppendResult[];
    }
  | { readonly status: 'unchanged'; readonly folded: Folded<State, Link>; readonly result: Result; readonly alongside: readonly AppendResult[] }
  /** Every attempt lost to another writer: `folded` is the stream as re-read after the last. */
  | { readonly status: 'conflict'; readonly folded: Folded<State, Link> };

/** `evolve`'s meta of a stored event; the time is parsed only for the deciders that read it. */
class RecordedMeta implements EventMeta {
  constructor(private readonly recorded: RecordedEvent) {}
  get revision(): bigint {
    return this.recorded.revision;
  }
  get occurredAt(): Date {
    return occurredAt(this.recorded);
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function expectedRevision(folded: Folded<unknown, unknown>): ExpectedRevision {
  return folded.revision === NO_STREAM ? 'no_stream' : folded.revision;
}

/** What a read of a held fold's stream found at the fold's revision, when not the fold's last event. */
const SHORT = Symbol('the stream does not reach the fold');
const DIFFERENT = Symbol("the stream holds another event at the fold's revision");

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms)) : Promise.resolve());

/**
 * Folds one recorded event onto `folded`, asserting it is the next event of this stream. Pure: the
 * fold of every stream runs through here.
 */
export function foldRecorded<State, Command, E extends DomainEvent, Link>(
  stream: Stream<State, Command, E>,
  hook: AppendHook<Link>,
  folded: Folded<State, Link>,
  recorded: RecordedEvent,
  event: E,
): Folded<State, Link> {
  if (recorded.streamId !== stream.id) throw new InvariantViolated(`an event of ${recorded.streamId} was read from ${stream.id}`);
  if (recorded.revision !== folded.revision + 1n) {
    throw new InvariantViolated(`${stream.id} skipped from revision ${folded.revision} to ${recorded.revision}`);
  }
  return {
    state: stream.decider.evolve(folded.state, event, new RecordedMeta(recorded)),
    revision: recorded.revision,
    position: recorded.position,
    eventId: recorded.id,
    link: hook.afterRecorded(folded.link, recorded),
  };
}

/**
 * The one command-handling loop of every event-sourced stream: fold the stream (from its start or
 * from a fold the caller holds), decide, encode, append with the expected revision, and when
 * another writer moved the stream first, refold its tail and decide again as the retry policy
 * allows.
 */
export class EventSourcedHandler<State, Command, E extends DomainEvent, Link = undefined> {
  private readonly store: EventStore;
  private readonly codec: EventCodec<E>;
  private readonly hook: AppendHook<Link>;
  readonly counters: HandlerCounters;

  constructor(private readonly options: HandlerOptions<E, Link>) {
    assertRetryPolicy(options.retry);
    const { pageSize, maxPages } = options.paging;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_READ_COUNT) throw new RangeError(`pageSize must be an integer from 1 to ${MAX_READ_COUNT}`);
    if (!Number.isSafeInteger(maxPages) || maxPages < 1) throw new RangeError('maxPages must be a positive integer');
    this.store = options.store;
    this.codec = options.codec ?? identityCodec<E>();
    // Link is undefined exactly when no hook is given (HandlerOptions says so; the type system cannot).
    this.hook = options.hook ?? (NO_HOOK as unknown as AppendHook<Link>);
    this.counters = options.counters ?? { decisions: 0, appends: 0, conflicts: 0, eventsFolded: 0 };
  }

  /** The fold of a stream with no events. */
  initial(stream: Stream<State, Command, E>): Folded<State, Link> {
    return { state: stream.decider.initialState, revision: NO_STREAM, position: null, link: this.hook.initial };
  }

  /**
   * `from` (the empty stream by default) caught up with every event after it, in pages. A held
   * fold (revision 0 or more) is read from its own revision: when the stream no longer has that
   * event, or has another one there (a log that lost events, then other writers brought the stream
   * back to the same revision), the fold is stale and the stream is folded afresh (`reload`, by
   * default from its start). Where reads may trail acknowledged appends (EventStore.shortStreams),
   * a stream that does not reach the fold's revision yet is read again (about 1.3 s) and, still
   * short, refused as unavailable: its events were acknowledged, they are not lost, and a fold
   * without them would decide on older data (a funding not seen, a reservation not captured).
   */
  async read(stream: Stream<State, Command, E>, from: Folded<State, Link> = this.initial(stream), reload?: Reload<State, Link>): Promise<Folded<State, Link>> {
    let caughtUp = await this.catchUp(stream, from);
    if (caughtUp === SHORT && this.store.shortStreams === 'not_yet_readable') {
      for (let pauseMs = 5; caughtUp === SHORT && pauseMs <= 640; pauseMs *= 2) {
        await sleep(pauseMs);
        caughtUp = await this.catchUp(stream, from);
      }
      if (caughtUp === SHORT) throw new EventStoreUnavailableError(`${stream.id} is not readable up to revision ${from.revision} yet, which was acknowledged`);
    }
    if (caughtUp !== SHORT && caughtUp !== DIFFERENT) return caughtUp;
    this.counters.staleFolds = (this.counters.staleFolds ?? 0) + 1;
    // From the empty stream there is nothing to confirm: this read cannot find it stale again.
    return reload !== undefined ? reload() : this.read(stream);
  }

  /** Reads `stream` again (pauses doubling from 5 ms, about 1.3 s in all) until its fold reaches `revision`; the last fold read, whatever it reached. */
  private async reach(stream: Stream<State, Command, E>, from: Folded<State, Link>, revision: bigint, reload?: Reload<State, Link>): Promise<Folded<State, Link>> {
    let folded = from;
    for (let pauseMs = 5; folded.revision < revision && pauseMs <= 640; pauseMs *= 2) {
      await sleep(pauseMs);
      folded = await this.read(stream, folded, reload);
    }
    return folded;
  }

  /**
   * `from` caught up, the very object when nothing was added; SHORT when the stream does not reach
   * `from`'s last event, DIFFERENT when it holds another event there.
   */
  private async catchUp(stream: Stream<State, Command, E>, from: Folded<State, Link>): Promise<Folded<State, Link> | typeof SHORT | typeof DIFFERENT> {
    const { pageSize, maxPages } = this.options.paging;
    let folded = from;
    // A held fold's own last event comes first in the first page, to be matched.
    let confirming = from.revision !== NO_STREAM;
    for (let page = 0; page < maxPages; page++) {
      const recorded = await this.store.readStream(stream.id, { direction: 'forwards', fromRevision: confirming ? folded.revision : folded.revision + 1n, maxCount: pageSize });
      let fresh = recorded;
      if (confirming) {
        confirming = false;
        if (recorded.length === 0) return SHORT;
        if (!this.holds(folded, recorded[0])) return DIFFERENT;
        fresh = recorded.slice(1);
      }
      for (const event of fresh) {
        const decoded = this.codec.decode(event);
        folded = foldRecorded(stream, this.hook, folded, event, isPromise(decoded) ? await decoded : decoded);
      }
      this.counters.eventsFolded += fresh.length;
      if (recorded.length < pageSize) return folded;
    }
    throw new InvariantViolated(`${stream.id} has more than ${maxPages * pageSize} events after revision ${from.revision}`);
  }

  /**
   * Whether `recorded`, read at the fold's revision, is the event the fold ends with: the same
   * stored link when the hook keeps one (the chain hash covers that event and all before it), else
   * the same position when the fold knows it. Without such a hook, that the revision exists.
   */
  private holds(folded: Folded<State, Link>, recorded: RecordedEvent): boolean {
    if (recorded.revision !== folded.revision) return false;
    if (this.hook.storedLink === undefined) return true;
    const stored = this.hook.storedLink(recorded);
    if (stored !== undefined) return stored === folded.link;
    return folded.position === null || recorded.position === folded.position;
  }

  /** Runs one command (or one built from the current state) through the stream's decider. */
  handle(
    stream: Stream<State, Command, E>,
    command: Command | ((state: State) => Command),
    context: CommandContext,
    options: { readonly from?: Start<State, Link>; readonly reload?: Reload<State, Link> } = {},
  ): Promise<Handled<State, E, Link, void>> {
    const { decider } = stream;
    return this.run(
      stream,
      (folded, now) => {
        const concrete = typeof command === 'function' ? (command as (state: State) => Command)(folded.state) : command;
        const events = decider.decide(concrete, folded.state);
        let state = folded.state;
        events.forEach((event, index) => {
          state = decider.evolve(state, event, { revision: folded.revision + 1n + BigInt(index), occurredAt: now });
        });
        return { events: events.map((event) => ({ event, context })), state, result: undefined };
      },
      options,
    );
  }

  /**
   * The loop itself, for callers that decide more than one command at a time (the wallet's
   * batches): `decide` gets the fold and the time, and is called again on the refolded stream
   * after each refused append. Errors it throws end the command unretried.
   */
  async run<Result>(
    stream: Stream<State, Command, E>,
    decide: (folded: Folded<State, Link>, now: Date) => Decision<State, E, Result>,
    options: { readonly from?: Start<State, Link>; readonly reload?: Reload<State, Link> } = {},
  ): Promise<Handled<State, E, Link, Result>> {
    const { reload } = options;
    let folded = options.from?.folded ?? (await this.read(stream));
    let current = options.from?.current ?? true;
    // Bounded: `refusals` by the retry policy, the confirmation of a stale start to once.
    for (let refusals = 0; ;) {
      if (!current && this.options.confirmHeldStarts && !this.appendConfirms(folded)) {
        folded = await this.read(stream, folded, reload);
        current = true;
      }
      const now = this.options.clock.now();
      this.counters.decisions++;
      const decision = decide(folded, now);
      if (decision.events.length === 0) {
        if (!current) {
          const latest = await this.read(stream, folded, reload);
          current = true;
          if (latest !== folded) {
            folded = latest;
            continue;
          }
        }
        // Nothing for this stream, on a fold confirmed current: the appends alongside go on their own.
        const alongside = decision.alongside === undefined ? [] : await this.appendAlongside(stream, undefined, await decision.alongside());
        return { status: 'unchanged', folded, result: decision.result, alongside };
      }

      const { events, link } = await this.encode(stream, folded, decision.events, now);
      const others = decision.alongside === undefined ? [] : await decision.alongside();
      // A held start still to be confirmed is confirmed by the append (appendConfirms said so above).
      const condition = !current && this.options.confirmHeldStarts && folded.eventId !== undefined ? { expectedEventId: folded.eventId } : {};
      let appended;
      let alongside: readonly AppendResult[] = [];
      try {
        if (others.length === 0) appended = await this.store.append(stream.id, events, { expectedRevision: expectedRevision(folded), ...condition });
        else {
          const results = await this.appendAlongside(stream, { streamId: stream.id, events, expectedRevision: expectedRevision(folded), ...condition }, others);
          appended = results[results.length - 1];
          alongside = results.slice(0, -1);
        }
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        this.counters.conflicts++;
        refusals++;
        // A stream behind the fold, or at its revision with another event there (refused for the
        // expected event id), lost events the fold holds (a failover, a restore): the fold
        // describes a history the log no longer has and is folded afresh, not caught up.
        const behind = error.actual === 'no_stream' ? folded.revision !== NO_STREAM : error.actual <= folded.revision;
        if (behind) this.counters.staleFolds = (this.counters.staleFolds ?? 0) + 1;
        const refold = () => (behind ? (reload ?? (() => this.read(stream)))() : this.read(stream, folded, reload));
        if (refusals >= this.options.retry.maxAttempts) return { status: 'conflict', folded: await refold() };
        await sleep(boundedBackoffMs(this.options.retry, refusals));
        folded = await refold();
        // A read right after the refusal may not show yet the events that caused it (an EventStoreDB
        // node's reads see only what its index holds): deciding on that fold would only be refused
        // again. Read again, briefly, until the fold reaches the revision the refusal reported.
        if (!behind && error.actual !== 'no_stream') folded = await this.reach(stream, folded, error.actual, reload);
        current = true;
        continue;
      }
      this.counters.appends++;
      const end = folded.revision + BigInt(events.length);
      if (appended.nextExpectedRevision !== end) {
        throw new InvariantViolated(`an append of ${events.length} events to ${stream.id} at revision ${folded.revision} ended at ${appended.nextExpectedRevision}, not ${end}`);
      }
      return {
        status: 'appended',
        folded: { state: decision.state, revision: end, position: appended.position, eventId: events[events.length - 1].id, link },
        events: decision.events.map(({ event }) => event),
        position: appended.position,
        result: decision.result,
        alongside,
      };
    }
  }

  /** Whether an append from `folded` can carry the confirmation of its last event itself (confirmHeldStarts). */
  private appendConfirms(folded: Folded<State, Link>): boolean {
    return this.store.expectedEventIds === 'checked' && folded.eventId !== undefined && folded.revision !== NO_STREAM;
  }

  /**
   * The others, then the stream's own append (if any), in one atomic write: the log then holds a
   * check's request before its reservation and its terminal event before its capture, as when they
   * were appended one after the other. A refusal of another stream is AlongsideRefused; one of this
   * stream is the WrongExpectedRevisionError the loop decides again on.
   */
  private async appendAlongside(stream: Stream<State, Command, E>, own: StreamAppend | undefined, others: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (others.length === 0) return [];
    if (this.store.multiStreamAppends !== 'atomic')
      throw new InvariantViolated(`appends alongside ${stream.id} need atomic multi-stream appends; this store writes them ${this.store.multiStreamAppends}`);
    if (others.some((other) => other.streamId === stream.id)) throw new InvariantViolated(`an append alongside ${stream.id} names the stream itself`);
    try {
      return await this.store.appendMany(own === undefined ? others : [...others, own]);
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError && error.streamId !== stream.id) throw new AlongsideRefused(error);
      throw error;
    }
  }

  /**
   * Decides `commands` one after the other on `folded` and encodes their events, without appending
   * them: for a caller that has them appended alongside another stream's (Decision.alongside).
   * Decider errors are thrown as they are.
   */
  async prepare(
    stream: Stream<State, Command, E>,
    folded: Folded<State, Link>,
    commands: readonly Command[],
    context: CommandContext,
  ): Promise<{ readonly append: StreamAppend; readonly state: State }> {
    const { decider } = stream;
    const now = this.options.clock.now();
    let state = folded.state;
    const decided: DecidedEvent<E>[] = [];
    for (const command of commands) {
      for (const event of decider.decide(command, state)) {
        state = decider.evolve(state, event, { revision: folded.revision + 1n + BigInt(decided.length), occurredAt: now });
        decided.push({ event, context });
      }
    }
    if (decided.length === 0) throw new InvariantViolated(`commands prepared for ${stream.id} decided nothing`);
    const { events } = await this.encode(stream, folded, decided, now);
    return { append: { streamId: stream.id, events, expectedRevision: expectedRevision(folded) }, state };
  }

  /** The decided events in their stored form: encoded by the codec, then seen (and possibly rewritten) by the append hook. */
  private async encode(
    stream: Stream<State, Command, E>,
    folded: Folded<State, Link>,
    decided: readonly DecidedEvent<E>[],
    now: Date,
  ): Promise<{ readonly events: readonly EventToAppend[]; readonly link: Link }> {
    const revisionOf = (index: number) => folded.revision + 1n + BigInt(index);
    const encoding = decided.map(({ event, context }, index) =>
      this.codec.encode(event, { id: this.options.ids.eventId(), streamId: stream.id, revision: revisionOf(index), context, occurredAt: now }),
    );
    // A batch of a synchronous codec's events is not sent through a promise each.
    const encoded = encoding.some(isPromise) ? await Promise.all(encoding.map(async (item) => item)) : (encoding as EventToAppend[]);
    const hooked = this.hook.beforeAppend(
      folded.link,
      encoded.map((event, index) => ({ streamId: stream.id, revision: revisionOf(index), event })),
    );
    if (hooked.events.length !== encoded.length) throw new InvariantViolated(`the append hook of ${stream.id} turned ${encoded.length} events into ${hooked.events.length}`);
    return hooked;
  }
}
