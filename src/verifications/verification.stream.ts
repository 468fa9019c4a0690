import { Inject, Injectable, Optional } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { InvariantViolated, ServiceUnavailable, VerificationAlreadyExists } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { newTokensOf, tokensOf } from '../data-protection/blind-index.js';
import { type AppendResult, EVENT_STORE, type EventStore, EventStoreUnavailableError, type JsonObject, type KeyRows } from '../event-store/event-store.port.js';
import { EventSourcedHandler, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { NO_RETRY } from '../event-sourcing/retry.js';
import { ReadYourWrites } from '../read-models/read-your-writes.js';
import type { Alongside } from '../wallets/wallet-ledger.port.js';
import { verificationDecider, type VerificationCommand, type VerificationState } from './verification.decider.js';
import type { VerificationEvent } from './verification.events.js';
import { PersonalFields, VerificationCodec } from './verification.codec.js';
import { OUTCOME_NOT_KNOWN_MESSAGE } from './outcome-messages.js';

/** A verification stream holds two events; one page of ten is more than any correct one needs. */
const PAGING = { pageSize: 10, maxPages: 1 };
/** The revision of the request, which every terminal event is appended after. */
const REQUEST_REVISION = 0n;

/**
 * How long a finisher waits to read a terminal event it knows is there (its own append went
 * unanswered, or another writer's won): a store's reads may trail its writes (EventStoreDB reads
 * only what its index holds; a cluster's replication and indexing take a moment). Re-reads double
 * from the first pause up to the last, this many reads in all: about 2.5 s.
 */
export interface FinishRereads {
  readonly reads: number;
  readonly firstPauseMs: number;
  readonly maxPauseMs: number;
}

export const DEFAULT_FINISH_REREADS: FinishRereads = { reads: 9, firstPauseMs: 20, maxPauseMs: 500 };
export const FINISH_REREADS = Symbol('FinishRereads');

/** Why a check whose outcome could not be recorded was failed (a terminal append unanswered and not readable after). */
export const OUTCOME_UNKNOWN = 'outcome_unknown';
export const OUTCOME_UNKNOWN_MESSAGE = 'The outcome of the check could not be recorded; the wallet was not charged';

/**
 * The terminal event of a verification could not be established: an append went unanswered and
 * the stream shows nothing after the request within the re-reads (the store down, or its reads far
 * behind). Nothing has been settled: a caller must not report the check as charged or uncharged;
 * the recovery process settles it once the stream tells (GET the verification to see the outcome).
 */
export class OutcomeNotKnown extends ServiceUnavailable {
  constructor(reference: string) {
    super(OUTCOME_NOT_KNOWN_MESSAGE, { reference });
  }
}

const pause = (ms: number) => new Promise<void>((resolvePause) => setTimeout(resolvePause, ms));

function isFinished(state: VerificationState): boolean {
  return state.status !== 'none' && state.status !== 'pending';
}

/** Whether a finished state is what `command` would have made of the pending one (the stream holds that command's event, or its twin). */
function sameOutcome(command: Exclude<VerificationCommand, { type: 'RequestVerification' }>, state: VerificationState): boolean {
  switch (command.type) {
    case 'CompleteVerification':
      return state.status === command.outcome;
    case 'FailVerification':
      return state.status === 'failed' && state.reasonCode === command.reasonCode;
    case 'RejectVerification':
      return state.status === 'failed' && state.reasonCode === 'insufficient_balance';
    default:
      return false;
  }
}

export interface Decided {
  readonly state: VerificationState;
  /** False when another writer finished the verification first: `state` is then the winner's. */
  readonly won: boolean;
  readonly position: bigint | null;
}

/**
 * A verification event made to be written alongside a wallet command (Alongside), and what it
 * became once written: `written` takes the append's result and answers the verification's state.
 */
export interface VerificationAlongside {
  readonly alongside: Alongside;
  written(result: AppendResult): Promise<Decided>;
  /**
   * The append was refused or its answer lost: forgets what was made for it in memory (the request's
   * data key, stored only with its events), so that nothing reads under a key that may not be stored.
   */
  notWritten(): void;
}

type TerminalCommand = Exclude<VerificationCommand, { type: 'RequestVerification' }>;

function stream(reference: string): Stream<VerificationState, VerificationCommand, VerificationEvent> {
  return { id: streams.verification(reference), decider: verificationDecider };
}

/**
 * The `verification-{reference}` streams, on the event-sourcing kernel with no retry: the request
 * is appended to no stream, the one terminal event after the request, so of two finishers the
 * loser writes nothing and reads the winner's outcome.
 */
@Injectable()
export class VerificationStreams {
  private readonly handler: EventSourcedHandler<VerificationState, VerificationCommand, VerificationEvent>;

  private readonly rereads: FinishRereads;
  constructor(
    @Inject(EVENT_STORE) store: EventStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) ids: IdGenerator,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(PersonalFields) fields: PersonalFields,
    @Inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @Optional() @Inject(FINISH_REREADS) rereads?: FinishRereads,
  ) {
    this.rereads = rereads ?? DEFAULT_FINISH_REREADS;
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: NO_RETRY, paging: PAGING, codec: new VerificationCodec(fields) });
  }

  /**
   * The check of `reference` is over in this process: its data key leaves the key cache. The cache
   * then holds the keys of the checks under way (and of recent reads), not of every check of the
   * last minute: fewer unwrapped keys in memory, and no cache entry outliving its check into the
   * old generation for the garbage collector. A later read unwraps the key again from its row.
   */
  done(reference: string): void {
    this.keys.forget(reference);
  }

  async load(reference: string): Promise<VerificationState> {
    return (await this.handler.read(stream(reference))).state;
  }

  /** Revision 0: the request. The stream must not exist yet (references are never reused), so nothing is read first. */
  async request(command: Extract<VerificationCommand, { type: 'RequestVerification' }>, context: CommandContext): Promise<Decided> {
    const { reference, organizationId, environment, request } = command.data;
    // The data key (and the request's blind-index tokens) are stored before anything is sealed under it.
    await this.keys.create(organizationId, environment, reference, (indexKey) => tokensOf(indexKey, request));
    const requested = stream(reference);
    const handled = await this.handler.handle(requested, command, context, { from: { folded: this.handler.initial(requested), current: false } });
    if (handled.status !== 'appended') throw new VerificationAlreadyExists('This reference is already in use');
    this.readYourWrites.noteWrite({ organizationId, environment }, 'verification', handled.position);
    return { state: handled.folded.state, won: true, position: handled.position };
  }

  /**
   * The request, to be written in the transaction of its reservation: alone beside the reservation,
   * or followed by its rejection when the reservation is refused (the balance decides which, so the
   * rejection is made once the wallet has decided). The data key and the request's blind-index
   * tokens ride on the request's append (StreamAppend.keyRows): stored in the same transaction as
   * the events sealed under the key, or not at all.
   */
  async requestAlongside(command: Extract<VerificationCommand, { type: 'RequestVerification' }>, context: CommandContext): Promise<VerificationAlongside> {
    const { reference, organizationId, environment, request, priceKobo } = command.data;
    const { rows: keyRows } = await this.keys.make(organizationId, environment, reference, (indexKey) => tokensOf(indexKey, request));
    const requested = stream(reference);
    let made;
    try {
      // Sealed now, not in the wallet's batch: a failure here fails this check alone.
      made = await this.handler.prepare(requested, this.handler.initial(requested), [command], context);
    } catch (error) {
      this.keys.forget(reference);
      throw error;
    }
    const append = { ...made.append, keyRows };
    let written: VerificationState | undefined;
    return {
      alongside: {
        streamId: requested.id,
        build: async ({ refusedAvailableKobo }) => {
          if (refusedAvailableKobo === undefined) {
            written = made.state;
            return append;
          }
          // The rejection carries no personal data: nothing to fetch or seal.
          const reject: VerificationCommand = { type: 'RejectVerification', priceKobo, balanceKobo: refusedAvailableKobo, at: this.clock.now() };
          const rejected = await this.handler.prepare(requested, { state: made.state, revision: REQUEST_REVISION, position: null, link: undefined }, [reject], context);
          written = rejected.state;
          return { ...append, events: [...append.events, ...rejected.append.events] };
        },
      },
      notWritten: () => this.keys.forget(reference),
      written: async (result) => {
        if (written === undefined) throw new InvariantViolated(`the request of ${reference} was written without being made`);
        this.readYourWrites.noteWrite({ organizationId, environment }, 'verification', result.position);
        return { state: written, won: true, position: result.position };
      },
    };
  }

  /**
   * The terminal event, to be written in the transaction of the capture (found, not_found) or the
   * release (failed), after the request (expected revision 0, as finish()). When its append is
   * refused (another finisher first) nothing of the pair is written: the caller then finishes
   * through finishAgain, which reads the winner.
   */
  async finishAlongside(reference: string, state: VerificationState, command: TerminalCommand, context: CommandContext): Promise<VerificationAlongside> {
    if (state.status !== 'pending') throw new InvariantViolated(`${reference} is ${state.status}, not pending, and cannot be finished alongside its wallet`);
    if (state.requested.reference !== reference) throw new InvariantViolated(`the state of ${state.requested.reference} was handed in to finish ${reference}`);
    const finishing = stream(reference);
    // Sealed now, not in the wallet's batch: a failure here fails this check alone.
    const made = await this.handler.prepare(finishing, { state, revision: REQUEST_REVISION, position: null, link: undefined }, [command], context);
    // The identifiers the result reveals are indexed in the terminal event's own transaction.
    const keyRows = command.type === 'CompleteVerification' ? await this.resultTokenRows(state.requested, command.result) : undefined;
    const append = keyRows === undefined ? made.append : { ...made.append, keyRows };
    return {
      alongside: { streamId: finishing.id, build: async () => append },
      notWritten: () => undefined,
      written: async (result) => {
        this.readYourWrites.noteWrite(state.requested, 'verification', result.position);
        return { state: made.state, won: true, position: result.position };
      },
    };
  }

  /**
   * finish() after a terminal event written alongside the wallet was refused or went unanswered:
   * the stream tells whether it was written (the append here is then refused and the re-read shows
   * it, its result indexed here), another finisher won, or nothing is there yet (this appends it).
   */
  async finishAgain(reference: string, state: VerificationState, command: TerminalCommand, context: CommandContext): Promise<Decided> {
    const decided = await this.finish(reference, state, command, context);
    if (!decided.won && command.type === 'CompleteVerification' && state.status === 'pending' && sameOutcome(command, decided.state)) {
      await this.indexResult(state.requested, command.result);
    }
    return decided;
  }

  /**
   * Revision 1: the one terminal event, decided on `state` (the pending request the caller holds)
   * and appended after it. The answer is always a finished state, never `pending`:
   * - appended: this command's outcome;
   * - refused, another writer having finished first: the winner's outcome, re-read until the stream
   *   shows it (a read right after the refusal may not show it yet);
   * - unanswered (the store failed or timed out after the append was sent, so it may or may not be
   *   written): whatever the stream shows, re-read as above; when it shows nothing, a failure
   *   (`outcome_unknown`) is appended after the request, so that exactly one of the two is ever
   *   written and the stream, not the lost answer, tells the outcome.
   * OutcomeNotKnown when even that cannot be established. Money is never settled on a pending state.
   */
  async finish(reference: string, state: VerificationState, command: Exclude<VerificationCommand, { type: 'RequestVerification' }>, context: CommandContext): Promise<Decided> {
    return this.finishOnce(reference, state, command, context, true);
  }

  private async finishOnce(
    reference: string,
    state: VerificationState,
    command: Exclude<VerificationCommand, { type: 'RequestVerification' }>,
    context: CommandContext,
    mayFailInstead: boolean,
  ): Promise<Decided> {
    if (state.status !== 'pending') return { state, won: false, position: null };
    if (state.requested.reference !== reference) throw new InvariantViolated(`the state of ${state.requested.reference} was handed in to finish ${reference}`);
    let handled;
    try {
      handled = await this.handler.handle(stream(reference), command, context, {
        from: { folded: { state, revision: REQUEST_REVISION, position: null, link: undefined }, current: false },
      });
    } catch (error) {
      if (!(error instanceof EventStoreUnavailableError)) throw error;
      return this.afterUnanswered(reference, state, command, context, mayFailInstead);
    }
    if (handled.status !== 'appended') {
      const winner = isFinished(handled.folded.state) ? handled.folded.state : await this.readFinished(reference);
      if (winner === undefined) throw new OutcomeNotKnown(reference);
      return { state: winner, won: false, position: null };
    }
    this.readYourWrites.noteWrite(state.requested, 'verification', handled.position);
    if (command.type === 'CompleteVerification') await this.indexResult(state.requested, command.result);
    return { state: handled.folded.state, won: true, position: handled.position };
  }

  /** The terminal append went unanswered: the stream decides (see finish). */
  private async afterUnanswered(
    reference: string,
    state: VerificationState,
    command: Exclude<VerificationCommand, { type: 'RequestVerification' }>,
    context: CommandContext,
    mayFailInstead: boolean,
  ): Promise<Decided> {
    let seen: VerificationState | undefined;
    try {
      seen = await this.readFinished(reference);
    } catch {
      throw new OutcomeNotKnown(reference);
    }
    if (seen !== undefined) {
      const won = sameOutcome(command, seen);
      if (won && command.type === 'CompleteVerification' && state.status === 'pending') await this.indexResult(state.requested, command.result);
      return { state: seen, won, position: null };
    }
    if (!mayFailInstead) throw new OutcomeNotKnown(reference);
    // Nothing readable: the lost append was not written, or cannot be read yet. A failure at the
    // same revision settles it either way: written, it shuts the lost append out for good;
    // refused, the lost append is there and the refusal's re-read shows it.
    const failed = await this.finishOnce(
      reference,
      state,
      { type: 'FailVerification', reasonCode: OUTCOME_UNKNOWN, errorMessage: OUTCOME_UNKNOWN_MESSAGE, at: this.clock.now() },
      context,
      false,
    );
    return { state: failed.state, won: sameOutcome(command, failed.state), position: failed.position };
  }

  /** Re-reads the stream until it shows a terminal event (bounded by FinishRereads); undefined when it does not. */
  private async readFinished(reference: string): Promise<VerificationState | undefined> {
    let pauseMs = this.rereads.firstPauseMs;
    for (let read = 1; ; read++) {
      const state = await this.load(reference);
      if (isFinished(state)) return state;
      if (read >= this.rereads.reads) return undefined;
      await pause(pauseMs);
      pauseMs = Math.min(pauseMs * 2, this.rereads.maxPauseMs);
    }
  }

  /**
   * Records the erasure of a finished verification (once: a second erasure writes nothing) and
   * answers the stream's state afterwards, its `personalDataErasedAt` the erasure's time.
   */
  async erase(reference: string, at: Date, context: CommandContext): Promise<VerificationState> {
    return (await this.handler.handle(stream(reference), { type: 'ErasePersonalData', at }, context)).folded.state;
  }

  /**
   * The verification's state, and its erasure decided on the fold just read: one stream read for
   * both, where `load` then `erase` read it twice (an append that came between is refused by the
   * expected revision, as any other).
   */
  async loadToErase(reference: string): Promise<{ state: VerificationState; erase: (at: Date, context: CommandContext) => Promise<VerificationState> }> {
    const erased = stream(reference);
    const folded = await this.handler.read(erased);
    return {
      state: folded.state,
      erase: async (at, context) => (await this.handler.handle(erased, { type: 'ErasePersonalData', at }, context, { from: { folded, current: true } })).folded.state,
    };
  }

  /** The rows indexing the identifiers a result revealed that the request did not carry (see indexResult), for the terminal's transaction. */
  private async resultTokenRows(
    requested: { reference: string; organizationId: string; environment: string; request: JsonObject },
    result: JsonObject,
  ): Promise<KeyRows | undefined> {
    return this.keys.tokenRows(requested.organizationId, requested.environment, requested.reference, (indexKey) => newTokensOf(indexKey, [result], [requested.request]));
  }

  /** The identifiers a result revealed that the request did not carry, for the data-subject search. */
  private async indexResult(requested: { reference: string; organizationId: string; environment: string; request: JsonObject }, result: JsonObject): Promise<void> {
    await this.keys.index(requested.organizationId, requested.environment, requested.reference, (indexKey) => newTokensOf(indexKey, [result], [requested.request]));
  }
}
