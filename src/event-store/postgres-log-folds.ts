import type { LogFolds, OddEventCounts, SqlRunner } from './event-store.port.js';
import { categoriesCondition } from './postgres-log-pages.js';

/*
 * The projections' folds of the PostgreSQL log inside the database (LogFolds): `insert … select`
 * statements over the `events` table (no event leaves the database) that write exactly the rows
 * the projection's `handle` would leave for each of its events at or below a position, and the
 * checks that decline a fold whose events `handle` would treat otherwise. The projections own the
 * rest (projections/<name>/<name>.database-fold.ts): which tables, what a declined fold means.
 */

/**
 * Whether the metadata's `occurredAt` (when present) is text in the form `Date.prototype.toISOString`
 * writes (CANONICAL_INSTANT in src/common/time.ts), which means the same instant to JavaScript and to
 * PostgreSQL; any other form the page path parses with JavaScript's Date, which reads some texts
 * otherwise. Tested as a round trip through PostgreSQL's parser, cheaper than a regular
 * expression: a time that does not parse fails the statement, and the fold falls back.
 */
const occurredAtNotCanonicalSql = `(jsonb_typeof(metadata -> 'occurredAt') <> 'string'
  or length(metadata ->> 'occurredAt') <> 24
  or to_char((metadata ->> 'occurredAt')::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') <> (metadata ->> 'occurredAt'))`;

/**
 * An event's time as the projections write it (occurredAtText): the metadata's `occurredAt`, else
 * the commit time to the millisecond, as the page reader hands it over (`floor` of the epoch's
 * milliseconds, which date_trunc matches for any time after 1970).
 */
const occurredAtSql = `coalesce((metadata ->> 'occurredAt')::timestamptz, date_trunc('milliseconds', created_at))`;

/** The largest integer a JavaScript number holds exactly: beyond it `handle`'s sums round, these do not. */
const MAX_EXACT_INTEGER = '9007199254740991';

/**
 * What would make the statement below write other rows than `handle`, counted over the events it
 * folds (LogFolds.walletLedgerOddEvents): an event `handle` refuses (an unknown type, one naming
 * another wallet than its stream), or a value whose JSON type `handle` treats otherwise (an amount that is text adds as text there;
 * a number or object written as text is printed by JavaScript, not by PostgreSQL; a time that is not
 * what `toISOString` writes is parsed by JavaScript's Date).
 */
const walletOddEvents = (inCategories: string) => `
  select count(*) as events,
    count(*) filter (where type not in ('WalletFunded', 'WalletFundsReserved', 'WalletDebited', 'WalletReservationReleased')) as "an unknown event type",
    count(*) filter (where jsonb_typeof(data -> 'organizationId') is distinct from 'string' or jsonb_typeof(data -> 'environment') is distinct from 'string'
                       or stream_id is distinct from 'wallet-' || (data ->> 'organizationId') || '.' || (data ->> 'environment')) as "an event naming another wallet than its stream",
    count(*) filter (where jsonb_typeof(data -> 'amountKobo') is distinct from 'number') as "an amount that is not a number",
    count(*) filter (where jsonb_typeof(case type when 'WalletFunded' then data -> 'fundingReference' else data -> 'reference' end) is distinct from 'string') as "a reference that is not text",
    count(*) filter (where type = 'WalletFundsReserved' and coalesce(jsonb_typeof(data -> 'scope'), 'null') not in ('string', 'null')) as "a scope that is not text",
    count(*) filter (where metadata ->> 'occurredAt' is not null and ${occurredAtNotCanonicalSql}) as "a time not written by toISOString"
  from events where position <= $1 and (${inCategories})`;

/**
 * The ledger in one statement: each event's line, its figures summed over the wallet's events up
 * to it (a window over the stream, which `oddEvents` has checked is the wallet's), and for a debit or
 * release the scope of the last reservation of its reference before it in the same wallet, as
 * `handle` looks it up: the greatest of "position, scope" over the reference's events so far, the
 * position written at fixed width so that text order is position order, and the scope flagged
 * present or null. The wallet is partitioned on by `stream_id`, a column, rather than by two
 * fields of the JSON, which cost more to take out and to sort on. The returned counts let the caller
 * decline what `handle` would refuse (a negative figure) or compute otherwise (beyond exact
 * integers). $2 parts of the wallets, by the hash of their stream; $3 the one written.
 */
