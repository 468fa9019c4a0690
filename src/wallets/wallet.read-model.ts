import type pg from 'pg';
import type { Environment } from '../common/environment.js';
import { isoWithOffset } from '../common/time.js';
import { prepared } from '../database/prepared.js';

/**
 * The wallet read models the API serves: their projections' names and tables (projections/wallets
 * and projections/wallet-ledger fill them) and the queries that read them.
 */
export const WALLETS_PROJECTION = 'wallets';
/** Running totals per wallet. */
export const WALLETS_TABLE = 'wallets';
/** The open reservations, which the recovery process scans by age. */
export const WALLET_RESERVATIONS_TABLE = 'wallet_reservations';

export const WALLET_LEDGER_PROJECTION = 'wallet-ledger';
/** One row per wallet event, as a statement line. */
export const WALLET_LEDGER_TABLE = 'wallet_ledger';
/** The kinds of ledger rows (`wallet_ledger.entry_type`), which the auditor's replay shows too. */
export const WALLET_ENTRY_TYPES = ['funding', 'reservation', 'debit', 'release'] as const;
export type WalletEntryType = (typeof WALLET_ENTRY_TYPES)[number];

/** Read-your-writes after a funding: the admin and integrator balance reads come from these. */
export const WALLET_PROJECTIONS = [WALLETS_PROJECTION, WALLET_LEDGER_PROJECTION] as const;

export interface WalletBalanceRow {
  readonly balanceKobo: number;
  readonly reservedKobo: number;
  readonly availableKobo: number;
}

/** The read side of `wallets`: zeros for a wallet with no event yet. */
export async function readWalletBalance(pool: pg.Pool, organizationId: string, environment: Environment): Promise<WalletBalanceRow> {
  const { rows } = await pool.query<{ balance_kobo: string; reserved_kobo: string }>(
    prepared(`select balance_kobo, reserved_kobo from ${WALLETS_TABLE} where organization_id = $1 and environment = $2`, [organizationId, environment]),
  );
  const balanceKobo = Number(rows[0]?.balance_kobo ?? 0);
  const reservedKobo = Number(rows[0]?.reserved_kobo ?? 0);
  return { balanceKobo, reservedKobo, availableKobo: balanceKobo - reservedKobo };
}

export interface TransactionView {
  readonly type: string;
  readonly reference: string;
  readonly scope: string | null;
  readonly amountKobo: number;
  readonly balanceKobo: number;
  readonly reservedKobo: number;
  readonly availableKobo: number;
  readonly createdAt: string;
}

interface LedgerRow {
  entry_type: string;
  reference: string;
  scope: string | null;
  amount_kobo: string;
  balance_kobo: string;
  reserved_kobo: string;
  available_kobo: string;
  occurred_at: Date;
}

/** One page of a wallet's `wallet_ledger` rows, most recent first, and the wallet's number of rows. */
export async function readWalletTransactions(
  pool: pg.Pool,
  organizationId: string,
  environment: Environment,
  page: number,
  pageSize: number,
): Promise<{ total: number; transactions: TransactionView[] }> {
  const wallet = [organizationId, environment];
  // One row per wallet event, on the ledger's primary key: an index-only count and an ordered index scan.
  const counted = await pool.query<{ total: string }>(`select count(*) as total from ${WALLET_LEDGER_TABLE} where organization_id = $1 and environment = $2`, wallet);
  const total = Number(counted.rows[0].total);
  const { rows } = await pool.query<LedgerRow>(
    `select entry_type, reference, scope, amount_kobo, balance_kobo, reserved_kobo, available_kobo, occurred_at from ${WALLET_LEDGER_TABLE}
      where organization_id = $1 and environment = $2 order by event_position desc limit $3 offset $4`,
    [...wallet, pageSize, (page - 1) * pageSize],
  );
  const transactions = rows.map((row) => ({
    type: row.entry_type,
    reference: row.reference,
    scope: row.scope,
    amountKobo: Number(row.amount_kobo),
    balanceKobo: Number(row.balance_kobo),
    reservedKobo: Number(row.reserved_kobo),
    availableKobo: Number(row.available_kobo),
    createdAt: isoWithOffset(row.occurred_at),
  }));
  return { total, transactions };
}
