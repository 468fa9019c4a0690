import type { Event } from '../common/event.js';
import type { JsonObject } from '../event-store/event-store.port.js';

/** Any stream's domain event: a type and a JSON body. */
export type DomainEvent = Event<string, JsonObject>;

/** What the store knows of an event beyond its body, handed to `evolve` beside it. */
export interface EventMeta {
  /** The event's revision in its stream (0 for the first). */
  readonly revision: bigint;
  /** When it happened: the command's time, from its metadata. */
  readonly occurredAt: Date;
}

/**
 * One stream's rules, pure: `decide` turns a command and the folded state into new events (none
 * when the command is already done, an AppError when it is refused), `evolve` folds one event
 * into the state. Deciders that need neither the time nor the revision of an event leave `meta`
 * out of their `evolve`; the kernel always passes it.
 */
export interface Decider<State, Command, E extends DomainEvent> {
  readonly initialState: State;
  decide(command: Command, state: State): readonly E[];
  evolve(state: State, event: E, meta: EventMeta): State;
}