const insertLines = (ledger: string, inCategories: string) => `
  with inserted as (
    insert into ${ledger} (organization_id, environment, event_position, entry_type, reference, amount_kobo, balance_kobo, reserved_kobo, available_kobo, scope, occurred_at)
    select organization_id, environment, position, entry_type, reference, amount_kobo, balance_kobo, reserved_kobo, balance_kobo - reserved_kobo,
           case when entry_type in ('debit', 'release') then case when substr(last_reservation, 21, 1) = '1' then substr(last_reservation, 22) end else scope end,
           occurred_at
    from (
      select e.*,
             sum(balance_delta) over wallet as balance_kobo,
             sum(reserved_delta) over wallet as reserved_kobo,
             max(case when entry_type = 'reservation' then lpad(position::text, 20, '0') || case when scope is null then '0' else '1' || scope end end collate "C")
               over (partition by stream_id, reference order by position rows unbounded preceding) as last_reservation
      from (
        -- Compared byte for byte: the partitions only need equal values together, and that costs the sorts least.
        select position, stream_id collate "C" as stream_id, data ->> 'organizationId' as organization_id, data ->> 'environment' as environment,
               case type when 'WalletFunded' then 'funding' when 'WalletFundsReserved' then 'reservation' when 'WalletDebited' then 'debit' when 'WalletReservationReleased' then 'release' end as entry_type,
               (case type when 'WalletFunded' then data ->> 'fundingReference' else data ->> 'reference' end) collate "C" as reference,
               (data ->> 'amountKobo')::bigint as amount_kobo,
               case type when 'WalletFunded' then (data ->> 'amountKobo')::bigint when 'WalletDebited' then -(data ->> 'amountKobo')::bigint else 0 end as balance_delta,
               case type when 'WalletFundsReserved' then (data ->> 'amountKobo')::bigint when 'WalletFunded' then 0 else -(data ->> 'amountKobo')::bigint end as reserved_delta,
               case when type = 'WalletFundsReserved' then data ->> 'scope' end as scope,
               ${occurredAtSql} as occurred_at
        from events where position <= $1 and (${inCategories}) and (hashtext(stream_id) & 2147483647) % $2 = $3
        -- The fields are taken out once, before the sorts, which then move narrow rows rather than the events' JSON.
        offset 0) e
      window wallet as (partition by stream_id order by position rows unbounded preceding)) lines
    returning amount_kobo, balance_kobo, reserved_kobo, available_kobo)
  select count(*) filter (where reserved_kobo < 0 or available_kobo < 0) as negative,
         count(*) filter (where greatest(abs(amount_kobo), abs(balance_kobo), abs(reserved_kobo), abs(available_kobo)) > ${MAX_EXACT_INTEGER}) as inexact
  from inserted`;

const TERMINAL_TYPES = `('VerificationCompleted', 'VerificationFailed', 'VerificationRejected')`;

/**
 * The fields a row takes as text from its events: a number or object there would be printed by
 * JavaScript on the page path (`1.0` as `1`, an object without spaces), by PostgreSQL here.
 */
const REQUEST_TEXT_FIELDS = ['organizationId', 'environment', 'keyId', 'scope', 'category', 'countryCode', 'requestedAt'];
const TERMINAL_TEXT_FIELDS = ['errorMessage', 'reasonCode', 'completedAt', 'failedAt', 'rejectedAt'];
const notText = (field: string) => `coalesce(jsonb_typeof(data -> '${field}'), 'null') not in ('string', 'null')`;

/**
 * What would make the statements below write other rows than `handle`, counted over the events
 * they fold (LogFolds.verificationsOddEvents): an event type `handle` refuses; a reference that is not text (the batch paths key
 * their maps by the JSON value, so the number 7 and the text "7" are two references there and one
 * here); a completed check whose outcome is no status (`handle` fails on it, a batch keeps the row
 * pending); a field written as text that is not text in the event (see REQUEST_TEXT_FIELDS).
 */
const verificationOddEvents = (inCategories: string) => `
  select count(*) as events,
    count(*) filter (where type not in ('VerificationRequested', 'VerificationPersonalDataErased', ${TERMINAL_TYPES.slice(1, -1)})) as "an unknown event type",
    count(*) filter (where jsonb_typeof(data -> 'reference') is distinct from 'string') as "a reference that is not text",
    count(*) filter (where type = 'VerificationCompleted' and (jsonb_typeof(data -> 'outcome') is distinct from 'string' or data ->> 'outcome' not in ('found', 'not_found'))) as "an outcome that is no status",
    count(*) filter (where type = 'VerificationRequested' and (${REQUEST_TEXT_FIELDS.map(notText).join(' or ')})) as "a request field that is not text",
    count(*) filter (where type in ${TERMINAL_TYPES} and (${TERMINAL_TEXT_FIELDS.map(notText).join(' or ')})) as "an outcome field that is not text",
    count(*) filter (where type = 'VerificationPersonalDataErased' and ${notText('erasedAt')}) as "an erasure time that is not text"
  from events where position <= $1 and (${inCategories})`;

