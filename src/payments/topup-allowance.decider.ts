import { InvariantViolated, ValidationFailed } from '../common/errors.js';
import type { Decider } from '../event-sourcing/decider.js';
import type { TopUpAllowanceEvent, TopUpLimitsSet } from './topup.events.js';

const SCHEMA_VERSION = 1;

export interface AllowanceState {
  /** The amounts counted today, by top-up reference (released ones removed). */
  readonly counted: ReadonlyMap<string, number>;
  readonly released: ReadonlySet<string>;
  readonly totalKobo: number;
}

export type AllowanceCommand =
  | {
      readonly type: 'ReserveAllowance';
      readonly organizationId: string;
      readonly environment: string;
      readonly day: string;
      readonly reference: string;
      readonly amountKobo: number;
      readonly limitKobo: number | null;
    }
  /**
   * A released top-up that was paid after all: counted again if the day's limit has room, else
   * nothing is written (the caller reads whether it is counted).
   */
  | {
      readonly type: 'ReserveAllowanceAgain';
      readonly organizationId: string;
      readonly environment: string;
      readonly day: string;
      readonly reference: string;
      readonly amountKobo: number;
      readonly limitKobo: number;
    }
  | { readonly type: 'ReleaseAllowance'; readonly organizationId: string; readonly environment: string; readonly day: string; readonly reference: string };

export const initialAllowance: AllowanceState = { counted: new Map(), released: new Set(), totalKobo: 0 };

/**
 * A wallet's day of top-ups: each reference counted once, within the limit unless it is null (a
 * transfer that has arrived); released once, and a released reference is counted again only when
 * asked to explicitly (its payment came after all), and only within the limit.
 */
export function decideAllowance(command: AllowanceCommand, state: AllowanceState): TopUpAllowanceEvent[] {
  const { organizationId, environment, day, reference } = command;
  switch (command.type) {
    case 'ReserveAllowance': {
      if (state.counted.has(reference) || state.released.has(reference)) return [];
      if (command.limitKobo !== null && state.totalKobo + command.amountKobo > command.limitKobo) {
        throw new ValidationFailed([{ field: 'amountKobo', message: `is above what is left of today's top-up limit (${Math.max(0, command.limitKobo - state.totalKobo)} kobo)` }]);
      }
      return [
        {
          type: 'TopUpAllowanceReserved',
          data: { organizationId, environment, day, reference, amountKobo: command.amountKobo, limitKobo: command.limitKobo, schemaVersion: SCHEMA_VERSION },
        },
      ];
    }
    case 'ReserveAllowanceAgain': {
      if (state.counted.has(reference) || state.totalKobo + command.amountKobo > command.limitKobo) return [];
      return [
        {
          type: 'TopUpAllowanceReserved',
          data: { organizationId, environment, day, reference, amountKobo: command.amountKobo, limitKobo: command.limitKobo, schemaVersion: SCHEMA_VERSION },
        },
      ];
    }
    case 'ReleaseAllowance': {
      const amountKobo = state.counted.get(reference);
      if (amountKobo === undefined) return [];
      return [{ type: 'TopUpAllowanceReleased', data: { organizationId, environment, day, reference, amountKobo, schemaVersion: SCHEMA_VERSION } }];
    }
    default: {
      const _exhaustive: never = command;
      throw new InvariantViolated(`unknown allowance command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export function evolveAllowance(state: AllowanceState, event: TopUpAllowanceEvent): AllowanceState {
  switch (event.type) {
    case 'TopUpAllowanceReserved':
      // A reference released, then counted again, stays in `released`: a replayed ReserveAllowance still counts it once.
      return { ...state, counted: new Map(state.counted).set(event.data.reference, event.data.amountKobo), totalKobo: state.totalKobo + event.data.amountKobo };
    case 'TopUpAllowanceReleased': {
      const counted = new Map(state.counted);
      counted.delete(event.data.reference);
      return { counted, released: new Set(state.released).add(event.data.reference), totalKobo: state.totalKobo - event.data.amountKobo };
    }
    default: {
      const _exhaustive: never = event;
      throw new InvariantViolated(`unknown allowance event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export const allowanceDecider: Decider<AllowanceState, AllowanceCommand, TopUpAllowanceEvent> = {
  initialState: initialAllowance,
  decide: decideAllowance,
  evolve: evolveAllowance,
};

/** An organization's own limits; null: the deployment's. */
export interface OwnLimits {
  readonly maxTopUpKobo: number | null;
  readonly dailyLimitKobo: number | null;
}
export type LimitsCommand = { readonly type: 'SetTopUpLimits'; readonly organizationId: string } & OwnLimits;

export const limitsDecider: Decider<OwnLimits, LimitsCommand, TopUpLimitsSet> = {
  initialState: { maxTopUpKobo: null, dailyLimitKobo: null },
  decide: (command, state) =>
    command.maxTopUpKobo === state.maxTopUpKobo && command.dailyLimitKobo === state.dailyLimitKobo
      ? []
      : [
          {
            type: 'TopUpLimitsSet',
            data: { organizationId: command.organizationId, maxTopUpKobo: command.maxTopUpKobo, dailyLimitKobo: command.dailyLimitKobo, schemaVersion: SCHEMA_VERSION },
          },
        ],
  evolve: (_state, event) => ({ maxTopUpKobo: event.data.maxTopUpKobo, dailyLimitKobo: event.data.dailyLimitKobo }),
};
