import { asDomainEvent } from '../../src/common/event.js';
import type { Environment } from '../../src/common/environment.js';
import { CATEGORIES, streams } from '../../src/common/streams.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { occurredAt, occurredAtText } from '../../src/common/event.js';
import type { WalletEvent } from '../../src/wallets/wallet.events.js';
import { WALLET_RESERVATIONS_TABLE, WALLETS_PROJECTION, WALLETS_TABLE } from '../../src/wallets/wallet.read-model.js';
import type { Projection, ProjectionContext } from '../projection.js';

/** A wallet event that does not fit the rows: the log or this code is wrong, and the projection must stop here. */
export class WalletProjectionError extends Error {
  readonly code = 'wallet_projection_invariant';
}

function assertOwnStream(recorded: RecordedEvent, event: WalletEvent): void {
  if (recorded.streamId !== streams.wallet(event.data.organizationId, event.data.environment as Environment)) {
    throw new WalletProjectionError(`${recorded.type} at position ${recorded.position} names another wallet than its stream`);
  }
}

/**
 * `wallets` (running totals per wallet) and `wallet_reservations` (the open reservations, which
 * the recovery process scans by age). Each wallet row records the stream revision it has applied:
 * an event at or below it is a replay and changes nothing, an event beyond the next one is a gap
 * and stops the projection. The totals are sums, so nothing short of that makes a replay safe.
 */
export const walletsProjection: Projection = {
  name: WALLETS_PROJECTION,
  categories: [CATEGORIES.wallet],
  tables: [WALLETS_TABLE, WALLET_RESERVATIONS_TABLE],
  async handle(recorded: RecordedEvent, context: ProjectionContext): Promise<void> {
    const event = asDomainEvent<WalletEvent>(recorded);
    assertOwnStream(recorded, event);
    const wallets = context.table(WALLETS_TABLE);
    const reservations = context.table(WALLET_RESERVATIONS_TABLE);
    const { organizationId, environment, amountKobo } = event.data;
    const at = occurredAt(recorded);

    await context.query(`insert into ${wallets} (organization_id, environment, updated_at) values ($1, $2, $3) on conflict do nothing`, [organizationId, environment, at]);
    const [row] = await context.query<{ revision: string }>(`select revision from ${wallets} where organization_id = $1 and environment = $2 for update`, [organizationId, environment]);
    const applied = BigInt(row.revision);
    if (recorded.revision <= applied) return;
    if (recorded.revision !== applied + 1n) {
      throw new WalletProjectionError(`wallet ${recorded.streamId} jumps from revision ${applied} to ${recorded.revision}`);
    }

    const update = (set: string) =>
      context.query(`update ${wallets} set ${set}, revision = $4, updated_at = $5 where organization_id = $1 and environment = $2`, [
        organizationId,
        environment,
        amountKobo,
        recorded.revision.toString(),
        at,
      ]);
    switch (event.type) {
      case 'WalletFunded':
        await update('funded_kobo = funded_kobo + $3, balance_kobo = balance_kobo + $3');
        return;
      case 'WalletFundsReserved':
        // A plain insert: a reference reserved twice is a broken log, and must fail loudly.
        await context.query(`insert into ${reservations} (reference, organization_id, environment, amount_kobo, reserved_at) values ($1, $2, $3, $4, $5)`, [
          event.data.reference,
          organizationId,
          environment,
          amountKobo,
          at,
        ]);
        await update('reserved_kobo = reserved_kobo + $3');
        return;
      case 'WalletDebited':
        await closeReservation(context, reservations, recorded, event.data.reference, organizationId, environment);
        await update('debited_kobo = debited_kobo + $3, balance_kobo = balance_kobo - $3, reserved_kobo = reserved_kobo - $3');
        return;
      case 'WalletReservationReleased':
        await closeReservation(context, reservations, recorded, event.data.reference, organizationId, environment);
        await update('reserved_kobo = reserved_kobo - $3');
        return;
      default: {
        const _exhaustive: never = event;
        throw new WalletProjectionError(`unknown wallet event ${(_exhaustive as { type: string }).type}`);
      }
    }
  },
  handleBatch: handleWalletBatch,
  // A page writes what a batch writes (each wallet once, the reservations still open at its end):
  // a few hundred rows however long the page, so the batch's statements serve it as they are.
  applyPage: handleWalletBatch,
};

