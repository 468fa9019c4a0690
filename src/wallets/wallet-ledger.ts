import { type BeforeApplicationShutdown, Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { InsufficientBalance, InvariantViolated, ServiceUnavailable } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { type AppendResult, EVENT_STORE, type EventStore, type StreamAppend } from '../event-store/event-store.port.js';
import { AlongsideRefused, type Decision, type DecidedEvent, EventSourcedHandler, type Folded, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { exponentialJitter } from '../event-sourcing/retry.js';
import { walletBatchCommands, walletBatchDurationSeconds, walletCommandWaitSeconds } from '../metrics/metrics.js';
import { ReadYourWrites } from '../read-models/read-your-writes.js';
import { availableKobo, balanceKobo, walletDecider, type WalletCommand, type WalletState } from './wallet.decider.js';
import { storedLink, WALLET_CHAIN } from './wallet-chain.js';
import type { WalletEvent } from './wallet.events.js';
import { type Alongside, type ReserveOutcome, type WalletBalance, type WalletId, WalletLedger } from './wallet-ledger.port.js';
import { WalletSnapshots } from './wallet-snapshots.js';

export interface WalletLedgerOptions {
  /** Most commands of one wallet decided together and appended in one write. */
  readonly maxBatch: number;
  /** Most commands waiting for one wallet; beyond it callers get 503 rather than an unbounded queue. */
  readonly maxPending: number;
  /** Appends of one batch refused by a concurrent writer before the batch gives up with 503. */
  readonly maxAttempts: number;
  /** Upper bound of the first jittered backoff after a conflict; doubles per attempt up to maxBackoffMs. */
  readonly baseBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Wallets whose folded state is kept in memory (least recently used are dropped). */
  readonly cacheSize: number;
  /** Events per read while folding a stream. */
  readonly pageSize: number;
  /** A wallet's fold is snapshotted once it is this many events past its last snapshot (0: never). */
  readonly snapshotEvery: number;
}

export const DEFAULT_WALLET_LEDGER_OPTIONS: WalletLedgerOptions = {
  maxBatch: 200,
  maxPending: 10_000,
  maxAttempts: 20,
  baseBackoffMs: 2,
  maxBackoffMs: 50,
  cacheSize: 10_000,
  pageSize: 1_000,
  snapshotEvery: 1_000,
};

export const WALLET_LEDGER_OPTIONS = Symbol('WalletLedgerOptions');

/** Events one fold reads at most: a wallet this long without a snapshot is a bug, not a wallet. */
const MAX_FOLD_EVENTS = 100_000_000;

/**
 * A wallet stream folded up to its revision; `position` is that of its newest event known here,
 * `link` the hash chain's link after it (wallet-chain.ts), which the next append chains onto.
 */
type FoldedWallet = Folded<WalletState, string>;
type WalletStream = Stream<WalletState, WalletCommand, WalletEvent>;

interface CommandResult {
  readonly written: boolean;
  readonly state: WalletState;
  readonly position: bigint;
  readonly refusal?: InsufficientBalance;
  readonly alongside?: AppendResult;
}

interface PendingCommand {
  /** performance.now() when the command joined its wallet's queue. */
  readonly queuedAt: number;
  readonly command: WalletCommand;
  readonly context: CommandContext;
  readonly alongside?: Alongside;
  readonly resolve: (result: CommandResult) => void;
  readonly reject: (error: unknown) => void;
}

interface WalletQueue {
  readonly stream: WalletStream;
  readonly wallet: WalletId;
  readonly pending: PendingCommand[];
}

/** How a batch ended, for ivl_wallet_batch_duration_seconds: as runBatch answers, or `failed` when it throws. */
type BatchOutcome = 'appended' | 'unchanged' | 'conflict' | 'failed';

type Outcome = { readonly written: boolean; readonly state: WalletState; readonly refusal?: InsufficientBalance } | { readonly error: unknown };

/** A plain LRU over Map's insertion order. */
class LruCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

function toBalance(state: WalletState): WalletBalance {
  return { balanceKobo: balanceKobo(state), reservedKobo: state.reservedKobo, availableKobo: availableKobo(state) };
}

/**
 * A batch of commands decided one after the other on one fold: each sees the state its
 * predecessors left, a refused reservation answers its caller without failing the others.
 */
function decideBatch(stream: WalletStream, folded: FoldedWallet, now: Date, batch: readonly PendingCommand[]): Decision<WalletState, WalletEvent, Outcome[]> {
  const { decider } = stream;
  let state = folded.state;
  const events: DecidedEvent<WalletEvent>[] = [];
  const outcomes: Outcome[] = [];
  // The appends alongside, of the commands that did not fail, with what each decided.
  const alongside: (() => Promise<StreamAppend>)[] = [];
  for (const pending of batch) {
    try {
      const decided = decider.decide(pending.command, state);
      for (const event of decided) {
        state = decider.evolve(state, event, { revision: folded.revision + 1n + BigInt(events.length), occurredAt: now });
        events.push({ event, context: pending.context });
      }
      outcomes.push({ written: decided.length > 0, state });
      if (pending.alongside !== undefined) alongside.push(() => (pending.alongside as Alongside).build({}));
    } catch (error) {
      if (error instanceof InsufficientBalance && pending.command.type === 'ReserveFunds') {
        outcomes.push({ written: false, state, refusal: error });
        const refusedAvailableKobo = availableKobo(state);
        if (pending.alongside !== undefined) alongside.push(() => (pending.alongside as Alongside).build({ refusedAvailableKobo }));
      } else outcomes.push({ error });
    }
  }
  return { events, state, result: outcomes, ...(alongside.length === 0 ? {} : { alongside: () => Promise.all(alongside.map((build) => build())) }) };
}

/**
 * The wallet ledger, a layer over the event-sourcing kernel. Commands for one wallet queue up in
 * this process and are decided in batches against the folded stream, each batch appended in one
 * write with the expected revision. So a burst of reservations costs one append instead of one per
 * request, and correctness never depends on the queue: a write by another instance makes the
 * append fail, the kernel catches the fold up and the batch is decided again. Folds are kept in an
 * LRU cache and snapshotted, and a cold wallet starts from its snapshot.
 */
@Injectable()
export class EventSourcedWalletLedger extends WalletLedger implements BeforeApplicationShutdown {
  private readonly logger = new Logger('WalletLedger');
  private readonly options: WalletLedgerOptions;
  private readonly cache: LruCache<FoldedWallet>;
  private readonly queues = new Map<string, WalletQueue>();
  /** The revision of each wallet's newest snapshot known here (bounded: forgetting one only brings its next snapshot early). */
  private readonly snapshotRevisions = new Map<string, bigint>();
  /** Snapshot writes under way, one per wallet at most. */
  private readonly snapshotWrites = new Map<string, Promise<void>>();
  /**
   * Counters since start, for metrics and tests: batches decided, appends written, appends refused by
   * another writer, events folded from the store, snapshots written, cached folds found to hold
   * events the log no longer has (and folded afresh).
   */
  readonly stats = { decisions: 0, appends: 0, conflicts: 0, eventsFolded: 0, snapshotsSaved: 0, staleFolds: 0 };
  private readonly handler: EventSourcedHandler<WalletState, WalletCommand, WalletEvent, string>;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(Clock) clock: Clock,
    @Inject(IdGenerator) ids: IdGenerator,
    @Optional() @Inject(WALLET_LEDGER_OPTIONS) options?: Partial<WalletLedgerOptions>,
    // Not @Optional: the app must provide a snapshot store. Tests that build a ledger by hand may leave it out (no snapshots).
    @Inject(WalletSnapshots) private readonly snapshots?: WalletSnapshots,
    // The same: the app provides it, so that this instance's reads of the wallet show what it wrote here.
    @Inject(ReadYourWrites) private readonly readYourWrites?: ReadYourWrites,
  ) {
    super();
    this.options = { ...DEFAULT_WALLET_LEDGER_OPTIONS, ...options };
    const { maxBatch, pageSize } = this.options;
    // One command writes at most one event, so a batch always fits in one append and one read page.
    if (!Number.isInteger(maxBatch) || maxBatch < 1 || maxBatch > 1_000) throw new RangeError('maxBatch must be 1 to 1000');
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 10_000) throw new RangeError('pageSize must be 1 to 10000');
    if (!Number.isInteger(this.options.snapshotEvery) || this.options.snapshotEvery < 0) throw new RangeError('snapshotEvery must be a non-negative integer');
    this.cache = new LruCache(this.options.cacheSize);
    const { maxAttempts, baseBackoffMs, maxBackoffMs } = this.options;
    this.handler = new EventSourcedHandler({
      store,
      clock,
      ids,
      retry: exponentialJitter(maxAttempts, baseBackoffMs, maxBackoffMs),
      paging: { pageSize, maxPages: Math.ceil(MAX_FOLD_EVENTS / pageSize) },
      hook: WALLET_CHAIN,
      counters: this.stats,
      // A cached fold may hold events the log lost (a failover to an asynchronous replica, a
      // restore); once other writers bring the stream back to the same revision, an append at the
      // fold's revision would succeed against other content. Every batch from the cache is
      // confirmed: on PostgreSQL by its append (the event at the fold's revision must be the
      // fold's last), on EventStoreDB by a read of the stream from the fold's revision first.
      confirmHeldStarts: true,
    });
  }

  async reserve(wallet: WalletId, reservation: { reference: string; amountKobo: number; scope: string }, context: CommandContext, alongside?: Alongside): Promise<ReserveOutcome> {
    const result = await this.submit(wallet, { type: 'ReserveFunds', ...reservation }, context, alongside);
    const written = result.alongside === undefined ? {} : { alongside: result.alongside };
    return result.refusal === undefined ? { reserved: true, ...written } : { reserved: false, availableKobo: availableKobo(result.state), ...written };
  }

  async capture(wallet: WalletId, reference: string, context: CommandContext, alongside?: Alongside): Promise<{ readonly alongside?: AppendResult }> {
    const result = await this.submit(wallet, { type: 'CaptureReservation', reference }, context, alongside);
    return result.alongside === undefined ? {} : { alongside: result.alongside };
  }

  async release(wallet: WalletId, reference: string, reason: string, context: CommandContext, alongside?: Alongside): Promise<{ readonly alongside?: AppendResult }> {
    const result = await this.submit(wallet, { type: 'ReleaseReservation', reference, reason }, context, alongside);
    return result.alongside === undefined ? {} : { alongside: result.alongside };
  }

  async fund(wallet: WalletId, funding: { fundingReference: string; amountKobo: number }, context: CommandContext) {
    const result = await this.submit(wallet, { type: 'FundWallet', ...funding }, context);
    return { funded: result.written, balance: toBalance(result.state), position: result.position };
  }

  async balance(wallet: WalletId): Promise<WalletBalance> {
    const stream = this.streamOf(wallet);
    const cached = this.cache.get(stream.id);
    let folded;
    try {
      folded = cached === undefined ? await this.load(stream, wallet) : await this.handler.read(stream, cached, () => this.load(stream, wallet));
    } catch (error) {
      // A held fold the stream does not show (not readable yet, or a restore took its events): the
      // next read starts from the snapshot or the stream, as a failed batch does.
      if (cached !== undefined && this.cache.get(stream.id) === cached) this.cache.delete(stream.id);
      throw error;
    }
    this.remember(stream.id, folded, cached);
    return toBalance(folded.state);
  }

  /** Lets snapshot writes under way finish before the pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.snapshotsWritten();
  }

  /** Resolves once every snapshot write started so far has finished (written or given up). */
  async snapshotsWritten(): Promise<void> {
    await Promise.all(this.snapshotWrites.values());
  }

  private streamOf(wallet: WalletId): WalletStream {
    return { id: streams.wallet(wallet.organizationId, wallet.environment), decider: walletDecider(wallet.organizationId, wallet.environment) };
  }

  private submit(wallet: WalletId, command: WalletCommand, context: CommandContext, alongside?: Alongside): Promise<CommandResult> {
    const key = streams.wallet(wallet.organizationId, wallet.environment);
    let queue = this.queues.get(key);
    if (queue !== undefined && queue.pending.length >= this.options.maxPending) {
      return Promise.reject(new ServiceUnavailable('The wallet is busy; try again shortly'));
    }
    return new Promise<CommandResult>((resolve, reject) => {
      const pending: PendingCommand = { queuedAt: performance.now(), command, context, alongside, resolve, reject };
      if (queue === undefined) {
        queue = { stream: this.streamOf(wallet), wallet, pending: [] };
        this.queues.set(key, queue);
        queue.pending.push(pending);
        void this.drain(key, queue);
      } else {
        queue.pending.push(pending);
      }
    });
  }

  /** Runs while the wallet has pending commands; exactly one drain per wallet at a time. */
  private async drain(key: string, queue: WalletQueue): Promise<void> {
    try {
      while (queue.pending.length > 0) {
        const batch = queue.pending.splice(0, this.options.maxBatch);
        const started = performance.now();
        for (const pending of batch) walletCommandWaitSeconds.observe((started - pending.queuedAt) / 1000);
        walletBatchCommands.observe(batch.length);
        let outcome: BatchOutcome = 'failed';
        try {
          outcome = await this.runBatch(queue, batch);
          if (outcome === 'conflict') throw new ServiceUnavailable('The wallet is busy; try again shortly');
        } catch (error) {
          // The append may or may not have been written: forget the state and let callers retry (every command is idempotent).
          this.cache.delete(key);
          for (const pending of batch) pending.reject(error);
        } finally {
          walletBatchDurationSeconds.observe({ outcome }, (performance.now() - started) / 1000);
        }
      }
    } finally {
      this.queues.delete(key);
    }
  }

  /** Decides and appends one batch and answers its commands; answers `conflict`, with the commands unanswered, when every append lost to another writer. */
  private async runBatch(queue: WalletQueue, whole: readonly PendingCommand[]): Promise<'appended' | 'unchanged' | 'conflict'> {
    const { stream } = queue;
    let batch = whole;
    let handled;
    let cached;
    // Bounded: each refusal alongside takes one command out of the batch.
    for (;;) {
      cached = this.cache.get(stream.id);
      // A batch that writes nothing (a refusal, a no-op capture) must not rest on a cached fold that
      // another instance has moved past: the kernel confirms a start that is not current.
      const from = cached === undefined ? { folded: await this.load(stream, queue.wallet), current: true } : { folded: cached, current: false };
      const deciding = batch;
      try {
        handled = await this.handler.run(stream, (folded, now) => decideBatch(stream, folded, now, deciding), { from, reload: () => this.load(stream, queue.wallet) });
        break;
      } catch (error) {
        // Another stream refused its append alongside one command: nothing was written; that
        // command fails with the refusal and the others are decided again without it.
        const refused = error instanceof AlongsideRefused ? batch.filter((pending) => pending.alongside?.streamId === error.streamId) : [];
        if (refused.length === 0) throw error;
        for (const pending of refused) pending.reject(error);
        batch = batch.filter((pending) => !refused.includes(pending));
        if (batch.length === 0) return 'unchanged';
      }
    }
    if (handled.status === 'conflict') return 'conflict';
    this.remember(stream.id, handled.folded, cached);
    const position = handled.status === 'appended' ? handled.position : (handled.folded.position ?? 0n);
    // Also when nothing was written: a read here must not show less than the fold this batch was decided on.
    if (position > 0n) this.readYourWrites?.noteWrite(queue.wallet, 'wallet', position);
    // The results alongside, in the order their commands were decided (those that did not fail).
    const alongside = [...handled.alongside];
    const expected = handled.result.filter((outcome, index) => !('error' in outcome) && batch[index].alongside !== undefined).length;
    if (alongside.length !== expected) throw new InvariantViolated(`a wallet batch wrote ${alongside.length} appends alongside for ${expected} commands`);
    handled.result.forEach((outcome, index) => {
      const pending = batch[index];
      if ('error' in outcome) pending.reject(outcome.error);
      else pending.resolve({ ...outcome, position, ...(pending.alongside === undefined ? {} : { alongside: alongside.shift() }) });
    });
    return handled.status;
  }

  /** The wallet folded to the stream's end, from its snapshot when it has one that matches the stream, else from the start. */
  private async load(stream: WalletStream, wallet: WalletId): Promise<FoldedWallet> {
    return this.handler.read(stream, await this.fromSnapshot(stream.id, wallet));
  }

  /**
   * The wallet's snapshot as a fold, if the stream's event at the snapshot's revision carries the
   * snapshot's chain hash (the hash covers that event and every one before it). A snapshot that
   * cannot be read or does not match is dropped and the stream folded from the start: snapshots
   * only save time, they never decide a balance on their own.
   */
  private async fromSnapshot(key: string, wallet: WalletId): Promise<FoldedWallet | undefined> {
    if (this.snapshots === undefined || this.options.snapshotEvery === 0) return undefined;
    let snapshot;
    try {
      snapshot = await this.snapshots.load(key, wallet);
    } catch {
      this.logger.warn(`Could not read the snapshot of ${key}; folding the whole stream`);
      return undefined;
    }
    if (snapshot === undefined) return undefined;
    const [event] = await this.store.readStream(key, { direction: 'forwards', fromRevision: snapshot.revision, maxCount: 1 });
    const stored = event === undefined ? undefined : storedLink(event.metadata);
    if (event === undefined || event.revision !== snapshot.revision || typeof stored !== 'object' || stored.hash !== snapshot.link) {
      this.logger.warn(`The snapshot of ${key} at revision ${snapshot.revision} does not match the stream; folding the whole stream`);
      await this.snapshots.discard(key, snapshot.link).catch(() => undefined);
      return undefined;
    }
    this.noteSnapshot(key, snapshot.revision);
    return { state: snapshot.state, revision: snapshot.revision, position: event.position, eventId: event.id, link: snapshot.link };
  }

  private noteSnapshot(key: string, revision: bigint): void {
    if (this.snapshotRevisions.size >= this.options.cacheSize) this.snapshotRevisions.clear();
    this.snapshotRevisions.set(key, revision);
  }

  /**
   * Writes the fold as the wallet's snapshot when it is `snapshotEvery` events past the last one,
   * in the background: a command never waits for it, and a failed write is only logged (the next
   * one due tries again).
   */
  private snapshotIfDue(key: string, folded: FoldedWallet): void {
    const every = this.options.snapshotEvery;
    const snapshots = this.snapshots;
    const revision = folded.revision;
    if (snapshots === undefined || every === 0 || revision < 0n || this.snapshotWrites.has(key)) return;
    if (revision - (this.snapshotRevisions.get(key) ?? -1n) < BigInt(every)) return;
    const write = snapshots
      .save({ streamId: key, revision, link: folded.link, state: folded.state })
      .then(
        () => {
          this.stats.snapshotsSaved++;
          this.noteSnapshot(key, revision);
        },
        () => this.logger.warn(`Could not write the snapshot of ${key} at revision ${revision}`),
      )
      .finally(() => this.snapshotWrites.delete(key));
    this.snapshotWrites.set(key, write);
  }

  /**
   * Never replaces a newer fold with an older one (a balance read may race a batch), except the
   * fold the work started from: folded afresh from a log that lost events, its successor may be at
   * a lower revision.
   */
  private remember(key: string, folded: FoldedWallet, startedFrom?: FoldedWallet): void {
    const cached = this.cache.get(key);
    if (cached === undefined || cached === startedFrom || cached.revision <= folded.revision) this.cache.set(key, folded);
    this.snapshotIfDue(key, folded);
  }
}
