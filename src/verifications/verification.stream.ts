import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { asDomainEvent, toAppend, type CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import { EVENT_STORE, WrongExpectedRevisionError, type EventStore } from '../event-store/event-store.port.js';
import { decide, fold, type VerificationCommand, type VerificationState } from './verification.decider.js';
import type { VerificationEvent } from './verification.events.js';

/** A verification stream holds two events; anything longer is a bug. */
const MAX_STREAM_EVENTS = 10;

export interface Decided {
  readonly state: VerificationState;
  /** False when another writer finished the verification first: `state` is then the winner's. */
  readonly won: boolean;
  readonly position: bigint | null;
}

/** Load, decide, append for `verification-{reference}`, the one place that knows the expected revisions. */
@Injectable()
export class VerificationStreams {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
  ) {}

  async load(reference: string): Promise<VerificationState> {
    const recorded = await this.store.readStream(streams.verification(reference), { direction: 'forwards', maxCount: MAX_STREAM_EVENTS });
    return fold(recorded.map((event) => asDomainEvent<VerificationEvent>(event)));
  }

  /** Revision 0: the request. The stream must not exist yet (references are never reused). */
  async request(command: Extract<VerificationCommand, { type: 'RequestVerification' }>, context: CommandContext): Promise<Decided> {
    const events = decide(command, { status: 'none' });
    const appended = await this.store.append(streams.verification(command.data.reference), this.toAppend(events, context), { expectedRevision: 'no_stream' });
    return { state: fold(events), won: true, position: appended.position };
  }

  /**
   * Revision 1: the one terminal event, appended with expected revision 0. When another writer got
   * there first, nothing is written and the winner's state is returned.
   */
  async finish(reference: string, state: VerificationState, command: Exclude<VerificationCommand, { type: 'RequestVerification' }>, context: CommandContext): Promise<Decided> {
    if (state.status !== 'pending') return { state, won: false, position: null };
    const events = decide(command, state);
    try {
      const appended = await this.store.append(streams.verification(reference), this.toAppend(events, context), { expectedRevision: 0n });
      return { state: fold(events, state), won: true, position: appended.position };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      return { state: await this.load(reference), won: false, position: null };
    }
  }

  private toAppend(events: readonly VerificationEvent[], context: CommandContext) {
    const now = this.clock.now();
    return events.map((event) => toAppend(event, this.ids.eventId(), context, now));
  }
}
