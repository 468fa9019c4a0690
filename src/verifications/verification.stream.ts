import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { InvariantViolated, VerificationAlreadyExists } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { newTokensOf, tokensOf } from '../data-protection/blind-index.js';
import { EVENT_STORE, type EventStore, type JsonObject } from '../event-store/event-store.port.js';
import { EventSourcedHandler, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { NO_RETRY } from '../event-sourcing/retry.js';
import { ReadYourWrites } from '../read-models/read-your-writes.js';
import { verificationDecider, type VerificationCommand, type VerificationState } from './verification.decider.js';
import type { VerificationEvent } from './verification.events.js';
import { PersonalFields, VerificationCodec } from './verification.codec.js';

/** A verification stream holds two events; one page of ten is more than any correct one needs. */
const PAGING = { pageSize: 10, maxPages: 1 };
/** The revision of the request, which every terminal event is appended after. */
const REQUEST_REVISION = 0n;

export interface Decided {
  readonly state: VerificationState;
  /** False when another writer finished the verification first: `state` is then the winner's. */
  readonly won: boolean;
  readonly position: bigint | null;
}

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

  constructor(
    @Inject(EVENT_STORE) store: EventStore,
    @Inject(Clock) clock: Clock,
    @Inject(IdGenerator) ids: IdGenerator,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(PersonalFields) fields: PersonalFields,
    @Inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
  ) {
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: NO_RETRY, paging: PAGING, codec: new VerificationCodec(fields) });
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
   * Revision 1: the one terminal event, decided on `state` (the pending request the caller holds)
   * and appended after it. When another writer got there first, nothing is written and the
   * winner's state is returned.
   */
  async finish(reference: string, state: VerificationState, command: Exclude<VerificationCommand, { type: 'RequestVerification' }>, context: CommandContext): Promise<Decided> {
    if (state.status !== 'pending') return { state, won: false, position: null };
    if (state.requested.reference !== reference) throw new InvariantViolated(`the state of ${state.requested.reference} was handed in to finish ${reference}`);
    const handled = await this.handler.handle(stream(reference), command, context, {
      from: { folded: { state, revision: REQUEST_REVISION, position: null, link: undefined }, current: false },
    });
    if (handled.status !== 'appended') return { state: handled.folded.state, won: false, position: null };
    this.readYourWrites.noteWrite(state.requested, 'verification', handled.position);
    if (command.type === 'CompleteVerification') await this.indexResult(state.requested, command.result);
    return { state: handled.folded.state, won: true, position: handled.position };
  }

  /**
   * Records the erasure of a finished verification (once: a second erasure writes nothing) and
   * answers the stream's state afterwards, its `personalDataErasedAt` the erasure's time.
   */
  async erase(reference: string, at: Date, context: CommandContext): Promise<VerificationState> {
    return (await this.handler.handle(stream(reference), { type: 'ErasePersonalData', at }, context)).folded.state;
  }

  /** The identifiers a result revealed that the request did not carry, for the data-subject search. */
  private async indexResult(requested: { reference: string; organizationId: string; environment: string; request: JsonObject }, result: JsonObject): Promise<void> {
    await this.keys.index(requested.organizationId, requested.environment, requested.reference, (indexKey) => newTokensOf(indexKey, [result], [requested.request]));
  }
}
