import type pg from 'pg';

type Queryable = Pick<pg.ClientBase, 'query'>;

export interface EpochCheck {
  /** True when the epoch was raised just now (the log came from another cluster, or the counter went back). */
  readonly raised: boolean;
  readonly epoch: bigint;
  /** The newest position in the log, null for an empty log. */
  readonly newestPosition: bigint | null;
}

/** The event log's positions could not be placed above its newest event: the process must not start. */
export class PositionEpochError extends Error {
  readonly code = 'position_epoch';
}

/**
 * Places the event log's positions above its newest event (migration 1795647443977): raises the
 * epoch when the cluster's transaction-id counter is behind the log (a dump restored into another
 * cluster, a logical-replication move), else only records the newest position as the floor below
 * which no append may write. Every process runs it at start, after the migrations.
 */
export async function raisePositionEpoch(client: Queryable, lockTimeoutMs = 5_000): Promise<EpochCheck> {
  const { rows } = await client.query<{ raised: boolean; epoch: string; newest_position: string | null }>('select raised, epoch, newest_position from raise_event_log_epoch($1)', [
    lockTimeoutMs,
  ]);
  const row = rows[0];
  return { raised: row.raised, epoch: BigInt(row.epoch), newestPosition: row.newest_position === null ? null : BigInt(row.newest_position) };
}

/** raisePositionEpoch for a process that is starting: any failure is a PositionEpochError that says what to do. */
export async function ensurePositionEpoch(client: Queryable): Promise<EpochCheck> {
  try {
    return await raisePositionEpoch(client);
  } catch (error) {
    const pgError = error as { code?: string; message?: string };
    const why =
      pgError.code === 'ES504'
        ? "the log's newest position leaves no room for new positions"
        : pgError.code === '55P03'
          ? 'the event log could not be locked within 5 s (a long transaction, such as a pg_dump, holds it): try again once it has ended'
          : (pgError.message ?? String(error));
    throw new PositionEpochError(
      `The event log's positions are behind its events (a database restored into another cluster?) and could not be placed above them: ${why}. ` +
        'Nothing was written. See docs/operations.md, "Moving the database to another cluster".',
      { cause: error },
    );
  }
}
