import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { asDomainEvent } from '../../src/common/event.js';
import { CATEGORIES } from '../../src/common/streams.js';
import type { VerificationEvent } from '../../src/verifications/verification.events.js';
import type { CopyValue } from '../bulk/copy-rows.js';
import { pageContextOf, type PageContext, type Projection, type ProjectionContext } from '../projection.js';

/** A terminal event's effect on its row: completed carries a result, failed and rejected an error message. */
interface Terminal {
  readonly reference: string;
  readonly status: 'found' | 'not_found' | 'failed';
  /** Null keeps the row's result. */
  readonly result: Readonly<Record<string, unknown>> | null;
  readonly charged: boolean;
  readonly error_message: string | null;
  /** A failed check's reason code (VerificationFailed, VerificationRejected); null otherwise. */
  readonly reason_code: string | null;
  readonly completed_at: string;
}

function terminalOf(event: VerificationEvent): Terminal | undefined {
  switch (event.type) {
    case 'VerificationRequested':
    case 'VerificationPersonalDataErased':
      return undefined;
    case 'VerificationCompleted':
      return {
        reference: event.data.reference,
        status: event.data.outcome,
        result: event.data.result,
        charged: true,
        error_message: null,
        reason_code: null,
        completed_at: event.data.completedAt,
      };
    case 'VerificationFailed':
      return {
        reference: event.data.reference,
        status: 'failed',
        result: null,
        charged: false,
        error_message: event.data.errorMessage,
        reason_code: event.data.reasonCode ?? null,
        completed_at: event.data.failedAt,
      };
    case 'VerificationRejected':
      return {
        reference: event.data.reference,
        status: 'failed',
        result: null,
        charged: false,
        error_message: event.data.errorMessage,
        reason_code: event.data.reasonCode ?? null,
        completed_at: event.data.rejectedAt,
      };
    default: {
      const _exhaustive: never = event;
      throw new Error(`invariant: unhandled verification event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

const REQUEST_COLUMNS = `reference text, organization_id text, environment text, key_id text, scope text, category text, country_code text, request jsonb, price_kobo bigint, created_at timestamptz,
  status text, result jsonb, charged boolean, error_message text, reason_code text, completed_at timestamptz`;
const TERMINAL_COLUMNS = `reference text, status text, result jsonb, charged boolean, error_message text, reason_code text, completed_at timestamptz`;

/**
 * Inserts the requested rows that are not there yet, each pending or, when its terminal event is
 * already known, straight in its final state; counts only the rows inserted, by their status (a
 * replayed request inserts nothing and so counts nothing). Answers the references inserted.
 */
async function insertRequested(context: ProjectionContext, requests: readonly RequestRow[]): Promise<Set<string>> {
  const table = context.table('verifications');
  const counts = context.table('verification_counts');
  const inserted = await context.query<{ reference: string }>(
    `with inserted as (
       insert into ${table} (reference, organization_id, environment, key_id, scope, category, country_code, status, request, result, error_message, reason_code, price_kobo, charged, created_at, completed_at)
       select reference, organization_id, environment, key_id, scope, category, country_code, status, request, coalesce(result, '{}'), error_message, reason_code, price_kobo, charged, created_at, completed_at
       from jsonb_to_recordset($1::jsonb) as r(${REQUEST_COLUMNS})
       on conflict (reference) do nothing
       returning reference, organization_id, environment, scope, status),
     deltas as (
       select organization_id, environment, scope, status, 1 as delta from inserted
       union all
       -- A row inserted finished passed through pending: the same count rows as insert-then-update.
       select organization_id, environment, scope, 'pending', 0 from inserted where status <> 'pending'),
     counted as (
       insert into ${counts} as c (organization_id, environment, scope, status, count)
       select organization_id, environment, scope, status, sum(delta) from deltas group by 1, 2, 3, 4
       on conflict (organization_id, environment, scope, status) do update set count = c.count + excluded.count)
     select reference from inserted`,
    [JSON.stringify(requests)],
  );
  return new Set(inserted.map((row) => row.reference));
}

/**
 * Moves pending rows to their outcome (a finished row is never rewritten) and moves the counts of
 * exactly the rows that moved: -1 pending, +1 outcome. The references must be distinct.
 * "Not finished" rather than `status = 'pending'`, so that the rows are found by their primary
 * key: the pending condition matches the partial index `verifications_pending`, which PostgreSQL
 * then prefers, and that index keeps an entry for every row that has left pending until vacuum
 * removes it (many under load, each batch then scanning them instead of a few lookups).
 */
function finish(context: ProjectionContext, terminals: readonly Terminal[]): Promise<unknown> {
  const table = context.table('verifications');
  const counts = context.table('verification_counts');
  return context.query(
    `with moved as (
       update ${table} v set status = t.status, result = coalesce(t.result, v.result), charged = t.charged, error_message = t.error_message, reason_code = t.reason_code, completed_at = t.completed_at
       from jsonb_to_recordset($1::jsonb) as t(${TERMINAL_COLUMNS})
       where v.reference = t.reference and v.status <> all('{found,not_found,failed}'::text[])
       returning v.organization_id, v.environment, v.scope, t.status),
     deltas as (
       select organization_id, environment, scope, status, 1 as delta from moved
       union all
       select organization_id, environment, scope, 'pending', -1 from moved)
     insert into ${counts} as c (organization_id, environment, scope, status, count)
     select organization_id, environment, scope, status, sum(delta) from deltas group by 1, 2, 3, 4
     on conflict (organization_id, environment, scope, status) do update set count = c.count + excluded.count`,
    [JSON.stringify(terminals)],
  );
}

/**
 * Marks erased rows and blanks their sealed columns (unreadable anyway once the key is gone). Only
 * a finished row can be erased; a replay keeps the first erasure's time.
 */
function erase(context: ProjectionContext, erasures: readonly { reference: string; erased_at: string | null }[]): Promise<unknown> {
  const table = context.table('verifications');
  return context.query(
    `update ${table} v set personal_data_erased_at = coalesce(v.personal_data_erased_at, e.erased_at), request = '{}', result = '{}'
     from jsonb_to_recordset($1::jsonb) as e(reference text, erased_at timestamptz)
     where v.reference = e.reference`,
    [JSON.stringify(erasures)],
  );
}

/**
 * Inserts a batch's request rows (`rows`, one per reference, and `extras`, second requests of a
 * reference, which a broken log may hold) as insertRequested does; answers the references inserted.
 */
type InsertRequested = (rows: readonly RequestRow[], extras: readonly RequestRow[]) => Promise<Set<string>>;

const ROW_COLUMNS = [
  'reference',
  'organization_id',
  'environment',
  'key_id',
  'scope',
  'category',
  'country_code',
  'status',
  'request',
  'result',
  'error_message',
  'reason_code',
  'price_kobo',
  'charged',
  'created_at',
  'completed_at',
] as const;

/**
 * insertRequested for a page: the rows go in by COPY, and their counts (computed here, as
 * insertRequested's statement computes them from the rows it inserted) by one upsert. COPY has no
 * `on conflict do nothing`: a reference already there (a replay) fails it, and then, under a
 * savepoint, the page falls back to insertRequested, which skips such rows. A rebuild or a
 * catch-up meets none: the checkpoint moves with the rows. The sealed request and result are
 * copied as they are in the event, never opened.
 */
async function copyRequested(context: PageContext, rows: readonly RequestRow[], extras: readonly RequestRow[]): Promise<Set<string>> {
  const copied =
    extras.length > 0
      ? undefined
      : await context.attempt(async () => {
          await context.copy('verifications', ROW_COLUMNS, inListOrder(rows).map(copyRow));
          await addCounts(context, rows);
        });
  if (copied?.ok === true) return new Set(rows.map((row) => row.reference));
  return insertRequested(context, [...rows, ...extras]);
}

/**
 * The rows grouped by organization and environment, each group newest first (rows of one group in
 * log order, reversed): nearly the order of the list indexes, which all begin with those two
 * columns. Inserted in log order, consecutive rows land in a different organization's part of each
 * list index, every one a descent through pages no longer in the CPU's caches; grouped, a run of
 * rows lands on the same few pages. In the catch-up bench (1,000,000 events, on a 2-core AMD EPYC
 * virtual machine with PostgreSQL 15 beside it) PostgreSQL spent 0.74 of log order's CPU per event, and 249,900 rows inserted in pieces of 10,000 by one session 0.7 to
 * 0.9 of it, with random references or time-ordered ones (the service's ULIDs) alike. Only the
 * order of the COPY changes, not what it writes.
 */
function inListOrder(rows: readonly RequestRow[]): RequestRow[] {
  const groups = new Map<unknown, Map<unknown, RequestRow[]>>();
  for (const row of rows) {
    const byEnvironment = level(groups, row.organization_id);
    const group = byEnvironment.get(row.environment);
    if (group === undefined) byEnvironment.set(row.environment, [row]);
    else group.push(row);
  }
  const ordered: RequestRow[] = [];
  for (const byEnvironment of groups.values()) {
    for (const group of byEnvironment.values()) for (let i = group.length - 1; i >= 0; i--) ordered.push(group[i]);
  }
  return ordered;
}

/**
 * A row's values in ROW_COLUMNS' order, as insertRequested's statement reads them from JSON: jsonb
 * columns as JSON text (the result `{}` when absent), a missing field as null. Written out: a map
 * over the column names per row cost a closure and a lookup per value.
 */
function copyRow(row: RequestRow): CopyValue[] {
  return [
    row.reference ?? null,
    row.organization_id ?? null,
    row.environment ?? null,
    row.key_id ?? null,
    row.scope ?? null,
    row.category ?? null,
    row.country_code ?? null,
    row.status,
    row.request == null ? null : JSON.stringify(row.request),
    JSON.stringify(row.result ?? {}),
    row.error_message ?? null,
    row.reason_code ?? null,
    row.price_kobo ?? null,
    row.charged,
    row.created_at ?? null,
    row.completed_at ?? null,
  ];
}

/** The count rows that inserting `rows` moves: +1 for each row's status, and the pending row touched (left as it is) for a row inserted finished. */
async function addCounts(context: ProjectionContext, rows: readonly RequestRow[]): Promise<void> {
  // Keyed level by level rather than by one joined string: a joined key per row was an eighth of the page's fold.
  const deltas: { organization_id: unknown; environment: unknown; scope: unknown; status: unknown; count: number }[] = [];
  const index = new Map<unknown, Map<unknown, Map<unknown, Map<unknown, (typeof deltas)[number]>>>>();
  const add = (row: RequestRow, status: unknown, delta: number) => {
    const byStatus = level(level(level(index, row.organization_id), row.environment), row.scope);
    const entry = byStatus.get(status);
    if (entry !== undefined) {
      entry.count += delta;
      return;
    }
    const created = { organization_id: row.organization_id, environment: row.environment, scope: row.scope, status, count: delta };
    byStatus.set(status, created);
    deltas.push(created);
  };
  for (const row of rows) {
    add(row, row.status, 1);
    if (row.status !== 'pending') add(row, 'pending', 0);
  }
  if (deltas.length === 0) return;
  await context.query(
    `insert into ${context.table('verification_counts')} as c (organization_id, environment, scope, status, count)
     select organization_id, environment, scope, status, count from jsonb_to_recordset($1::jsonb) as d(organization_id text, environment text, scope text, status text, count bigint)
     order by 1, 2, 3, 4
     on conflict (organization_id, environment, scope, status) do update set count = c.count + excluded.count`,
    [JSON.stringify(deltas)],
  );
}

/** The map under `key` in `map`, added empty when missing. */
function level<V>(map: Map<unknown, Map<unknown, V>>, key: unknown): Map<unknown, V> {
  let found = map.get(key);
  if (found === undefined) map.set(key, (found = new Map<unknown, V>()));
  return found;
}

/** A verifications row as a request writes it (fields of an old event may be missing: undefined). */
interface RequestRow {
  readonly reference: string;
  readonly organization_id: string;
  readonly environment: string;
  readonly key_id: string;
  readonly scope: string;
  readonly category: string;
  readonly country_code: string;
  readonly status: string;
  readonly request: Readonly<Record<string, unknown>> | undefined;
  readonly result: Readonly<Record<string, unknown>> | null;
  readonly charged: boolean;
  readonly error_message: string | null;
  readonly reason_code: string | null;
  readonly price_kobo: number;
  readonly created_at: string;
  readonly completed_at: string | null;
}

/** The row of a request, pending, or already finished by `terminal`. */
function requestRow(event: VerificationEvent & { type: 'VerificationRequested' }, terminal?: Terminal): RequestRow {
  const d = event.data;
  return {
    status: terminal?.status ?? 'pending',
    result: terminal?.result ?? null,
    charged: terminal?.charged ?? false,
    error_message: terminal?.error_message ?? null,
    reason_code: terminal?.reason_code ?? null,
    completed_at: terminal?.completed_at ?? null,
    reference: d.reference,
    organization_id: d.organizationId,
    environment: d.environment,
    key_id: d.keyId,
    scope: d.scope,
    category: d.category,
    country_code: d.countryCode,
    request: d.request,
    price_kobo: d.priceKobo,
    created_at: d.requestedAt,
  };
}

/**
 * The `verifications` read model behind GET /v1/verifications and the recovery process, and
 * `verification_counts`, the list's totals. Safe to apply twice: the insert does nothing on
 * conflict, every terminal update only moves a row out of `pending`, and the counts move only
 * with a row that was inserted or moved, so a replay changes nothing.
 */
export const verificationsProjection: Projection = {
  name: 'verifications',
  categories: [CATEGORIES.verification],
  tables: ['verifications', 'verification_counts'],
  // A page's new rows go in by COPY (see copyRequested).
  handle: (events, context) => {
    const page = pageContextOf(context);
    return handleVerifications(
      events,
      context,
      page === undefined ? (rows, extras) => insertRequested(context, [...rows, ...extras]) : (rows, extras) => copyRequested(page, rows, extras),
    );
  },
  pages: true,
};

/**
 * The events in two statements: every request (in its final state when its terminal event is
 * here too: one write instead of an insert and an update), then every other reference's first
 * terminal event. A later terminal event of the same reference would find its row finished and
 * change nothing, and a terminal event before its request (a broken log) would find no row; both
 * are dropped here. The erasures go last, which is their place in a log the service writes (a
 * check is erased once finished); events where an erasure comes before its reference's request or
 * its terminal event (a broken log) are applied one at a time instead (a single event never is),
 * where the order decides what the row keeps.
 */
async function handleVerifications(events: readonly RecordedEvent[], context: ProjectionContext, insert: InsertRequested): Promise<void> {
  // Events are compared by their index in the batch, which is their position order: no wrapper
  // object per event, and numbers rather than bigints.
  const requested = new Map<string, { index: number; event: VerificationEvent & { type: 'VerificationRequested' } }>();
  const terminals = new Map<string, Terminal>();
  const decoded = events.map((recorded) => asDomainEvent<VerificationEvent>(recorded));
  const extraRequests: RequestRow[] = [];
  for (let index = 0; index < decoded.length; index++) {
    const event = decoded[index];
    if (event.type !== 'VerificationRequested') continue;
    // A second request of one reference (a broken log) stays a plain request: its insert does nothing.
    if (requested.has(event.data.reference)) extraRequests.push(requestRow(event));
    else requested.set(event.data.reference, { index, event });
  }
  const terminalIndexes = new Map<string, number>();
  for (let index = 0; index < decoded.length; index++) {
    const terminal = terminalOf(decoded[index]);
    if (terminal === undefined || terminals.has(terminal.reference)) continue;
    const request = requested.get(terminal.reference);
    if (request !== undefined && request.index > index) continue;
    terminals.set(terminal.reference, terminal);
    terminalIndexes.set(terminal.reference, index);
  }
  const erasedOutOfOrder = decoded.some((event, index) => {
    if (event.type !== 'VerificationPersonalDataErased') return false;
    const before = (other: number | undefined) => other !== undefined && index < other;
    return before(requested.get(event.data.reference)?.index) || before(terminalIndexes.get(event.data.reference));
  });
  if (erasedOutOfOrder) {
    for (const recorded of events) await handleVerifications([recorded], context, insert);
    return;
  }
  const rows = [...requested.values()].map(({ event }) => requestRow(event, terminals.get(event.data.reference)));
  const inserted = rows.length > 0 ? await insert(rows, extraRequests) : new Set<string>();
  // A request already there (a replay) did not take its terminal event: apply it as an update.
  const remaining = [...terminals.values()].filter((terminal) => !(requested.has(terminal.reference) && inserted.has(terminal.reference)));
  if (remaining.length > 0) await finish(context, remaining);
  // After the rows and their outcomes, as checked above. One erasure per reference (an update
  // joining two rows of one reference would take either): the first with a time, as `handle`'s
  // coalesce keeps the first time given, or else the first.
  const erasures = new Map<string, { reference: string; erased_at: string | null }>();
  for (const event of decoded) {
    if (event.type !== 'VerificationPersonalDataErased') continue;
    const erasedAt = (event.data.erasedAt as string | null | undefined) ?? null;
    if (erasures.get(event.data.reference)?.erased_at == null) erasures.set(event.data.reference, { reference: event.data.reference, erased_at: erasedAt });
  }
  if (erasures.size > 0) await erase(context, [...erasures.values()]);
}
