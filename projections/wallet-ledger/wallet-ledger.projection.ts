import { asDomainEvent } from '../../src/common/event.js';
import type { Environment } from '../../src/common/environment.js';
import { CATEGORIES, streams } from '../../src/common/streams.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { occurredAt } from '../../src/organizations/occurred-at.js';
import type { WalletEvent } from '../../src/wallets/wallet.events.js';
import type { Projection, ProjectionContext } from '../projection.js';
import { WalletProjectionError } from '../wallets/wallets.projection.js';

type EntryType = 'funding' | 'reservation' | 'debit' | 'release';

interface Entry {
  readonly entryType: EntryType;
  readonly reference: string;
  readonly scope: string | null;
  /** Changes to the running balance and reserved figures. */
  readonly balanceDeltaKobo: number;
  readonly reservedDeltaKobo: number;
}

function entryOf(event: WalletEvent): Entry {
  const amountKobo = event.data.amountKobo;
  switch (event.type) {
    case 'WalletFunded':
      return { entryType: 'funding', reference: event.data.fundingReference, scope: null, balanceDeltaKobo: amountKobo, reservedDeltaKobo: 0 };
    case 'WalletFundsReserved':
      return { entryType: 'reservation', reference: event.data.reference, scope: event.data.scope, balanceDeltaKobo: 0, reservedDeltaKobo: amountKobo };
    case 'WalletDebited':
      return { entryType: 'debit', reference: event.data.reference, scope: null, balanceDeltaKobo: -amountKobo, reservedDeltaKobo: -amountKobo };
    case 'WalletReservationReleased':
      return { entryType: 'release', reference: event.data.reference, scope: null, balanceDeltaKobo: 0, reservedDeltaKobo: -amountKobo };
    default: {
      const _exhaustive: never = event;
      throw new WalletProjectionError(`unknown wallet event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

/**
 * `wallet_ledger`: one row per wallet event, keyed by its global position, with the balance,
 * reserved and available figures after it, as a statement line. The figures run on from the
 * wallet's previous row, so a row is computed the same way however often it is applied, and a
 * replayed event finds its row already there and writes nothing.
 */
export const walletLedgerProjection: Projection = {
  name: 'wallet-ledger',
  categories: [CATEGORIES.wallet],
  tables: ['wallet_ledger'],
  async handle(recorded: RecordedEvent, context: ProjectionContext): Promise<void> {
    const event = asDomainEvent<WalletEvent>(recorded);
    const { organizationId, environment } = event.data;
    if (recorded.streamId !== streams.wallet(organizationId, environment as Environment)) {
      throw new WalletProjectionError(`${recorded.type} at position ${recorded.position} names another wallet than its stream`);
    }
    const ledger = context.table('wallet_ledger');
    const position = recorded.position.toString();
    const existing = await context.query(`select 1 from ${ledger} where organization_id = $1 and environment = $2 and event_position = $3`, [organizationId, environment, position]);
    if (existing.length > 0) return;

    const [previous] = await context.query<{ balance_kobo: string; reserved_kobo: string }>(
      `select balance_kobo, reserved_kobo from ${ledger} where organization_id = $1 and environment = $2 and event_position < $3 order by event_position desc limit 1`,
      [organizationId, environment, position],
    );
    const entry = entryOf(event);
    const balanceKobo = Number(previous?.balance_kobo ?? 0) + entry.balanceDeltaKobo;
    const reservedKobo = Number(previous?.reserved_kobo ?? 0) + entry.reservedDeltaKobo;
    const availableKobo = balanceKobo - reservedKobo;
    if (reservedKobo < 0 || availableKobo < 0) {
      throw new WalletProjectionError(`wallet ${recorded.streamId} would show a negative figure after position ${position}`);
    }
    await context.query(
      `insert into ${ledger} (organization_id, environment, event_position, entry_type, reference, amount_kobo, balance_kobo, reserved_kobo, available_kobo, scope, occurred_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [organizationId, environment, position, entry.entryType, entry.reference, event.data.amountKobo, balanceKobo, reservedKobo, availableKobo, entry.scope, occurredAt(recorded)],
    );
  },
};
