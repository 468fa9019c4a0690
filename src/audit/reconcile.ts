import type pg from 'pg';
import { streams } from '../common/streams.js';
import type { EventStore } from '../event-store/event-store.port.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import type { WalletId } from '../wallets/wallet-ledger.port.js';
import { balanceOf, moveMoney, NO_MONEY, type WalletFigures } from '../wallets/money.rule.js';
import type { WalletEvent } from '../wallets/wallet.events.js';
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
 * Time is linear and memory flat in the wallet's length: the `wallets` row is compared with the
 * figures the replay had at that row's revision, wallet_ledger is merged with the replay in position
 * order as both are read, and only debits and fundings go into a temporary table, batch by batch,
 * for the comparisons by reference (hash joins there).
 */

/**
 * The wallet projections apply every wallet event, and so must reach the wallet's newest position.
 * The verifications projection applies verification events only: its checkpoint need not ever
 * pass a wallet event, so its lag is judged per verification instead (see step 6).
 */
export const RECONCILED_PROJECTIONS = [...WALLET_PROJECTIONS, 'verifications'] as const;
/** Differences listed per check; the count covers them all. */
const MAX_LISTED = 100;
/** Rows of the temporary table per insert, and inserts sent before the first of them must have finished. */
const INSERT_BATCH = 5_000;
const INSERTS_IN_FLIGHT = 2;
/** wallet_ledger rows read at once while matching; the next page is read while this one is matched. */
const LEDGER_PAGE = 5_000;
/** Open reservations of the `wallets` snapshot read at once: they are bounded by the checks in flight. */
const MAX_SNAPSHOT_RESERVATIONS = 100_000;

export interface Difference {
  /** Which comparison: wallet_totals, open_reservations, wallet_ledger, verification_charge, reservation_past_deadline, funding_reference, projection_behind. */
  readonly check: string;
  readonly message: string;
}

export interface ReconcileOptions extends Pick<ReplayOptions, 'from' | 'onProgress' | 'readPage' | 'readPages' | 'readHashedPages'> {
  readonly recoveryDeadlineMs: number;
  /** How long to wait for the projections to reach the wallet's newest event before comparing. */
  readonly waitMs: number;
  readonly now: () => Date;
  /** Each page of entries to show (from `from` on), as the plain replay yields them. */
  readonly onPage?: (entries: readonly AuditEntry[]) => void | Promise<void>;
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
  const { rows } = await pool.query<{ name: string; position: string }>('select name, position from projection_checkpoints where name = any($1::text[])', [
    [...RECONCILED_PROJECTIONS],
  ]);
  return new Map(rows.map((row) => [row.name, BigInt(row.position)]));
}

/**
 * The replay's debits and fundings into the session's temporary table `audit_charges`, in batches
 * sent without waiting for the one before (PostgreSQL inserts while the replay goes on), at most
 * INSERTS_IN_FLIGHT at once.
 */
class ChargeWriter {
  private batch: AuditEntry[] = [];
  private readonly inFlight: Promise<unknown>[] = [];

  constructor(private readonly client: pg.PoolClient) {}

  /** Returns a promise only when the caller must wait for an insert before going on. */
  add(entry: AuditEntry): Promise<void> | undefined {
    this.batch.push(entry);
    if (this.batch.length < INSERT_BATCH) return undefined;
    return this.send();
  }

  async close(): Promise<void> {
    await this.send();
    await Promise.all(this.inFlight.splice(0));
  }

  private async send(): Promise<void> {
    const rows = this.batch;
    this.batch = [];
    if (rows.length > 0) {
      const insert = this.client.query('insert into audit_charges select * from unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::timestamptz[])', [
        rows.map((row) => row.entryType),
        rows.map((row) => row.reference),
        rows.map((row) => row.amountKobo),
        rows.map((row) => row.position.toString()),
        rows.map((row) => row.occurredAt.toISOString()),
      ]);
      // Observed at once, so that a failure is not unhandled while it waits its turn; rethrown below.
      insert.catch(() => undefined);
      this.inFlight.push(insert);
    }
    while (this.inFlight.length >= INSERTS_IN_FLIGHT) await this.inFlight.shift();
  }
}

