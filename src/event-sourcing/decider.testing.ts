import { expect } from '@jest/globals';
import { ValidationFailed } from '../common/errors.js';
import type { Decider, DomainEvent, EventMeta } from './decider.js';

/** When every given and decided event happened, unless the spec says otherwise. */
export const GIVEN_AT = new Date('2026-01-01T00:00:00.000Z');

export interface When<State, E> {
  /** The command decides exactly these events. */
  then(expected: readonly E[]): void;
  /** The command decides no events: it was already done. */
  thenNothing(): void;
  /** The command is refused with `errorClass`; `check` makes closer assertions on the error. */
  thenThrows<Thrown extends Error>(errorClass: abstract new (...args: never[]) => Thrown, check?: (error: Thrown) => void): void;
  /** The command is refused as invalid input (ValidationFailed) naming exactly these fields, in order. */
  thenFieldErrors(fields: readonly string[]): void;
  /** The events the command decides, for assertions that are not equality. */
  events(): readonly E[];
  /** The state after the given events and the decided ones. */
  thenState(): State;
}

export interface Given<State, Command, E> {
  /** The state the given events fold to. */
  readonly state: State;
  when(command: Command): When<State, E>;
}

/**
 * given(events).when(command).then(expected events) for one decider, with no I/O. The given events
 * are folded at once, so a history the decider refuses to fold throws from `given` itself.
 */
export function givenFor<State, Command, E extends DomainEvent>(
  decider: Decider<State, Command, E>,
  options: { readonly occurredAt?: Date } = {},
): (events: readonly E[]) => Given<State, Command, E> {
  const at = options.occurredAt ?? GIVEN_AT;
  const foldAll = (state: State, events: readonly E[], firstRevision: bigint) =>
    events.reduce((folded, event, index) => decider.evolve(folded, event, { revision: firstRevision + BigInt(index), occurredAt: at } satisfies EventMeta), state);

  return (history) => {
    const state = foldAll(decider.initialState, history, 0n);
    return {
      state,
      when: (command) => {
        const decide = () => decider.decide(command, state);
        const thenThrows = <Thrown extends Error>(errorClass: abstract new (...args: never[]) => Thrown, check?: (error: Thrown) => void): void => {
          let thrown: unknown;
          try {
            decide();
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(errorClass);
          check?.(thrown as Thrown);
        };
        return {
          then: (expected) => expect(decide()).toEqual(expected),
          thenNothing: () => expect(decide()).toEqual([]),
          thenThrows,
          thenFieldErrors: (fields) => thenThrows(ValidationFailed, (error) => expect(error.fields.map((field) => field.field)).toEqual(fields)),
          events: decide,
          thenState: () => foldAll(state, decide(), BigInt(history.length)),
        };
      },
    };
  };
}
