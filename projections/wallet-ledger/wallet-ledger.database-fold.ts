import { WALLET_LEDGER_TABLE } from '../../src/wallets/wallet.read-model.js';
import { categoriesCondition } from '../bulk/event-pages.js';
import { occurredAtNotCanonicalSql, occurredAtSql } from '../bulk/database-fold.js';
import type { DatabaseFold, DatabaseFolder, ProjectionContext } from '../projection.js';

/** The largest integer a JavaScript number holds exactly: beyond it `handle`'s sums round, these do not. */
const MAX_EXACT_INTEGER = '9007199254740991';

/**
 * What would make the statement below write other rows than `handle`, counted over the events it
 * folds (DatabaseFolder.oddEventsSql): an event `handle` refuses (an unknown type, one naming
 * another wallet than its stream), or a value whose JSON type `handle` treats otherwise (an amount that is text adds as text there;
 * a number or object written as text is printed by JavaScript, not by PostgreSQL; a time that is not
 * what `toISOString` writes is parsed by JavaScript's Date).
 */
const oddEvents = (inCategories: string) => `
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

/** walletLedgerProjection.foldInDatabase: the statements above. */
export function walletLedgerFolder(categories: readonly string[]): DatabaseFolder {
  const inCategories = categoriesCondition(categories);
  return {
    oddEventsSql: oddEvents(inCategories),
    async fold(context: ProjectionContext, upToPosition: bigint, part: number, parts: number): Promise<DatabaseFold> {
      const [written] = await context.query<{ negative: string; inexact: string }>(insertLines(context.table(WALLET_LEDGER_TABLE), inCategories), [upToPosition.toString(), parts, part]);
      if (Number(written.negative) > 0) return { outcome: 'declined', reason: 'a wallet would show a negative figure' };
      if (Number(written.inexact) > 0) return { outcome: 'declined', reason: 'an amount or figure beyond the integers a JavaScript number holds exactly' };
      return { outcome: 'folded' };
    },
  };
}
