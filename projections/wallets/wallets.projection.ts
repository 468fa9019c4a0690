import type pg from 'pg';
import { asDomainEvent } from '../../src/common/event.js';
import type { Environment } from '../../src/common/environment.js';
import { CATEGORIES, streams } from '../../src/common/streams.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { occurredAt } from '../../src/organizations/occurred-at.js';
import type { WalletEvent } from '../../src/wallets/wallet.events.js';
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
  name: 'wallets',
  categories: [CATEGORIES.wallet],
  tables: ['wallets', 'wallet_reservations'],
  async handle(recorded: RecordedEvent, context: ProjectionContext): Promise<void> {
    const event = asDomainEvent<WalletEvent>(recorded);
    assertOwnStream(recorded, event);
    const wallets = context.table('wallets');
    const reservations = context.table('wallet_reservations');
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
};

async function closeReservation(context: ProjectionContext, table: string, recorded: RecordedEvent, reference: string, organizationId: string, environment: string): Promise<void> {
  const closed = await context.query(`delete from ${table} where reference = $1 and organization_id = $2 and environment = $3 returning reference`, [reference, organizationId, environment]);
  if (closed.length !== 1) throw new WalletProjectionError(`${recorded.type} at position ${recorded.position} closes a reservation that is not open`);
}

export interface WalletBalanceRow {
  readonly balanceKobo: number;
  readonly reservedKobo: number;
  readonly availableKobo: number;
}

/** The read side of `wallets`: zeros for a wallet with no event yet. */
export async function readWalletBalance(pool: pg.Pool, organizationId: string, environment: Environment): Promise<WalletBalanceRow> {
  const { rows } = await pool.query<{ balance_kobo: string; reserved_kobo: string }>(
    'select balance_kobo, reserved_kobo from wallets where organization_id = $1 and environment = $2',
    [organizationId, environment],
  );
  const balanceKobo = Number(rows[0]?.balance_kobo ?? 0);
  const reservedKobo = Number(rows[0]?.reserved_kobo ?? 0);
  return { balanceKobo, reservedKobo, availableKobo: balanceKobo - reservedKobo };
}