interface WalletState {
  readonly organizationId: string;
  readonly environment: string;
  fundedKobo: bigint;
  debitedKobo: bigint;
  balanceKobo: bigint;
  reservedKobo: bigint;
  revision: bigint;
  /** The last event applied in this batch (undefined while none is): its time, read once the batch is folded, is the row's updated_at. */
  last: RecordedEvent | undefined;
}

interface OpenReservation {
  readonly reference: string;
  readonly organization_id: string;
  readonly environment: string;
  readonly amount_kobo: number;
  /** The reserving event, whose time is read only if the reservation is still open at the batch's end. */
  readonly reservedBy: RecordedEvent;
}

const walletKey = (organizationId: string, environment: string) => `${organizationId}\u0000${environment}`;

/**
 * `handle` on each event in turn, in five statements: create the missing wallet rows, lock and read
 * every wallet of the batch, then (after running the totals and reservations forward in memory)
 * close the reservations opened before the batch, open those still open after it, and write each
 * wallet's totals once. Whatever `handle` would refuse fails the batch (the runner then applies it
 * event by event and stops at the culprit).
 */
async function handleWalletBatch(events: readonly RecordedEvent[], context: ProjectionContext): Promise<void> {
  const wallets = context.table(WALLETS_TABLE);
  const reservations = context.table(WALLET_RESERVATIONS_TABLE);
  const decoded = events.map((recorded) => {
    const event = asDomainEvent<WalletEvent>(recorded);
    assertOwnStream(recorded, event);
    return { recorded, event };
  });

  // The wallet rows `handle` would create, each stamped with its first event's time.
  const firsts = new Map<string, { organization_id: string; environment: string; updated_at: string }>();
  for (const { recorded, event } of decoded) {
    const key = walletKey(event.data.organizationId, event.data.environment);
    if (!firsts.has(key)) firsts.set(key, { organization_id: event.data.organizationId, environment: event.data.environment, updated_at: occurredAtText(recorded) });
  }
  const walletRows = JSON.stringify([...firsts.values()]);
  await context.query(
    `insert into ${wallets} (organization_id, environment, updated_at)
     select organization_id, environment, updated_at from jsonb_to_recordset($1::jsonb) as w(organization_id text, environment text, updated_at timestamptz)
     order by organization_id, environment
     on conflict do nothing`,
    [walletRows],
  );
  const rows = await context.query<{ organization_id: string; environment: string; funded_kobo: string; debited_kobo: string; balance_kobo: string; reserved_kobo: string; revision: string }>(
    `select w.organization_id, w.environment, w.funded_kobo, w.debited_kobo, w.balance_kobo, w.reserved_kobo, w.revision
     from ${wallets} w join jsonb_to_recordset($1::jsonb) as b(organization_id text, environment text) using (organization_id, environment)
     order by w.organization_id, w.environment
     for update of w`,
    [walletRows],
  );
  const states = new Map<string, WalletState>();
  for (const row of rows) {
    states.set(walletKey(row.organization_id, row.environment), {
      organizationId: row.organization_id,
      environment: row.environment,
      fundedKobo: BigInt(row.funded_kobo),
      debitedKobo: BigInt(row.debited_kobo),
      balanceKobo: BigInt(row.balance_kobo),
      reservedKobo: BigInt(row.reserved_kobo),
      revision: BigInt(row.revision),
      last: undefined,
    });
  }

  // Reservations: opened in this batch (and still open), or closed (from before the batch, or in it).
  const opened = new Map<string, OpenReservation>();
  const closed = new Set<string>();
  const closedBefore: { reference: string; organization_id: string; environment: string }[] = [];
  const close = (recorded: RecordedEvent, reference: string, organizationId: string, environment: string) => {
    const open = opened.get(reference);
    if (open !== undefined) {
      if (open.organization_id !== organizationId || open.environment !== environment) throw new WalletProjectionError(`${recorded.type} at position ${recorded.position} closes a reservation that is not open`);
      opened.delete(reference);
    } else if (closed.has(reference)) {
      throw new WalletProjectionError(`${recorded.type} at position ${recorded.position} closes a reservation that is not open`);
    } else {
      closedBefore.push({ reference, organization_id: organizationId, environment });
    }
    closed.add(reference);
  };

  for (const { recorded, event } of decoded) {
    const state = states.get(walletKey(event.data.organizationId, event.data.environment));
    if (state === undefined) throw new Error(`invariant: wallet ${recorded.streamId} has no row`);
    if (recorded.revision <= state.revision) continue;
    if (recorded.revision !== state.revision + 1n) throw new WalletProjectionError(`wallet ${recorded.streamId} jumps from revision ${state.revision} to ${recorded.revision}`);
    const amountKobo = BigInt(event.data.amountKobo);
    switch (event.type) {
      case 'WalletFunded':
        state.fundedKobo += amountKobo;
        state.balanceKobo += amountKobo;
        break;
      case 'WalletFundsReserved':
        if (opened.has(event.data.reference)) throw new WalletProjectionError(`${recorded.type} at position ${recorded.position} reserves an open reference again`);
        opened.set(event.data.reference, {
          reference: event.data.reference,
          organization_id: event.data.organizationId,
          environment: event.data.environment,
          amount_kobo: event.data.amountKobo,
          reservedBy: recorded,
        });
        state.reservedKobo += amountKobo;
        break;
      case 'WalletDebited':
        close(recorded, event.data.reference, event.data.organizationId, event.data.environment);
        state.debitedKobo += amountKobo;
        state.balanceKobo -= amountKobo;
        state.reservedKobo -= amountKobo;
        break;
      case 'WalletReservationReleased':
        close(recorded, event.data.reference, event.data.organizationId, event.data.environment);
        state.reservedKobo -= amountKobo;
        break;
      default: {
        const _exhaustive: never = event;
        throw new WalletProjectionError(`unknown wallet event ${(_exhaustive as { type: string }).type}`);
      }
    }
    state.revision = recorded.revision;
    state.last = recorded;
  }

  if (closedBefore.length > 0) {
    const deleted = await context.query(
      `delete from ${reservations} r using jsonb_to_recordset($1::jsonb) as c(reference text, organization_id text, environment text)
       where r.reference = c.reference and r.organization_id = c.organization_id and r.environment = c.environment returning r.reference`,
      [JSON.stringify(closedBefore)],
    );
    if (deleted.length !== closedBefore.length) throw new WalletProjectionError('a wallet event in this batch closes a reservation that is not open');
  }
  if (opened.size > 0) {
    // A plain insert: a reference reserved twice is a broken log, and must fail loudly.
    await context.query(
      `insert into ${reservations} (reference, organization_id, environment, amount_kobo, reserved_at)
       select reference, organization_id, environment, amount_kobo, reserved_at
       from jsonb_to_recordset($1::jsonb) as r(reference text, organization_id text, environment text, amount_kobo bigint, reserved_at timestamptz)`,
      [JSON.stringify([...opened.values()].map(({ reservedBy, ...row }) => ({ ...row, reserved_at: occurredAtText(reservedBy) })))],
    );
  }
  const changed = [...states.values()].filter((state): state is WalletState & { last: RecordedEvent } => state.last !== undefined);
  if (changed.length > 0) {
    await context.query(
      `update ${wallets} w set funded_kobo = t.funded_kobo, debited_kobo = t.debited_kobo, balance_kobo = t.balance_kobo, reserved_kobo = t.reserved_kobo, revision = t.revision, updated_at = t.updated_at
       from jsonb_to_recordset($1::jsonb) as t(organization_id text, environment text, funded_kobo bigint, debited_kobo bigint, balance_kobo bigint, reserved_kobo bigint, revision bigint, updated_at timestamptz)
       where w.organization_id = t.organization_id and w.environment = t.environment`,
      [
        JSON.stringify(
          changed.map((state) => ({
            organization_id: state.organizationId,
            environment: state.environment,
            funded_kobo: state.fundedKobo.toString(),
            debited_kobo: state.debitedKobo.toString(),
            balance_kobo: state.balanceKobo.toString(),
            reserved_kobo: state.reservedKobo.toString(),
            revision: state.revision.toString(),
            updated_at: occurredAtText(state.last),
          })),
        ),
      ],
    );
  }
}

async function closeReservation(context: ProjectionContext, table: string, recorded: RecordedEvent, reference: string, organizationId: string, environment: string): Promise<void> {
  const closed = await context.query(`delete from ${table} where reference = $1 and organization_id = $2 and environment = $3 returning reference`, [reference, organizationId, environment]);
  if (closed.length !== 1) throw new WalletProjectionError(`${recorded.type} at position ${recorded.position} closes a reservation that is not open`);
}
