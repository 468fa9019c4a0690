import type pg from 'pg';

export const TOPUPS_PROJECTION = 'topups';
export const TOPUPS_TABLE = 'payment_topups';
export const PAYMENT_ACCOUNTS_TABLE = 'payment_accounts';

export interface TopUpView {
  readonly reference: string;
  readonly environment: string;
  readonly rail: string;
  readonly channel: string;
  readonly status: string;
  readonly amountKobo: number;
  /** What the provider settled and the wallet was credited with, once paid. */
  readonly paidKobo: number | null;
  /** The provider's fees as it reported them: shown, not taken from the credit. */
  readonly feesKobo: number | null;
  readonly creditedKobo: number | null;
  readonly flagReason: string | null;
  readonly paidAt: string | null;
  readonly createdAt: string;
}

interface Row {
  reference: string;
  organization_id: string;
  environment: string;
  rail: string;
  channel: string;
  status: string;
  initiated_kobo: string;
  paid_kobo: string | null;
  fees_kobo: string | null;
  credited_kobo: string | null;
  flag_reason: string | null;
  paid_at: string | null;
  created_at: Date;
}

const number = (value: string | null): number | null => (value === null ? null : Number(value));

function view(row: Row): TopUpView {
  return {
    reference: row.reference,
    environment: row.environment,
    rail: row.rail,
    channel: row.channel,
    status: row.status,
    amountKobo: Number(row.initiated_kobo),
    paidKobo: number(row.paid_kobo),
    feesKobo: number(row.fees_kobo),
    creditedKobo: number(row.credited_kobo),
    flagReason: row.flag_reason,
    paidAt: row.paid_at === '' ? null : row.paid_at,
    createdAt: row.created_at.toISOString(),
  };
}

export async function readTopUps(pool: pg.Pool, organizationId: string, environment: string, page: number, pageSize: number): Promise<{ total: number; topUps: TopUpView[] }> {
  const [count, rows] = await Promise.all([
    pool.query<{ total: string }>(`select count(*) as total from ${TOPUPS_TABLE} where organization_id = $1 and environment = $2`, [organizationId, environment]),
    pool.query<Row>(`select * from ${TOPUPS_TABLE} where organization_id = $1 and environment = $2 order by created_at desc, reference desc limit $3 offset $4`, [
      organizationId,
      environment,
      pageSize,
      (page - 1) * pageSize,
    ]),
  ]);
  return { total: Number(count.rows[0].total), topUps: rows.rows.map(view) };
}

export const TOPUP_RECOVERY_CHECKS_TABLE = 'topup_recovery_checks';

/**
 * Top-ups neither credited nor given up, started between `from` and `to`: those the recovery sweep
 * verified longest ago first (never verified before any), then oldest first. So a pass is not
 * always the same oldest ones: checkouts nobody pays cannot keep a newer top-up out of every pass.
 */
export async function unfinishedTopUps(pool: pg.Pool, from: Date, to: Date, limit: number): Promise<string[]> {
  const { rows } = await pool.query<{ reference: string }>(
    `select t.reference from ${TOPUPS_TABLE} t left join ${TOPUP_RECOVERY_CHECKS_TABLE} c on c.reference = t.reference
      where t.status in ('initiated', 'paid') and t.created_at >= $1 and t.created_at < $2
      order by c.checked_at nulls first, t.created_at, t.reference limit $3`,
    [from, to, limit],
  );
  return rows.map((row) => row.reference);
}

/** The sweep verified these top-ups at `at`; checks older than `forgetBefore` (of top-ups it gave up on, or finished) are dropped. */
export async function recordRecoveryChecks(pool: pg.Pool, references: readonly string[], at: Date, forgetBefore: Date): Promise<void> {
  await pool.query(
    `insert into ${TOPUP_RECOVERY_CHECKS_TABLE} (reference, checked_at) select unnest($1::text[]), $2
       on conflict (reference) do update set checked_at = greatest(${TOPUP_RECOVERY_CHECKS_TABLE}.checked_at, excluded.checked_at)`,
    [references, at],
  );
  await pool.query(`delete from ${TOPUP_RECOVERY_CHECKS_TABLE} where checked_at < $1`, [forgetBefore]);
}

/** Every credited top-up, for the auditor's reconciliation. */
export async function creditedTopUps(pool: pg.Pool): Promise<{ reference: string; organizationId: string; environment: string; rail: string; creditedKobo: number }[]> {
  const { rows } = await pool.query<Row>(`select * from ${TOPUPS_TABLE} where status = 'credited' order by created_at, reference`);
  return rows.map((row) => ({
    reference: row.reference,
    organizationId: row.organization_id,
    environment: row.environment,
    rail: row.rail,
    creditedKobo: Number(row.credited_kobo),
  }));
}

/** One top-up's row with the provider's facts, for its receipt. */
export async function readTopUpReceipt(
  pool: pg.Pool,
  reference: string,
): Promise<
  | {
      organizationId: string;
      environment: string;
      rail: string;
      status: string;
      creditedKobo: number | null;
      feesKobo: number | null;
      paidAt: string | null;
      providerTransactionId: string | null;
    }
  | undefined
> {
  const { rows } = await pool.query<Row & { provider_transaction_id: string | null }>(`select * from ${TOPUPS_TABLE} where reference = $1`, [reference]);
  if (rows.length === 0) return undefined;
  const row = rows[0];
  return {
    organizationId: row.organization_id,
    environment: row.environment,
    rail: row.rail,
    status: row.status,
    creditedKobo: number(row.credited_kobo),
    feesKobo: number(row.fees_kobo),
    paidAt: row.paid_at,
    providerTransactionId: row.provider_transaction_id,
  };
}

export interface DedicatedAccountView {
  readonly organizationId: string;
  readonly environment: string;
  /** requested: the rail assigns it later; failed: the rail could not (it may be asked again). */
  readonly status: 'requested' | 'assigned' | 'failed';
  readonly accountNumber: string | null;
  readonly accountName: string | null;
  readonly bankName: string | null;
}

/** The organization whose dedicated account (assigned, or asked for) the rail knows by this customer code. */
export async function accountByCustomer(pool: pg.Pool, rail: string, customerCode: string): Promise<DedicatedAccountView | undefined> {
  const { rows } = await pool.query<{
    organization_id: string;
    environment: string;
    status: DedicatedAccountView['status'];
    account_number: string | null;
    account_name: string | null;
    bank_name: string | null;
  }>(`select * from ${PAYMENT_ACCOUNTS_TABLE} where customer_code = $1 and rail = $2`, [customerCode, rail]);
  if (rows.length === 0) return undefined;
  const row = rows[0];
  return {
    organizationId: row.organization_id,
    environment: row.environment,
    status: row.status,
    accountNumber: row.account_number,
    accountName: row.account_name,
    bankName: row.bank_name,
  };
}
