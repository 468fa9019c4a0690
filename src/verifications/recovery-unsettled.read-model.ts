import type pg from 'pg';
import type { Environment } from '../common/environment.js';

/** A check recovery cannot settle, as `verification_recovery_unsettled` keeps it (recovery.ts): no personal data. */
export interface UnsettledCheck {
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: Environment;
  /** An error code, and for a damaged stream its id and damage. */
  readonly reason: string;
  readonly attempts: number;
  readonly firstFailedAt: string;
  readonly lastFailedAt: string;
  readonly nextAttemptAt: string;
}

interface UnsettledRow {
  reference: string;
  organization_id: string;
  environment: Environment;
  reason: string;
  attempts: number;
  first_failed_at: Date;
  last_failed_at: Date;
  next_attempt_at: Date;
  total: string;
}

/** A page of the checks recovery cannot settle, oldest first, and how many there are: for the admin API and the operators' console. */
export async function readUnsettledChecks(pool: pg.Pool, page: number, pageSize: number): Promise<{ checks: UnsettledCheck[]; total: number }> {
  const { rows } = await pool.query<UnsettledRow>(
    `select *, count(*) over () as total from verification_recovery_unsettled order by first_failed_at, reference limit $1 offset $2`,
    [pageSize, (page - 1) * pageSize],
  );
  // Past the last page no row carries the total: counted apart.
  const total =
    rows.length > 0 ? Number(rows[0]?.total) : Number((await pool.query<{ count: string }>('select count(*) from verification_recovery_unsettled')).rows[0]?.count ?? 0);
  return {
    checks: rows.map((row) => ({
      reference: row.reference,
      organizationId: row.organization_id,
      environment: row.environment,
      reason: row.reason,
      attempts: row.attempts,
      firstFailedAt: row.first_failed_at.toISOString(),
      lastFailedAt: row.last_failed_at.toISOString(),
      nextAttemptAt: row.next_attempt_at.toISOString(),
    })),
    total,
  };
}
