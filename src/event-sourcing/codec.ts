import { asDomainEvent, toAppend, type CommandContext } from '../common/event.js';
import type { EventToAppend, RecordedEvent } from '../event-store/event-store.port.js';
import type { DomainEvent } from './decider.js';

/** Everything an event is written with besides its body. */
export interface EventEnvelope {
  readonly id: string;
  readonly streamId: string;
  readonly revision: bigint;
  readonly context: CommandContext;
  readonly occurredAt: Date;
}

/**
 * The one place where domain events become stored events and back. A codec may work
 * asynchronously (sealing personal fields under a key it must fetch); `decode` must accept
 * every event its `encode` ever wrote.
 */
export interface EventCodec<E extends DomainEvent> {
  encode(event: E, envelope: EventEnvelope): EventToAppend | Promise<EventToAppend>;
  decode(recorded: RecordedEvent): E | Promise<E>;
}

/** Stored as decided: the body as the data, the command's context as the metadata. */
export function identityCodec<E extends DomainEvent>(): EventCodec<E> {
  return {
    encode: (event, envelope) => toAppend(event, envelope.id, envelope.context, envelope.occurredAt),
    decode: (recorded) => asDomainEvent<E>(recorded),
  };
}
