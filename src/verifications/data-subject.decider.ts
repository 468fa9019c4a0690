import { Conflict, NotFound } from '../common/errors.js';
import type { Decider } from '../event-sourcing/decider.js';
import type { DataErasureRecorded, DataHoldEvent, DataHoldPlaced, DataRequestEvent, DataSubjectExported } from './data-subject.events.js';

const SCHEMA_VERSION = 1;

/** Whose holds a caller may lift: its organization and environment; null for operators. */
export interface HoldOwner {
  readonly organizationId: string;
  readonly environment: string;
}

export type DataHoldCommand =
  { readonly type: 'PlaceHold'; readonly hold: Omit<DataHoldPlaced['data'], 'schemaVersion'> } | { readonly type: 'LiftHold'; readonly owner: HoldOwner | null; readonly at: Date };

export interface DataHoldState {
  readonly placed: Omit<DataHoldPlaced['data'], 'schemaVersion'> | null;
  readonly liftedAt: string | null;
}

export const initialDataHoldState: DataHoldState = { placed: null, liftedAt: null };

function decideHold(command: DataHoldCommand, state: DataHoldState): DataHoldEvent[] {
  switch (command.type) {
    case 'PlaceHold':
      if (state.placed !== null) throw new Conflict('A hold with that id exists');
      return [{ type: 'DataHoldPlaced', data: { schemaVersion: SCHEMA_VERSION, ...command.hold } }];
    case 'LiftHold': {
      const { placed } = state;
      const mine = command.owner === null || (placed !== null && placed.organizationId === command.owner.organizationId && placed.environment === command.owner.environment);
      if (placed === null || !mine) throw new NotFound('No hold with that id');
      // Lifting twice changes nothing.
      if (state.liftedAt !== null) return [];
      return [{ type: 'DataHoldLifted', data: { schemaVersion: SCHEMA_VERSION, holdId: placed.holdId, liftedAt: command.at.toISOString() } }];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

function evolveHold(state: DataHoldState, event: DataHoldEvent): DataHoldState {
  switch (event.type) {
    case 'DataHoldPlaced': {
      const { schemaVersion: _version, ...placed } = event.data;
      return { ...state, placed };
    }
    case 'DataHoldLifted':
      return { ...state, liftedAt: event.data.liftedAt };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

export const dataHoldDecider: Decider<DataHoldState, DataHoldCommand, DataHoldEvent> = { initialState: initialDataHoldState, decide: decideHold, evolve: evolveHold };

/** A request's record is written once, under a fresh id. */
export type DataRequestCommand =
  | { readonly type: 'RecordExport'; readonly data: Omit<DataSubjectExported['data'], 'schemaVersion'> }
  | { readonly type: 'RecordErasure'; readonly data: Omit<DataErasureRecorded['data'], 'schemaVersion'> };

export interface DataRequestState {
  readonly recorded: boolean;
}

function decideRequest(command: DataRequestCommand, state: DataRequestState): DataRequestEvent[] {
  if (state.recorded) throw new Conflict('A request with that id is recorded');
  switch (command.type) {
    case 'RecordExport':
      return [{ type: 'DataSubjectExported', data: { schemaVersion: SCHEMA_VERSION, ...command.data } }];
    case 'RecordErasure':
      return [{ type: 'DataErasureRecorded', data: { schemaVersion: SCHEMA_VERSION, ...command.data } }];
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

export const dataRequestDecider: Decider<DataRequestState, DataRequestCommand, DataRequestEvent> = {
  initialState: { recorded: false },
  decide: decideRequest,
  evolve: () => ({ recorded: true }),
};
