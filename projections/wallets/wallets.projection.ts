import { asDomainEvent } from '../../src/common/event.js';
import type { Environment } from '../../src/common/environment.js';
import { CATEGORIES, streams } from '../../src/common/streams.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { occurredAtText } from '../../src/common/event.js';
import { balanceOf, moveMoney, type WalletFigures } from '../../src/wallets/money.rule.js';
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
 * A page writes what a batch writes (each wallet once, the reservations still open at its end): a
 * few hundred rows however long the page, so the one definition serves both.
 */
export const walletsProjection: Projection = {
  name: WALLETS_PROJECTION,
  categories: [CATEGORIES.wallet],
  tables: [WALLETS_TABLE, WALLET_RESERVATIONS_TABLE],
  handle: handleWallets,
  pages: true,
};

interface WalletRow {
  readonly organizationId: string;
  readonly environment: string;
  money: WalletFigures;
  revision: bigint;
  /** The last event applied in this call (undefined while none is): its time, read once the events are folded, is the row's updated_at. */
  last: RecordedEvent | undefined;
}

interface OpenReservation {
  readonly reference: string;
  readonly organization_id: string;
  readonly environment: string;
  readonly amount_kobo: number;
  /** The reserving event, whose time is read only if the reservation is still open at the end. */
  readonly reservedBy: RecordedEvent;
}

const walletKey = (organizationId: string, environment: string) => `${organizationId}\u0000${environment}`;

/**
 * The events in five statements at most: create the missing wallet rows, lock and read every
 * wallet of the events, take out the reservations they close that were opened before them (with
 * the amounts those hold), then (after running the figures through the money rule in memory) open
 * those still open at the end and write each wallet's figures once. Whatever the rule or the
 * revisions refuse fails the call.
 */
async function handleWallets(events: readonly RecordedEvent[], context: ProjectionContext): Promise<void> {
  const wallets = context.table(WALLETS_TABLE);
  const reservations = context.table(WALLET_RESERVATIONS_TABLE);
  // Each event's wallet key is built once: a page holds tens of thousands of events, and a fresh
  // key string per lookup (built, then hashed by the Map) was a large share of this fold's time.
  const decoded = events.map((recorded) => {
    const event = asDomainEvent<WalletEvent>(recorded);
    assertOwnStream(recorded, event);
    return { recorded, event, key: walletKey(event.data.organizationId, event.data.environment) };
  });

  // The wallet rows to create, each stamped with its first event's time.
  const firsts = new Map<string, { organization_id: string; environment: string; updated_at: string }>();
  for (const { recorded, event, key } of decoded) {
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
  const rows = await context.query<{ organization_id: string; environment: string; funded_kobo: string; debited_kobo: string; reserved_kobo: string; revision: string }>(
    `select w.organization_id, w.environment, w.funded_kobo, w.debited_kobo, w.reserved_kobo, w.revision
     from ${wallets} w join jsonb_to_recordset($1::jsonb) as b(organization_id text, environment text) using (organization_id, environment)
     order by w.organization_id, w.environment
     for update of w`,
    [walletRows],
  );
  const states = new Map<string, WalletRow>();
  for (const row of rows) {
    states.set(walletKey(row.organization_id, row.environment), {
      organizationId: row.organization_id,
      environment: row.environment,
      money: { fundedKobo: Number(row.funded_kobo), debitedKobo: Number(row.debited_kobo), reservedKobo: Number(row.reserved_kobo) },
      revision: BigInt(row.revision),
      last: undefined,
    });
  }
  // Each event's row, looked up once.
  const stateOf = decoded.map(({ recorded, key }) => {
    const state = states.get(key);
    if (state === undefined) throw new Error(`invariant: wallet ${recorded.streamId} has no row`);
    return state;
  });

  // The reservations closed here that were opened before these events (replays left out): taken
  // out first, so that the money rule sees the amount each holds. One not there is not open.
  const openedHere = new Set<string>();
  const closedBefore = new Map<string, { reference: string; organization_id: string; environment: string }>();
  for (let i = 0; i < decoded.length; i++) {
    const { recorded, event } = decoded[i];
    if (recorded.revision <= stateOf[i].revision) continue;
    if (event.type === 'WalletFundsReserved') openedHere.add(event.data.reference);
    else if ((event.type === 'WalletDebited' || event.type === 'WalletReservationReleased') && !openedHere.has(event.data.reference) && !closedBefore.has(event.data.reference)) {
      closedBefore.set(event.data.reference, { reference: event.data.reference, organization_id: event.data.organizationId, environment: event.data.environment });
    }
  }
  const heldBefore = new Map<string, number>();
  if (closedBefore.size > 0) {
    const deleted = await context.query<{ reference: string; amount_kobo: string }>(
      `delete from ${reservations} r using jsonb_to_recordset($1::jsonb) as c(reference text, organization_id text, environment text)
       where r.reference = c.reference and r.organization_id = c.organization_id and r.environment = c.environment returning r.reference, r.amount_kobo`,
      [JSON.stringify([...closedBefore.values()])],
    );
    for (const row of deleted) heldBefore.set(row.reference, Number(row.amount_kobo));
  }

  // Reservations opened here and still open.
  const opened = new Map<string, OpenReservation>();
  const held = (event: WalletEvent & { data: { reference: string } }): number | null => {
    const open = opened.get(event.data.reference);
    if (open !== undefined) {
      opened.delete(event.data.reference);
      return open.organization_id === event.data.organizationId && open.environment === event.data.environment ? open.amount_kobo : null;
    }
    const before = heldBefore.get(event.data.reference);
    heldBefore.delete(event.data.reference);
    return before ?? null;
  };

  for (let i = 0; i < decoded.length; i++) {
    const { recorded, event } = decoded[i];
    const state = stateOf[i];
    if (recorded.revision <= state.revision) continue;
    if (recorded.revision !== state.revision + 1n) throw new WalletProjectionError(`wallet ${recorded.streamId} jumps from revision ${state.revision} to ${recorded.revision}`);
    let heldKobo: number | null | undefined;
    switch (event.type) {
      case 'WalletFunded':
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
        break;
      case 'WalletDebited':
      case 'WalletReservationReleased':
        heldKobo = held(event);
        break;
      default: {
        const _exhaustive: never = event;
        throw new WalletProjectionError(`unknown wallet event ${(_exhaustive as { type: string }).type}`);
      }
    }
    const moved = moveMoney(state.money, { type: event.type, amountKobo: event.data.amountKobo, heldKobo });
    if (moved.refused !== undefined) throw new WalletProjectionError(`${recorded.type} at position ${recorded.position}: ${moved.message}`);
    state.money = moved.figures;
    state.revision = recorded.revision;
    state.last = recorded;
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
  const changed = [...states.values()].filter((state): state is WalletRow & { last: RecordedEvent } => state.last !== undefined);
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
            funded_kobo: state.money.fundedKobo,
            debited_kobo: state.money.debitedKobo,
            balance_kobo: balanceOf(state.money),
            reserved_kobo: state.money.reservedKobo,
            revision: state.revision.toString(),
            updated_at: occurredAtText(state.last),
          })),
        ),
      ],
    );
  }
}
