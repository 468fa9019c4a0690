import { categoriesCondition } from '../bulk/event-pages.js';
import type { DatabaseFold, DatabaseFolder, ProjectionContext } from '../projection.js';

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
 * they fold (DatabaseFolder.oddEventsSql): an event type `handle` refuses; a reference that is not text (the batch paths key
 * their maps by the JSON value, so the number 7 and the text "7" are two references there and one
 * here); a completed check whose outcome is no status (`handle` fails on it, a batch keeps the row
 * pending); a field written as text that is not text in the event (see REQUEST_TEXT_FIELDS).
 */
const oddEvents = (inCategories: string) => `
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

/**
 * verification_counts from the rows: a row per group and status held by some row, and the
 * group's pending row, which the first request of the group created, even when none is pending
 * any more (count 0), as `handle`'s upserts leave it.
 */
const insertCounts = (counts: string, table: string) => `
  insert into ${counts} (organization_id, environment, scope, status, count)
  select organization_id, environment, scope, status, sum(count) from (
    select organization_id, environment, scope, status, count(*) as count from ${table} group by 1, 2, 3, 4
    union all
    select distinct organization_id, environment, scope, 'pending', 0 from ${table}) counted
  group by 1, 2, 3, 4`;

/** verificationsProjection.foldInDatabase: the statements above. */
export function verificationsFolder(categories: readonly string[]): DatabaseFolder {
  const inCategories = categoriesCondition(categories);
  return {
    oddEventsSql: oddEvents(inCategories),
    async fold(context: ProjectionContext, upToPosition: bigint, part: number, parts: number): Promise<DatabaseFold> {
      await context.query(insertRows(context.table('verifications'), inCategories), [upToPosition.toString(), parts, part]);
      return { outcome: 'folded' };
    },
    async finish(context: ProjectionContext): Promise<void> {
      await context.query(insertCounts(context.table('verification_counts'), context.table('verifications')));
    },
  };
}