/**
 * The rows in one statement. `handle`, event by event, for one reference: its first request
 * inserts the row (a second does nothing, and nothing before the first finds a row); the first
 * terminal event after it finishes the row (a finished row is never rewritten); each erasure after
 * it blanks the request and result and keeps the first erasure time given. A completed check's
 * result comes back after an erasure that came before it (the update takes the event's result),
 * so the result is blank when an erasure follows the terminal event, or there is none, or it
 * carries no result. Two windows over the reference's events (one sort), then one group per
 * reference picking its request's, terminal event's and first erasure's fields. $2 parts of the
 * references, by their hash; $3 the one written (a reference that is not text is in none, and the
 * check declines the fold for it).
 */
const insertRows = (table: string, inCategories: string) => `
  insert into ${table} (reference, organization_id, environment, key_id, scope, category, country_code, status, request, result, error_message, reason_code, price_kobo, charged,
                        created_at, completed_at, personal_data_erased_at)
  select reference, requested ->> 'organizationId', requested ->> 'environment', requested ->> 'keyId', requested ->> 'scope', requested ->> 'category', requested ->> 'countryCode',
         case terminal_type when 'VerificationCompleted' then terminal ->> 'outcome' when 'VerificationFailed' then 'failed' when 'VerificationRejected' then 'failed' else 'pending' end,
         -- A request without one is refused by the column, as handle's insert is refused, erased or not.
         case when nullif(requested -> 'request', 'null') is null then null when last_erasure_position is not null then '{}' else requested -> 'request' end,
         case when terminal_type = 'VerificationCompleted' and (last_erasure_position is null or last_erasure_position < terminal_position) then coalesce(nullif(terminal -> 'result', 'null'), '{}') else '{}' end,
         case when terminal_type <> 'VerificationCompleted' then terminal ->> 'errorMessage' end,
         case when terminal_type <> 'VerificationCompleted' then terminal ->> 'reasonCode' end,
         (requested ->> 'priceKobo')::bigint,
         coalesce(terminal_type = 'VerificationCompleted', false),
         (requested ->> 'requestedAt')::timestamptz,
         (case terminal_type when 'VerificationCompleted' then terminal ->> 'completedAt' when 'VerificationFailed' then terminal ->> 'failedAt' when 'VerificationRejected' then terminal ->> 'rejectedAt' end)::timestamptz,
         erased_at::timestamptz
  from (
    select reference,
           (array_agg(data) filter (where position = requested_position))[1] as requested,
           (array_agg(data) filter (where position = terminal_position))[1] as terminal,
           min(type) filter (where position = terminal_position) as terminal_type,
           min(terminal_position) as terminal_position,
           min(last_erasure_position) as last_erasure_position,
           min(data ->> 'erasedAt') filter (where position = erasure_position) as erased_at
    from (
      select e.*,
             min(position) filter (where type in ${TERMINAL_TYPES}) over reference_events as terminal_position,
             min(position) filter (where type = 'VerificationPersonalDataErased' and data ->> 'erasedAt' is not null) over reference_events as erasure_position,
             max(position) filter (where type = 'VerificationPersonalDataErased') over reference_events as last_erasure_position
      from (
        select *, min(position) filter (where type = 'VerificationRequested') over reference_events as requested_position
        -- Compared byte for byte: the partitions only need equal references together, and that costs the sort least.
        from (select position, type, (data ->> 'reference') collate "C" as reference, data from events
              where position <= $1 and (${inCategories}) and (hashtext(data ->> 'reference') & 2147483647) % $2 = $3 offset 0) events
        window reference_events as (partition by reference)) e
      -- What comes before the reference's first request finds no row; a reference never requested has none.
      where position >= requested_position
      window reference_events as (partition by reference)) marked
    group by reference) folded`;

/** The first row of a fold's check, its counts as text. */
async function oddCounts(run: SqlRunner, sql: string, upToPosition: bigint): Promise<OddEventCounts> {
  const [row] = await run<Record<string, string>>(sql, [upToPosition.toString()]);
  return row;
}

export const postgresLogFolds: LogFolds = {
  walletLedgerOddEvents: (run, categories, upToPosition) => oddCounts(run, walletOddEvents(categoriesCondition(categories)), upToPosition),
  async walletLedgerLines(run, ledgerTable, categories, upToPosition, part, parts) {
    const [written] = await run<{ negative: string; inexact: string }>(insertLines(ledgerTable, categoriesCondition(categories)), [upToPosition.toString(), parts, part]);
    return { negative: Number(written.negative), inexact: Number(written.inexact) };
  },
  verificationsOddEvents: (run, categories, upToPosition) => oddCounts(run, verificationOddEvents(categoriesCondition(categories)), upToPosition),
  async verificationRows(run, table, categories, upToPosition, part, parts) {
    await run(insertRows(table, categoriesCondition(categories)), [upToPosition.toString(), parts, part]);
  },
};
