/**
 * The projections' status (checkpoint, lag, worker, state per read model) as projections/status
 * reads it, for a feature that shows it (the operators' console) without importing projections/.
 * The wiring (ProjectionsModule) provides it.
 */
export const PROJECTION_STATUS = Symbol('ProjectionStatus');

/** The fields the console draws on; the answer carries the whole status (object) of each projection. */
export interface ProjectionLagSnapshot {
  readonly name: string;
  readonly state: string;
  readonly lagEvents: number | null;
  readonly lagSeconds: number;
}

export type ReadProjectionStatus = () => Promise<readonly ProjectionLagSnapshot[]>;