interface LedgerRow {
  readonly event_position: string;
  readonly entry_type: string;
  readonly reference: string;
  readonly amount_kobo: string;
  readonly balance_kobo: string;
  readonly reserved_kobo: string;
  readonly available_kobo: string;
  readonly scope: string | null;
}

/**
 * wallet_ledger against the replay, line by line, as a merge of two lists in position order: the
 * replay's entries as they come, and the ledger's rows read alongside in pages (keyset on the primary
 * key, the next page read while this one is matched), so that time is linear and memory flat in the
 * wallet's length. Only rows up to `checkpoint` (the projection's, read before the replay) are
 * complete; the cut is the lower of it and the last position replayed.
 */
class LedgerMatch {
  private readonly messages: string[] = [];
  private total = 0;
  private page: LedgerRow[] = [];
  private index = 0;
  private next: Promise<LedgerRow[]> | undefined;
  private readAfter = -1n;
  private exhausted = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly wallet: WalletId,
    private readonly checkpoint: bigint,
  ) {
    this.next = this.read();
  }

  cut(lastPosition: bigint): bigint {
    return this.checkpoint < lastPosition ? this.checkpoint : lastPosition;
  }

  /** Matches one entry; returns a promise only when the next page of the ledger must be waited for. */
  match(entry: AuditEntry): Promise<void> | undefined {
    if (entry.position > this.checkpoint) return undefined;
    for (;;) {
      const row = this.current();
      if (row === undefined) {
        if (!this.exhausted) return this.turnPage().then(() => this.match(entry));
        this.notInLedger(entry);
        return undefined;
      }
      const position = BigInt(row.event_position);
      if (position < entry.position) {
        this.notInLog(row);
        this.index++;
        continue;
      }
      if (position > entry.position) {
        this.notInLedger(entry);
        return undefined;
      }
      this.index++;
      this.compare(entry, row);
      return undefined;
    }
  }

  /** The rows left up to the cut are not in the log. */
  async finish(lastPosition: bigint): Promise<Listed> {
    const cut = this.cut(lastPosition);
    for (;;) {
      const row = this.current();
      if (row === undefined) {
        if (this.exhausted) break;
        await this.turnPage();
        continue;
      }
      if (BigInt(row.event_position) > cut) break;
      this.notInLog(row);
      this.index++;
    }
    await this.next?.catch(() => undefined);
    return { rows: this.messages, total: this.total };
  }

  private compare(entry: AuditEntry, row: LedgerRow): void {
    // Scopes are compared on reservations only (see the top of this file).
    const scopeOf = (type: string, scope: string | null) => (type === 'reservation' ? (scope ?? '') : '');
    const same =
      row.entry_type === entry.entryType &&
      row.reference === entry.reference &&
      row.amount_kobo === String(entry.amountKobo) &&
      row.balance_kobo === String(entry.balanceKobo) &&
      row.reserved_kobo === String(entry.reservedKobo) &&
      row.available_kobo === String(entry.availableKobo) &&
      scopeOf(row.entry_type, row.scope) === scopeOf(entry.entryType, entry.scope);
    if (same) return;
    this.difference(
      `position ${entry.position} (revision ${entry.revision}): log ${entry.entryType} ${entry.reference} ${entry.amountKobo} kobo, balance ${entry.balanceKobo}, reserved ${entry.reservedKobo}, available ${entry.availableKobo}, scope ${entry.scope ?? '-'}; ` +
        `wallet_ledger ${row.entry_type} ${row.reference} ${row.amount_kobo} kobo, balance ${row.balance_kobo}, reserved ${row.reserved_kobo}, available ${row.available_kobo}, scope ${row.scope ?? '-'}`,
    );
  }

  private notInLedger(entry: AuditEntry): void {
    this.difference(
      `position ${entry.position} (revision ${entry.revision}): ${entry.entryType} ${entry.reference} of ${entry.amountKobo} kobo is in the log, not in wallet_ledger`,
    );
  }

  private notInLog(row: LedgerRow): void {
    this.difference(`position ${row.event_position}: wallet_ledger has a ${row.entry_type} ${row.reference} of ${row.amount_kobo} kobo that is not in the log`);
  }

  private difference(message: string): void {
    this.total++;
    if (this.messages.length < MAX_LISTED) this.messages.push(message);
  }

  private current(): LedgerRow | undefined {
    return this.page[this.index];
  }

  private async turnPage(): Promise<void> {
    const next = this.next;
    if (next === undefined) {
      this.exhausted = true;
      return;
    }
    this.page = await next;
    this.index = 0;
    this.next = this.page.length === LEDGER_PAGE ? this.read() : undefined;
    if (this.page.length === 0) this.exhausted = true;
  }

  private read(): Promise<LedgerRow[]> {
    const after = this.readAfter;
    const reading = this.pool
      .query<LedgerRow>(
        `select event_position, entry_type, reference, amount_kobo, balance_kobo, reserved_kobo, available_kobo, scope from wallet_ledger
         where organization_id = $1 and environment = $2 and event_position > $3 and event_position <= $4 order by event_position limit $5`,
        [this.wallet.organizationId, this.wallet.environment, after.toString(), this.checkpoint.toString(), LEDGER_PAGE],
      )
      .then(({ rows }) => {
        const last = rows.at(-1);
        if (last !== undefined) this.readAfter = BigInt(last.event_position);
        return rows;
      });
    reading.catch(() => undefined);
    return reading;
  }
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
        rows: behind.map(
          (name) =>
            `projection ${name} is at position ${positions.get(name) ?? 'none'}, short of this wallet's newest event at ${newest.position} after ${options.waitMs} ms (stopped, or no projection worker running)`,
        ),
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
    walletRow = (
      await snapshot.query<NonNullable<typeof walletRow>>(
        'select revision, funded_kobo, debited_kobo, balance_kobo, reserved_kobo from wallets where organization_id = $1 and environment = $2',
        [organizationId, environment],
      )
    ).rows[0];
    snapshotReservations = (
      await snapshot.query<{ reference: string; amount_kobo: string }>(
        'select reference, amount_kobo from wallet_reservations where organization_id = $1 and environment = $2 order by reference limit $3',
        [organizationId, environment, MAX_SNAPSHOT_RESERVATIONS + 1],
      )
    ).rows;
    await snapshot.query('commit');
  } finally {
    snapshot.release();
  }

  // 3. The replay, compared as it goes: the `wallets` row's revision and wallet_ledger are matched
  // entry by entry (ledger.ts reads wallet_ledger alongside, in position order); debits and fundings
  // go into a temporary table of this session (a connection of its own, closed after) for the
  // comparisons by reference, which are SQL joins there.
  const ledgerCheckpoint = (await checkpoints(pool)).get('wallet-ledger') ?? 0n;
  const client = await pool.connect();
  try {
    // Every comparison below joins whole sets on equality, where a hash join is linear; a nested
    // loop, which the planner picks when the read models' statistics lag a bulk load, made
    // --reconcile quadratic (76 s for a 50,000-event wallet on a 2-core virtual machine; its time
    // now, with the machine, in docs/benchmarks.md's audit rows). The session is this command's own.
    await client.query("set enable_nestloop = off; set work_mem = '64MB'; set jit = off");
    await client.query(`create temporary table audit_charges (
      entry_type text not null, reference text not null, amount_kobo bigint not null, position bigint not null, occurred_at timestamptz not null)`);
    const charges = new ChargeWriter(client);
    const ledger = new LedgerMatch(pool, wallet, ledgerCheckpoint);
    const rowRevision = walletRow === undefined ? -1n : BigInt(walletRow.revision);
    // The figures at the row's revision, moved by the one money rule (the replay reports what it
    // refuses; here only the figures count, so reservations are not handed over).
    let atRow: WalletFigures = NO_MONEY;
    const openAtRow = new Map<string, number>();
    const openAtEnd: OpenReservation[] = [];
    const observed = new WalletReplay(store, wallet, {
      from: options.from,
      onProgress: options.onProgress,
      readPage: options.readPage,
      readPages: options.readPages,
      readHashedPages: options.readHashedPages,
      observe: (entry) => {
        if (entry.revision <= rowRevision) {
          atRow = moveMoney(atRow, { type: entry.eventType as WalletEvent['type'], amountKobo: entry.amountKobo }).figures;
          if (entry.entryType === 'reservation') openAtRow.set(entry.reference, entry.amountKobo);
          else if (entry.entryType !== 'funding') openAtRow.delete(entry.reference);
        }
        const written = entry.entryType === 'debit' || entry.entryType === 'funding' ? charges.add(entry) : undefined;
        const matched = ledger.match(entry);
        if (written === undefined) return matched;
        if (matched === undefined) return written;
        return Promise.all([written, matched]).then(() => undefined);
      },
      onOpenReservation: (reservation) => openAtEnd.push(reservation),
    });
    for await (const page of observed.pages()) await options.onPage?.(page);
    await charges.close();
    const summary = observed.summary;
    await client.query('analyze audit_charges');
    const lastPosition = summary.lastPosition === null ? 0n : BigInt(summary.lastPosition);
    const lastRevision = summary.lastRevision === null ? -1n : BigInt(summary.lastRevision);
    const ledgerFound = await ledger.finish(lastPosition);
    const now = options.now();
    const deadline = new Date(now.getTime() - options.recoveryDeadlineMs);

    // 4. `wallets` against the replay at the revision the row has applied.
    if (walletRow === undefined) {
      if (lastRevision >= 0n) differ('wallet_totals', { rows: ['the wallets read model has no row for this wallet'], total: 1 });
    } else {
      const revision = rowRevision;
      if (revision > lastRevision) {
        differ('wallet_totals', { rows: [`the wallets read model has applied revision ${revision}, beyond the log's last revision ${lastRevision}`], total: 1 });
      } else {
        const replayed = { funded: atRow.fundedKobo, debited: atRow.debitedKobo, reserved: atRow.reservedKobo };
        const model = {
          funded: Number(walletRow.funded_kobo),
          debited: Number(walletRow.debited_kobo),
          balance: Number(walletRow.balance_kobo),
          reserved: Number(walletRow.reserved_kobo),
        };
        const mismatches: string[] = [];
        const compare = (what: string, log: number, readModel: number) => {
          if (log !== readModel) mismatches.push(`${what} at revision ${revision}: log ${log} kobo, wallets read model ${readModel} kobo`);
        };
        compare('funded', replayed.funded, model.funded);
        compare('debited', replayed.debited, model.debited);
        compare('balance', balanceOf(atRow), model.balance);
        compare('reserved', replayed.reserved, model.reserved);
        differ('wallet_totals', { rows: mismatches, total: mismatches.length });
        notes.push(`wallets: compared at revision ${revision} (the revision its row has applied)`);

        // The open reservations at that revision, against the read model's.
        if (snapshotReservations.length > MAX_SNAPSHOT_RESERVATIONS) {
          differ('open_reservations', { rows: [`the read model holds more than ${MAX_SNAPSHOT_RESERVATIONS} open reservations for this wallet`], total: 1 });
        } else {
          const fromLog = new Map([...openAtRow].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([reference, amount]) => [reference, String(amount)]));
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

    // 5. `wallet_ledger`, line by line, where both sides are complete (matched during the replay).
    differ('wallet_ledger', ledgerFound);
    notes.push(`wallet_ledger: compared up to position ${ledger.cut(lastPosition)}`);
    const positions = await checkpoints(pool);

    // 6. Each charged verification has exactly one debit of its price; an uncharged one none. A
    // verification fact older than the recovery deadline must show in the read model by now;
    // a younger one may still be on its way (projection lag, a capture in flight).
    const verificationsAt = positions.get('verifications') ?? 0n;
    // One full join of the log's debits (per reference) with this wallet's verifications, each row
    // classified once; the conditions are those of the comment above, the messages at most
    // MAX_LISTED, all counted.
    const { rows: charged } = await client.query<{ total: string; in_flight: string; messages: string[] }>(
      `with debits as (
         select reference, count(*) as debits, sum(amount_kobo) as debited_kobo, min(position) as first_position, min(occurred_at) as first_at
         from audit_charges where entry_type = 'debit' group by reference),
       joined as (
         select coalesce(d.reference, v.reference) as reference, d.debits, d.debited_kobo, d.first_position, d.first_at,
                v.reference is not null as known, v.status, v.charged, v.price_kobo, v.completed_at
         from debits d full join (select reference, status, charged, price_kobo, completed_at from verifications where organization_id = $1 and environment = $2) v using (reference)),
       found as (
         select m.message, j.reference as at from joined j cross join lateral (values
           (case when j.debits > 1 then format('%s: debited %s times (%s kobo in all)', j.reference, j.debits, j.debited_kobo) end),
           (case when j.known and j.charged and j.debits is null and j.completed_at < $4::timestamptz
                 then format('%s: charged %s kobo, but the log has no debit (completed at %s, past the recovery deadline)', j.reference, j.price_kobo, j.completed_at) end),
           (case when j.known and j.charged and j.debits = 1 and j.debited_kobo <> j.price_kobo then format('%s: charged %s kobo, debited %s kobo', j.reference, j.price_kobo, j.debited_kobo) end),
           (case when j.known and not j.charged and j.debits is not null and (j.status = 'failed' or j.first_position <= $3::bigint or j.first_at < $4::timestamptz)
                 then format('%s: %s and not charged, but debited %s kobo at position %s', j.reference, j.status, j.debited_kobo, j.first_position) end),
           (case when not j.known and (j.first_position <= $3::bigint or j.first_at < $4::timestamptz)
                 then format('%s: debited %s kobo at position %s, but the verifications read model has no such verification of this wallet', j.reference, j.debited_kobo, j.first_position) end)
         ) m(message)
         -- Rows that can have no message are left before the messages are formatted.
         where m.message is not null and (j.debits > 1 or (j.known and j.charged and (j.debits is null or j.debited_kobo <> j.price_kobo)) or (j.known and not j.charged and j.debits is not null) or not j.known))
       select (select count(*) from found) as total,
              (select count(*) from joined where known and charged and debits is null and completed_at >= $4::timestamptz) as in_flight,
              array(select message from found order by at limit ${MAX_LISTED}) as messages`,
      [organizationId, environment, verificationsAt.toString(), deadline.toISOString()],
    );
    differ('verification_charge', { rows: charged[0].messages, total: Number(charged[0].total) });
    const inFlight = Number(charged[0].in_flight);
    if (inFlight > 0) notes.push(`${inFlight} charged verification(s) completed within the recovery deadline have no debit yet (capture in flight): not counted`);
    notes.push(`verifications: read model at position ${verificationsAt}`);

    // 7. No reservation open past the recovery deadline, and no funding reference credited twice.
    const stale = openAtEnd.filter((reservation) => reservation.reservedAt < deadline).sort((a, b) => (a.revision < b.revision ? -1 : 1));
    differ('reservation_past_deadline', {
      rows: stale
        .slice(0, MAX_LISTED)
        .map(
          (reservation) =>
            `${reservation.reference}: ${reservation.amountKobo} kobo reserved at ${reservation.reservedAt.toISOString()} (revision ${reservation.revision}) is still open past the recovery deadline`,
        ),
      total: stale.length,
    });
    differ(
      'funding_reference',
      await listed(
        client,
        `select format('funding reference %s credited %s times', reference, count(*)) as message, reference as at from audit_charges where entry_type = 'funding' group by reference having count(*) > 1 order by reference`,
        [],
      ),
    );
    return { summary, differences, differenceCount, notes };
  } finally {
    // The temporary table goes with the connection.
    client.release(true);
  }
}
