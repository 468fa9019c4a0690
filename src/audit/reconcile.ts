import type pg from 'pg';
import { streams } from '../common/streams.js';
import type { EventStore } from '../event-store/event-store.port.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import type { WalletId } from '../wallets/wallet-ledger.port.js';
import { WALLET_PROJECTIONS } from '../wallets/wallet.read-model.js';
import { type AuditEntry, type OpenReservation, type ReplayOptions, type ReplaySummary, WalletReplay } from './wallet-replay.js';

/**
 * `--reconcile`: the replay of the log against the read models the API answers from (`wallets`,
 * `wallet_reservations`, `wallet_ledger`, `verifications`).
 *
 * The read models lag the log by design, and the wallet may be busy while this runs, so every
 * comparison is cut where both sides are complete: the `wallets` row against the replay at the
 * revision that row has applied; `wallet_ledger` up to the lower of its checkpoint and the last
 * event replayed; verifications against the debits once their projection has passed them or the
 * recovery deadline has (a charged verification whose debit is not written yet is a difference
 * only past the deadline: before it, the capture is in flight or waits for the recovery process).
 *
 * Scopes are compared on reservations only: debit and release lines take theirs from the
 * reservation they close, but lines projected before they did keep none until the ledger is rebuilt.
 *
 * Memory stays flat on a long wallet: the replay's entries go into a temporary table, batch by
 * batch, and the comparisons are SQL joins there.
 */

/**
 * The wallet projections apply every wallet event, and so must reach the wallet's newest position.
 * The verifications projection applies verification events only: its checkpoint need not ever
 * pass a wallet event, so its lag is judged per verification instead (see step 6).
 */
export const RECONCILED_PROJECTIONS = [...WALLET_PROJECTIONS, 'verifications'] as const;
/** Differences listed per check; the count covers them all. */
const MAX_LISTED = 100;
const INSERT_BATCH = 1_000;
/** Open reservations of the `wallets` snapshot read at once: they are bounded by the checks in flight. */
const MAX_SNAPSHOT_RESERVATIONS = 100_000;

export interface Difference {
  /** Which comparison: wallet_totals, open_reservations, wallet_ledger, verification_charge, reservation_past_deadline, funding_reference, projection_behind. */
  readonly check: string;
  readonly message: string;
}

export interface ReconcileOptions extends Pick<ReplayOptions, 'from' | 'onProgress'> {
  readonly recoveryDeadlineMs: number;
  /** How long to wait for the projections to reach the wallet's newest event before comparing. */
  readonly waitMs: number;
  readonly now: () => Date;
  /** Each entry to show (from `from` on), as the plain replay yields them. */
  readonly onEntry?: (entry: AuditEntry) => void | Promise<void>;
}

export interface ReconcileResult {
  readonly summary: ReplaySummary;
  /** At most MAX_LISTED per check. */
  readonly differences: readonly Difference[];
  readonly differenceCount: number;
  /** What was compared, and what was left out and why (lag, captures in flight). */
  readonly notes: readonly string[];
}

interface Listed {
  readonly rows: string[];
  readonly total: number;
}

async function listed(client: pg.PoolClient, sql: string, params: unknown[]): Promise<Listed> {
  const { rows } = await client.query<{ message: string; total: string }>(`select message, count(*) over () as total from (${sql}) d order by d.at limit ${MAX_LISTED}`, params);
  return { rows: rows.map((row) => row.message), total: Number(rows[0]?.total ?? 0) };
}

async function checkpoints(pool: pg.Pool): Promise<Map<string, bigint>> {
  const { rows } = await pool.query<{ name: string; position: string }>('select name, position from projection_checkpoints where name = any($1::text[])', [[...RECONCILED_PROJECTIONS]]);
  return new Map(rows.map((row) => [row.name, BigInt(row.position)]));
}

