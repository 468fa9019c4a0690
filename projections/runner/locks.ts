/**
 * PostgreSQL advisory locks of the projection machinery, in the two-key form
 * `(namespace, hashtext('projection:' || name))` so that pg_locks shows which one is which
 * (classid = namespace, objid = the hash, objsubid = 2).
 */
export const LOCK_NAMESPACE = {
  /** Session lock: the one active runner of a projection, held on a dedicated connection. */
  active: 7_120_002,
  /** Transaction lock: shared by every live batch, exclusive for a rebuild's swap. */
  swap: 7_120_003,
  /** Session lock: at most one rebuild of a projection at a time. */
  rebuild: 7_120_004,
} as const;

export type LockNamespace = (typeof LOCK_NAMESPACE)[keyof typeof LOCK_NAMESPACE];

/** SQL for the second key; `$n` is the projection name. */
export const lockKeySql = (param: string) => `hashtext('projection:' || ${param})`;

/** The checkpoint row a rebuild writes into, beside the live one. */
export const rebuildCheckpointName = (name: string) => `${name}__rebuild`;
export const shadowTableName = (table: string) => `${table}__rebuild`;
export const oldTableName = (table: string) => `${table}__old`;

/**
 * What an active worker publishes about itself in its lock connection's application_name, so that
 * any process can read it from pg_stat_activity (and it disappears with the connection).
 * PostgreSQL keeps 63 bytes of it.
 */
export interface WorkerBeacon {
  readonly state: 'running' | 'catching_up' | 'stopped';
  readonly eventsPerSecond: number;
  readonly pid: number;
}

const BEACON_PREFIX = 'proj;';

export function encodeBeacon(beacon: WorkerBeacon): string {
  return `${BEACON_PREFIX}${beacon.state};${Math.round(beacon.eventsPerSecond)};${beacon.pid}`;
}

export function decodeBeacon(applicationName: string | null): WorkerBeacon | undefined {
  if (applicationName === null || !applicationName.startsWith(BEACON_PREFIX)) return undefined;
  const [state, rate, pid] = applicationName.slice(BEACON_PREFIX.length).split(';');
  if (state !== 'running' && state !== 'catching_up' && state !== 'stopped') return undefined;
  const eventsPerSecond = Number(rate);
  const processId = Number(pid);
  if (!Number.isFinite(eventsPerSecond) || !Number.isInteger(processId)) return undefined;
  return { state, eventsPerSecond, pid: processId };
}
