import { asDomainEvent } from '../../src/common/event.js';
import type { Environment } from '../../src/common/environment.js';
import { CATEGORIES, streams } from '../../src/common/streams.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { occurredAtText } from '../../src/common/event.js';
import { availableOf, balanceOf, lineFigures, moveMoney, type WalletFigures } from '../../src/wallets/money.rule.js';
import type { WalletEvent } from '../../src/wallets/wallet.events.js';
import { WALLET_LEDGER_PROJECTION, WALLET_LEDGER_TABLE, type WalletEntryType } from '../../src/wallets/wallet.read-model.js';
import { pageContextOf, type PageContext, type Projection, type ProjectionContext } from '../projection.js';
import { WalletProjectionError } from '../wallets/wallets.projection.js';

interface Entry {
  readonly entryType: WalletEntryType;
  readonly reference: string;
  /** The reservation's own; a debit or release takes it from the reservation it closes (see `closesReservation`). */
  readonly scope: string | null;
}

function entryOf(event: WalletEvent): Entry {
  switch (event.type) {
    case 'WalletFunded':
      return { entryType: 'funding', reference: event.data.fundingReference, scope: null };
    case 'WalletFundsReserved':
      // A reservation written before scopes were recorded has none: null, which COPY would otherwise write as the text "undefined".
      return { entryType: 'reservation', reference: event.data.reference, scope: event.data.scope ?? null };
    case 'WalletDebited':
      return { entryType: 'debit', reference: event.data.reference, scope: null };
    case 'WalletReservationReleased':
      return { entryType: 'release', reference: event.data.reference, scope: null };
    default: {
      const _exhaustive: never = event;
      throw new WalletProjectionError(`unknown wallet event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

const closesReservation = (entry: Entry): boolean => entry.entryType === 'debit' || entry.entryType === 'release';

/**
 * The scope of the reservation a debit or release at `position` closes: its line, the last
 * reservation of the reference before that position. The events carry no scope (old ones never
 * will), and the line is at hand however the ledger is built.
 *
 * The search walks the wallet's primary key back from the close, so it costs the lines written
 * while the check ran: first among the wallet's last RECENT_LINES lines before the close (an
 * ordered scan PostgreSQL stops at the reservation), then, for a reservation not found there, among
 * all of them. Asked in one go, PostgreSQL planned the whole search as a bitmap scan of every
 * earlier line of the wallet, filtered on the reference: a cost per batch that grows with the
 * wallet, enough to keep PostgreSQL busy under bench:api's paced load. An index on reservation
 * lines answers it as fast, but costs every reservation line an index entry, which slows the
 * projection's catch-up noticeably.
 */
const RECENT_LINES = 4096;

/** `$1` a JSON array of {at, organization_id, environment, event_position, reference}: the rows found, by `at`. */
const RESERVED_SCOPES = (ledger: string, recentOnly: boolean) =>
  `select b.at, r.scope
   from jsonb_to_recordset($1::jsonb) as b(at int, organization_id text, environment text, event_position bigint, reference text)
   cross join lateral (
     select l.scope from (
       select entry_type, reference, scope from ${ledger} l
       where l.organization_id = b.organization_id and l.environment = b.environment and l.event_position < b.event_position
       order by l.event_position desc${recentOnly ? ` limit ${RECENT_LINES}` : ''}) l
     where l.entry_type = 'reservation' and l.reference = b.reference
     limit 1) r`;

interface ScopeLookUp {
  readonly at: number;
  readonly organization_id: string;
  readonly environment: string;
  readonly event_position: string;
  readonly reference: string;
}

/** The scopes of the reservations `lookUps` close, by `at` (absent: no reservation line found). */
async function reservedScopes(context: Pick<ProjectionContext, 'query'>, ledger: string, lookUps: readonly ScopeLookUp[]): Promise<Map<number, string | null>> {
  const scopes = new Map<number, string | null>();
  const recent = await context.query<{ at: number; scope: string | null }>(RESERVED_SCOPES(ledger, true), [JSON.stringify(lookUps)]);
  for (const row of recent) scopes.set(row.at, row.scope);
  const older = lookUps.filter((lookUp) => !scopes.has(lookUp.at));
  if (older.length > 0) {
    for (const row of await context.query<{ at: number; scope: string | null }>(RESERVED_SCOPES(ledger, false), [JSON.stringify(older)])) scopes.set(row.at, row.scope);
  }
  return scopes;
}

/**
 * `wallet_ledger`: one row per wallet event, keyed by its global position, with the balance,
 * reserved and available figures after it, as a statement line. The figures run on from the
 * wallet's previous row through the money rule, so a row is computed the same way however often it
 * is applied, and a replayed event finds its row already there and writes nothing.
 */
export const walletLedgerProjection: Projection = {
  name: WALLET_LEDGER_PROJECTION,
  categories: [CATEGORIES.wallet],
  tables: [WALLET_LEDGER_TABLE],
  // A page's lines, nearly one per event, go in by COPY.
  handle: (events, context) => {
    const page = pageContextOf(context);
    return handleLedger(events, context, page === undefined ? insertLines : copyLines(page));
  },
  pages: true,
};

const LINE_COLUMNS = [
  'organization_id',
  'environment',
  'event_position',
  'entry_type',
  'reference',
  'amount_kobo',
  'balance_kobo',
  'reserved_kobo',
  'available_kobo',
  'scope',
  'occurred_at',
] as const;

/** A new line, its values in LINE_COLUMNS' order: the page path's COPY takes it as it is. */
type Line = readonly [
  organization_id: string,
  environment: string,
  event_position: string,
  entry_type: WalletEntryType,
  reference: string,
  amount_kobo: number,
  balance_kobo: number,
  reserved_kobo: number,
  available_kobo: number,
  scope: string | null,
  occurred_at: string,
];

/** Writes new lines: a plain insert either way, so a line already there fails the batch loudly. */
type InsertLines = (lines: readonly Line[], context: ProjectionContext) => Promise<void>;

async function insertLines(lines: readonly Line[], context: ProjectionContext): Promise<void> {
  await context.query(
    `insert into ${context.table(WALLET_LEDGER_TABLE)} (${LINE_COLUMNS.join(', ')})
     select ${LINE_COLUMNS.join(', ')}
     from jsonb_to_recordset($1::jsonb) as r(organization_id text, environment text, event_position bigint, entry_type text, reference text, amount_kobo bigint,
       balance_kobo bigint, reserved_kobo bigint, available_kobo bigint, scope text, occurred_at timestamptz)`,
    [JSON.stringify(lines.map((line) => Object.fromEntries(LINE_COLUMNS.map((column, at) => [column, line[at]]))))],
  );
}

const copyLines =
  (context: PageContext): InsertLines =>
  (lines) =>
    context.copy(WALLET_LEDGER_TABLE, LINE_COLUMNS, lines);

/**
 * The events in two statements (three on a replay, one more for scopes looked up): each wallet's
 * last line before its first event here, with whether lines from there on exist (a replay: then
 * those lines are read too), then one insert of the new lines, their figures run on in memory from
 * that last line through the money rule.
 *
 * A wallet's key in the batch is its stream id, as read: a string the engine hashes once, where a
 * key built per event (and the stream id built again to check it) cost a string and its hash each.
 */
async function handleLedger(events: readonly RecordedEvent[], context: ProjectionContext, insert: InsertLines): Promise<void> {
  const ledger = context.table(WALLET_LEDGER_TABLE);
  // Per wallet of the batch, by stream id: the wallet and its first event's position.
  const firsts = new Map<string, { organization_id: string; environment: string; event_position: string }>();
  const decoded = events.map((recorded) => {
    const event = asDomainEvent<WalletEvent>(recorded);
    const { organizationId, environment } = event.data;
    const position = recorded.position.toString();
    const first = firsts.get(recorded.streamId);
    // The stream's first event of the batch is checked against its stream id, the others against that event.
    const named =
      first === undefined
        ? recorded.streamId === streams.wallet(organizationId, environment as Environment)
        : organizationId === first.organization_id && environment === first.environment;
    if (!named) throw new WalletProjectionError(`${recorded.type} at position ${recorded.position} names another wallet than its stream`);
    if (first === undefined) firsts.set(recorded.streamId, { organization_id: organizationId, environment, event_position: position });
    return { recorded, event, key: recorded.streamId, position };
  });
  // Per wallet of the batch: its last line before the batch, and whether it already has lines
  // from the batch on (only a replay does: the checkpoint moves with the lines). Both are reads
  // at one end of the wallet's primary key; an `exists` over the lines from the batch on was
  // planned as a scan of the whole ledger, a cost that grew with every line.
  const previous = await context.query<{ organization_id: string; environment: string; balance_kobo: string | null; reserved_kobo: string | null; replayed: boolean }>(
    `select b.organization_id, b.environment, p.balance_kobo, p.reserved_kobo,
            coalesce((select max(l.event_position) from ${ledger} l where l.organization_id = b.organization_id and l.environment = b.environment) >= b.event_position, false) as replayed
     from jsonb_to_recordset($1::jsonb) as b(organization_id text, environment text, event_position bigint)
     left join lateral (
       select balance_kobo, reserved_kobo from ${ledger} l
       where l.organization_id = b.organization_id and l.environment = b.environment and l.event_position < b.event_position
       order by l.event_position desc limit 1) p on true`,
    [JSON.stringify([...firsts.values()])],
  );
  const walletStream = (row: { organization_id: string; environment: string }) => streams.wallet(row.organization_id, row.environment as Environment);
  const figures = new Map<string, WalletFigures>(previous.map((row) => [walletStream(row), lineFigures(Number(row.balance_kobo ?? 0), Number(row.reserved_kobo ?? 0))]));
  const replayedWallets = new Set(previous.filter((row) => row.replayed).map(walletStream));
  const present = new Map<string, { balance_kobo: string; reserved_kobo: string }>();
  if (replayedWallets.size > 0) {
    const lines = decoded
      .filter(({ key }) => replayedWallets.has(key))
      .map(({ event, position }) => ({ organization_id: event.data.organizationId, environment: event.data.environment, event_position: position }));
    const existing = await context.query<{ organization_id: string; environment: string; event_position: string; balance_kobo: string; reserved_kobo: string }>(
      `select l.organization_id, l.environment, l.event_position, l.balance_kobo, l.reserved_kobo
       from ${ledger} l join jsonb_to_recordset($1::jsonb) as b(organization_id text, environment text, event_position bigint) using (organization_id, environment, event_position)`,
      [JSON.stringify(lines)],
    );
    for (const row of existing) present.set(`${walletStream(row)}\u0000${row.event_position}`, row);
  }

  // The scope of each line: a debit or release takes its reservation's, from the batch when the
  // reservation is in it, else from its line (the search of `handle`), one statement for them all.
  const entries = decoded.map(({ event }) => entryOf(event));
  // Per wallet (stream id), the scope of each reservation in the batch by its reference.
  const reservedInBatch = new Map<string, Map<string, string | null>>();
  const toLookUp: ScopeLookUp[] = [];
  const scopes = entries.map((entry, at): string | null => {
    const { event, key, position } = decoded[at];
    let reserved = reservedInBatch.get(key);
    if (entry.entryType === 'reservation') {
      if (reserved === undefined) reservedInBatch.set(key, (reserved = new Map<string, string | null>()));
      reserved.set(entry.reference, entry.scope);
    }
    if (!closesReservation(entry)) return entry.scope;
    if (reserved?.has(entry.reference) === true) return reserved.get(entry.reference) ?? null;
    if (present.size === 0 || !present.has(`${key}\u0000${position}`))
      toLookUp.push({ at, organization_id: event.data.organizationId, environment: event.data.environment, event_position: position, reference: entry.reference });
    return null;
  });
  if (toLookUp.length > 0) {
    for (const [at, scope] of await reservedScopes(context, ledger, toLookUp)) scopes[at] = scope;
  }

  const inserts: Line[] = [];
  for (let at = 0; at < decoded.length; at++) {
    const { recorded, event, key, position } = decoded[at];
    const running = figures.get(key);
    if (running === undefined) throw new Error(`invariant: wallet ${recorded.streamId} has no running figures`);
    // Only a replay finds lines already there: otherwise no key is built to look them up.
    const line = present.size === 0 ? undefined : present.get(`${key}\u0000${position}`);
    if (line !== undefined) {
      // Already there: the next line runs on from it, as a later call would read it back.
      figures.set(key, lineFigures(Number(line.balance_kobo), Number(line.reserved_kobo)));
      continue;
    }
    const entry = entries[at];
    // The ledger does not track reservations' amounts: the rule judges its figures alone.
    const moved = moveMoney(running, { type: event.type, amountKobo: event.data.amountKobo });
    if (moved.refused !== undefined) throw new WalletProjectionError(`${recorded.type} at position ${position} of wallet ${recorded.streamId}: ${moved.message}`);
    figures.set(key, moved.figures);
    inserts.push([
      event.data.organizationId,
      event.data.environment,
      position,
      entry.entryType,
      entry.reference,
      event.data.amountKobo,
      balanceOf(moved.figures),
      moved.figures.reservedKobo,
      availableOf(moved.figures),
      scopes[at],
      occurredAtText(recorded),
    ]);
  }
  if (inserts.length > 0) await insert(inserts, context);
}