export async function reconcileWallet(store: EventStore, pool: pg.Pool, wallet: WalletId, options: ReconcileOptions): Promise<ReconcileResult> {
  const differences: Difference[] = [];
  let differenceCount = 0;
  const notes: string[] = [];
  const differ = (check: string, found: Listed) => {
    differenceCount += found.total;
    for (const message of found.rows) differences.push({ check, message });
    if (found.total > found.rows.length) differences.push({ check, message: `… and ${found.total - found.rows.length} more` });
  };
  const { organizationId, environment } = wallet;
  const streamId = streams.wallet(organizationId, environment);

  // 1. The read models must have seen the wallet as it is now, or the comparison says little.
  const [newest] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
  if (newest !== undefined) {
    const caughtUp = await new ProjectionWaiter(pool).waitFor(WALLET_PROJECTIONS, newest.position, options.waitMs);
    if (!caughtUp) {
      const positions = await checkpoints(pool);
      const behind = WALLET_PROJECTIONS.filter((name) => (positions.get(name) ?? -1n) < newest.position);
      differ('projection_behind', {
        rows: behind.map((name) => `projection ${name} is at position ${positions.get(name) ?? 'none'}, short of this wallet's newest event at ${newest.position} after ${options.waitMs} ms (stopped, or no projection worker running)`),
        total: behind.length,
      });
    }
  }

  // 2. The `wallets` row and its open reservations, as one snapshot.
  const snapshot = await pool.connect();
  let walletRow: { revision: string; funded_kobo: string; debited_kobo: string; balance_kobo: string; reserved_kobo: string } | undefined;
  let snapshotReservations: Array<{ reference: string; amount_kobo: string }>;
  try {
    await snapshot.query('begin isolation level repeatable read read only');
    walletRow = (await snapshot.query('select revision, funded_kobo, debited_kobo, balance_kobo, reserved_kobo from wallets where organization_id = $1 and environment = $2', [organizationId, environment])).rows[0];
    snapshotReservations = (
      await snapshot.query('select reference, amount_kobo from wallet_reservations where organization_id = $1 and environment = $2 order by reference limit $3', [
        organizationId,
        environment,
        MAX_SNAPSHOT_RESERVATIONS + 1,
      ])
    ).rows;
    await snapshot.query('commit');
  } finally {
    snapshot.release();
  }

  // 3. The replay, into a temporary table of this session (a connection of its own, closed after).
  const client = await pool.connect();
  try {
    await client.query(`create temporary table audit_entries (
      revision bigint primary key, position bigint not null, entry_type text not null, reference text not null, scope text,
      amount_kobo bigint not null, balance_kobo bigint not null, reserved_kobo bigint not null, available_kobo bigint not null, occurred_at timestamptz not null)`);
    let batch: AuditEntry[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const rows = batch;
      batch = [];
      await client.query(
        `insert into audit_entries select * from unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::timestamptz[])`,
        [
          rows.map((row) => row.revision.toString()),
          rows.map((row) => row.position.toString()),
          rows.map((row) => row.entryType),
          rows.map((row) => row.reference),
          rows.map((row) => row.scope),
          rows.map((row) => row.amountKobo),
          rows.map((row) => row.balanceKobo),
          rows.map((row) => row.reservedKobo),
          rows.map((row) => row.availableKobo),
          rows.map((row) => row.occurredAt.toISOString()),
        ],
      );
    };
    const openAtEnd: OpenReservation[] = [];
    const observed = new WalletReplay(store, wallet, {
      from: options.from,
      onProgress: options.onProgress,
      observe: async (entry) => {
        batch.push(entry);
        if (batch.length >= INSERT_BATCH) await flush();
      },
      onOpenReservation: (reservation) => openAtEnd.push(reservation),
    });
    for await (const entry of observed.entries()) await options.onEntry?.(entry);
    await flush();
    const summary = observed.summary;
    await client.query('analyze audit_entries');
    const lastPosition = summary.lastPosition ?? '0';
    const lastRevision = summary.lastRevision === null ? -1n : BigInt(summary.lastRevision);
    const now = options.now();
    const deadline = new Date(now.getTime() - options.recoveryDeadlineMs);

    // 4. `wallets` against the replay at the revision the row has applied.
    if (walletRow === undefined) {
      if (lastRevision >= 0n) differ('wallet_totals', { rows: ['the wallets read model has no row for this wallet'], total: 1 });
    } else {
      const revision = BigInt(walletRow.revision);
      if (revision > lastRevision) {
        differ('wallet_totals', { rows: [`the wallets read model has applied revision ${revision}, beyond the log's last revision ${lastRevision}`], total: 1 });
      } else {
        const { rows } = await client.query<{ funded: string; debited: string; reserved: string }>(
          `select coalesce(sum(amount_kobo) filter (where entry_type = 'funding'), 0) as funded,
                  coalesce(sum(amount_kobo) filter (where entry_type = 'debit'), 0) as debited,
                  coalesce(sum(case entry_type when 'reservation' then amount_kobo when 'funding' then 0 else -amount_kobo end), 0) as reserved
           from audit_entries where revision <= $1`,
          [revision.toString()],
        );
        const replayed = { funded: Number(rows[0].funded), debited: Number(rows[0].debited), reserved: Number(rows[0].reserved) };
        const model = { funded: Number(walletRow.funded_kobo), debited: Number(walletRow.debited_kobo), balance: Number(walletRow.balance_kobo), reserved: Number(walletRow.reserved_kobo) };
        const mismatches: string[] = [];
        const compare = (what: string, log: number, readModel: number) => {
          if (log !== readModel) mismatches.push(`${what} at revision ${revision}: log ${log} kobo, wallets read model ${readModel} kobo`);
        };
        compare('funded', replayed.funded, model.funded);
        compare('debited', replayed.debited, model.debited);
        compare('balance', replayed.funded - replayed.debited, model.balance);
        compare('reserved', replayed.reserved, model.reserved);
        differ('wallet_totals', { rows: mismatches, total: mismatches.length });
        notes.push(`wallets: compared at revision ${revision} (the revision its row has applied)`);

        // The open reservations at that revision, against the read model's.
        const open = await client.query<{ reference: string; amount_kobo: string }>(
          `select r.reference, r.amount_kobo from audit_entries r
           where r.entry_type = 'reservation' and r.revision <= $1
             and not exists (select 1 from audit_entries c where c.reference = r.reference and c.entry_type in ('debit', 'release') and c.revision > r.revision and c.revision <= $1)
           order by r.reference`,
          [revision.toString()],
        );
        if (snapshotReservations.length > MAX_SNAPSHOT_RESERVATIONS) {
          differ('open_reservations', { rows: [`the read model holds more than ${MAX_SNAPSHOT_RESERVATIONS} open reservations for this wallet`], total: 1 });
        } else {
          const fromLog = new Map(open.rows.map((row) => [row.reference, row.amount_kobo]));
          const fromModel = new Map(snapshotReservations.map((row) => [row.reference, row.amount_kobo]));
          const mismatched: string[] = [];
          for (const [reference, amount] of fromLog) {
            const held = fromModel.get(reference);
            if (held === undefined) mismatched.push(`${reference}: open in the log (${amount} kobo), not in wallet_reservations`);
            else if (held !== amount) mismatched.push(`${reference}: ${amount} kobo in the log, ${held} in wallet_reservations`);
          }
          for (const [reference, amount] of fromModel) if (!fromLog.has(reference)) mismatched.push(`${reference}: in wallet_reservations (${amount} kobo), not open in the log`);
          differ('open_reservations', { rows: mismatched.slice(0, MAX_LISTED), total: mismatched.length });
        }
      }
    }

    // 5. `wallet_ledger`, line by line, where both sides are complete.
    const positions = await checkpoints(pool);
    const ledgerCut = [positions.get('wallet-ledger') ?? 0n, BigInt(lastPosition)].reduce((a, b) => (a < b ? a : b));
    differ(
      'wallet_ledger',
      await listed(
        client,
        `select case
             when l.event_position is null then format('position %s (revision %s): %s %s of %s kobo is in the log, not in wallet_ledger', e.position, e.revision, e.entry_type, e.reference, e.amount_kobo)
             when e.position is null then format('position %s: wallet_ledger has a %s %s of %s kobo that is not in the log', l.event_position, l.entry_type, l.reference, l.amount_kobo)
             else format('position %s (revision %s): log %s %s %s kobo, balance %s, reserved %s, available %s, scope %s; wallet_ledger %s %s %s kobo, balance %s, reserved %s, available %s, scope %s',
               e.position, e.revision, e.entry_type, e.reference, e.amount_kobo, e.balance_kobo, e.reserved_kobo, e.available_kobo, coalesce(e.scope, '-'),
               l.entry_type, l.reference, l.amount_kobo, l.balance_kobo, l.reserved_kobo, l.available_kobo, coalesce(l.scope, '-'))
           end as message, coalesce(e.position, l.event_position) as at
         from (select * from audit_entries where position <= $3) e
         full join (select * from wallet_ledger where organization_id = $1 and environment = $2 and event_position <= $3) l on l.event_position = e.position
         where e.position is null or l.event_position is null
            or (e.entry_type, e.reference, e.amount_kobo, e.balance_kobo, e.reserved_kobo, e.available_kobo, case when e.entry_type = 'reservation' then coalesce(e.scope, '') else '' end)
               is distinct from (l.entry_type, l.reference, l.amount_kobo, l.balance_kobo, l.reserved_kobo, l.available_kobo, case when l.entry_type = 'reservation' then coalesce(l.scope, '') else '' end)
         order by at`,
        [organizationId, environment, ledgerCut.toString()],
      ),
    );
    notes.push(`wallet_ledger: compared up to position ${ledgerCut}`);

    // 6. Each charged verification has exactly one debit of its price; an uncharged one none. A
    // verification fact older than the recovery deadline must show in the read model by now;
    // a younger one may still be on its way (projection lag, a capture in flight).
    const verificationsAt = positions.get('verifications') ?? 0n;
    const params = [organizationId, environment, verificationsAt.toString(), deadline.toISOString()];
    differ(
      'verification_charge',
      await listed(
        client,
        `with debits as (
           select reference, count(*) as debits, sum(amount_kobo) as debited_kobo, min(position) as first_position, min(occurred_at) as first_at
           from audit_entries where entry_type = 'debit' group by reference),
         verifications as (
           select reference, status, charged, price_kobo, completed_at from verifications where organization_id = $1 and environment = $2)
         select format('%s: debited %s times (%s kobo in all)', d.reference, d.debits, d.debited_kobo) as message, d.reference as at
           from debits d where d.debits > 1
         union all
         select format('%s: charged %s kobo, but the log has no debit (completed at %s, past the recovery deadline)', v.reference, v.price_kobo, v.completed_at), v.reference
           from verifications v left join debits d using (reference)
           where v.charged and d.reference is null and v.completed_at < $4::timestamptz
         union all
         select format('%s: charged %s kobo, debited %s kobo', v.reference, v.price_kobo, d.debited_kobo), v.reference
           from verifications v join debits d using (reference) where v.charged and d.debits = 1 and d.debited_kobo <> v.price_kobo
         union all
         select format('%s: %s and not charged, but debited %s kobo at position %s', v.reference, v.status, d.debited_kobo, d.first_position), v.reference
           from verifications v join debits d using (reference)
           where not v.charged and (v.status = 'failed' or d.first_position <= $3::bigint or d.first_at < $4::timestamptz)
         union all
         select format('%s: debited %s kobo at position %s, but the verifications read model has no such verification of this wallet', d.reference, d.debited_kobo, d.first_position), d.reference
           from debits d left join verifications v using (reference)
           where v.reference is null and (d.first_position <= $3::bigint or d.first_at < $4::timestamptz)
         order by at`,
        params,
      ),
    );
    const { rows: inFlight } = await client.query<{ count: string }>(
      `select count(*) from verifications v where v.organization_id = $1 and v.environment = $2 and v.charged and v.completed_at >= $3::timestamptz
         and not exists (select 1 from audit_entries d where d.entry_type = 'debit' and d.reference = v.reference)`,
      [organizationId, environment, deadline.toISOString()],
    );
    if (Number(inFlight[0].count) > 0) notes.push(`${inFlight[0].count} charged verification(s) completed within the recovery deadline have no debit yet (capture in flight): not counted`);
    notes.push(`verifications: read model at position ${verificationsAt}`);

    // 7. No reservation open past the recovery deadline, and no funding reference credited twice.
    const stale = openAtEnd.filter((reservation) => reservation.reservedAt < deadline).sort((a, b) => (a.revision < b.revision ? -1 : 1));
    differ('reservation_past_deadline', {
      rows: stale.slice(0, MAX_LISTED).map((reservation) => `${reservation.reference}: ${reservation.amountKobo} kobo reserved at ${reservation.reservedAt.toISOString()} (revision ${reservation.revision}) is still open past the recovery deadline`),
      total: stale.length,
    });
    differ(
      'funding_reference',
      await listed(
        client,
        `select format('funding reference %s credited %s times', reference, count(*)) as message, reference as at from audit_entries where entry_type = 'funding' group by reference having count(*) > 1 order by reference`,
        [],
      ),
    );
    return { summary, differences, differenceCount, notes };
  } finally {
    // The temporary table goes with the connection.
    client.release(true);
  }
}
