import { Inject } from '@nestjs/common';
import { QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import type pg from 'pg';
import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import { InvariantViolated, NotFound, ValidationFailed, type FieldError } from '../common/errors.js';
import { isoWithOffset } from '../common/time.js';
import { GroupCommit } from '../database/group-commit.js';
import { prepared } from '../database/prepared.js';
import { PG_POOL } from '../database/pool.js';
import { Portraits } from '../portraits/portraits.service.js';
import { isScope, SCOPES } from '../scopes/scopes.js';
import { GetVerification, ListVerifications, type VerificationPage } from './verification.commands.js';
import { readerSeesScope, type ScopedReader } from './scope-access.js';
import { PersonalFields } from './verification.codec.js';
import { VerificationStreams } from './verification.stream.js';
import { summaryFromRow, verificationView, viewFromRow, type VerificationRow, type VerificationView } from './verification.views.js';

export const REFERENCE_PATTERN = /^vrf_[0-9A-HJKMNP-TV-Z]{26}$/;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/** Deep offsets get slow; beyond this, narrow the filters. */
export const MAX_PAGE = 100_000;
const LIST_STATUSES = ['found', 'not_found', 'failed'] as const;

/** A verification's read-model row with its data key's row (null columns when it has none). */
type RowWithKey = VerificationRow & {
  key_organization_id: string | null;
  key_environment: string | null;
  wrapped_key: string | null;
  key_destroyed_at: Date | null;
  organization_destroyed_at: Date | null;
};

// The data key's row comes with the verification's: opening its fields then needs no second statement.
const BY_REFERENCES = `select v.*, k.organization_id as key_organization_id, k.environment as key_environment, k.wrapped_key, k.destroyed_at as key_destroyed_at, o.destroyed_at as organization_destroyed_at
  from verifications v left join verification_keys k on k.reference = v.reference left join organization_keys o on o.organization_id = k.organization_id
  where v.reference = any($1::text[])`;

/** Statements of reads by reference under way at once; the reads arriving meanwhile wait and share the next. */
const READS_IN_FLIGHT = 2;
/** The most references one statement reads. */
const READS_PER_STATEMENT = 100;

/**
 * The read model answers; when it has not caught up (no row yet, or still pending), the
 * verification's own stream does, so a read right after a run never 404s or shows a stale status.
 *
 * Reads by reference arriving while READS_IN_FLIGHT statements are under way share one statement
 * (`reference = any(…)`), as group commit shares a commit: alone, a read goes at once; under load
 * one round trip to PostgreSQL serves many. A read's statement is always sent after the read
 * arrived, so it sees every write answered before, as a statement of its own would.
 */
@QueryHandler(GetVerification)
export class GetVerificationHandler implements IQueryHandler<GetVerification, VerificationView> {
  private readonly reads = new GroupCommit<string, RowWithKey | undefined>({
    maxInFlight: READS_IN_FLIGHT,
    maxItems: READS_PER_STATEMENT,
    writeOne: async (reference) => (await this.rowsOf([reference])).get(reference),
    writeMany: async (references) => {
      const rows = await this.rowsOf(references);
      return references.map((reference) => ({ status: 'fulfilled', value: rows.get(reference) }));
    },
    // A read has no fault of its own: a failed statement fails every read that shared it.
    fatal: (error) => error,
  });

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(VerificationStreams) private readonly streams: VerificationStreams,
    @Inject(Portraits) private readonly portraits: Portraits,
    @Inject(PersonalFields) private readonly fields: PersonalFields,
  ) {}

  async execute({ key, reference }: GetVerification): Promise<VerificationView> {
    if (!REFERENCE_PATTERN.test(reference)) throw new NotFound('No verification with this reference');
    const read = await this.reads.write(reference);
    // Another organization's or environment's verification, or one of a scope the key may not see, is, to this key, none.
    const row = read !== undefined && read.organization_id === key.organizationId && read.environment === key.environment && readerSeesScope(key, read.scope) ? read : undefined;
    let view: VerificationView;
    // A failed row projected before the read model kept reason codes: its stream has the code.
    const reasonCode = row !== undefined && row.status === 'failed' && row.reason_code == null ? await this.streamReasonCode(reference) : undefined;
    if (row !== undefined && row.personal_data_erased_at != null) {
      // Erased: nothing to open (the projection blanked the sealed columns).
      view = viewFromRow(row, { request: {}, result: {}, personalDataErasedAt: isoWithOffset(row.personal_data_erased_at), reasonCode });
    } else if (row !== undefined && row.status !== 'pending') {
      const stored =
        row.key_organization_id === null
          ? undefined
          : {
              organization_id: row.key_organization_id,
              // The environment the read model says the check is in: a row moved to another does not unwrap its key.
              environment: row.key_environment === null ? null : row.environment,
              wrapped_key: row.wrapped_key,
              destroyed_at: row.key_destroyed_at,
              organization_destroyed_at: row.organization_destroyed_at,
            };
      view = viewFromRow(row, { ...(await this.fields.openBoth(reference, row.request, row.result, { key: stored })), reasonCode });
    } else {
      const state = await this.streams.load(reference);
      if (
        state.status === 'none' ||
        state.requested.organizationId !== key.organizationId ||
        state.requested.environment !== key.environment ||
        !readerSeesScope(key, state.requested.scope)
      ) {
        throw new NotFound('No verification with this reference');
      }
      view = verificationView(state);
    }
    return { ...view, result: this.portraits.present(view.result) };
  }

  /** The rows of `references` (with their data keys' rows), by reference. */
  private async rowsOf(references: readonly string[]): Promise<Map<string, RowWithKey>> {
    const { rows } = await this.pool.query<RowWithKey>(prepared(BY_REFERENCES, [references]));
    return new Map(rows.map((row) => [row.reference, row]));
  }

  private async streamReasonCode(reference: string): Promise<string | null> {
    const state = await this.streams.load(reference);
    return state.status === 'none' ? null : state.reasonCode;
  }
}

export interface ListFilters {
  page: number;
  pageSize: number;
  scope: string | undefined;
  status: string | undefined;
}

function positiveInteger(value: unknown, field: string, fallback: number, errors: FieldError[]): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value) || Number(value) < 1) {
    errors.push({ field, message: 'must be an integer of at least 1' });
    return fallback;
  }
  return Number(value);
}

/** The list's query rules: page from 1, pageSize 1..100 (larger is capped), known scope and status. */
export function parseListQuery(query: Readonly<Record<string, unknown>>): ListFilters {
  const errors: FieldError[] = [];
  const page = positiveInteger(query.page, 'page', 1, errors);
  if (page > MAX_PAGE) errors.push({ field: 'page', message: `must be at most ${MAX_PAGE}` });
  const pageSize = Math.min(positiveInteger(query.pageSize, 'pageSize', DEFAULT_PAGE_SIZE, errors), MAX_PAGE_SIZE);
  const scope = query.scope;
  if (scope !== undefined && !isScope(scope)) errors.push({ field: 'scope', message: `must be one of ${SCOPES.join(', ')}` });
  const status = query.status;
  if (status !== undefined && !(LIST_STATUSES as readonly unknown[]).includes(status)) errors.push({ field: 'status', message: `must be one of ${LIST_STATUSES.join(', ')}` });
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { page, pageSize, scope: scope as string | undefined, status: status as string | undefined };
}

/** A page of the list as the answer gives it, from its rows of `listStatement` or `sharedListStatement`. */
export function pageFromRows(rows: readonly (Partial<VerificationRow> & { total: string | null })[], { page, pageSize }: ListFilters): VerificationPage {
  const total = Number(rows[0]?.total ?? 0);
  const pageRows = rows.filter((row): row is VerificationRow & { total: string | null } => row.reference !== null && row.reference !== undefined);
  return { data: pageRows.map(summaryFromRow), meta: { total, page, pageSize, totalPages: Math.ceil(total / pageSize) } };
}

/** One page as the list's statements read it. */
export interface PageRead {
  readonly organizationId: string;
  readonly environment: string;
  readonly scope: string | undefined;
  readonly status: string | undefined;
  readonly pageSize: number;
  readonly skip: number;
  /** A restricted key's scopes: the page shows checks of these only. Undefined: every scope. */
  readonly scopes?: readonly string[];
}

/** The page `filters` ask of `key`'s organization and environment (of its scopes, for a restricted key). */
export function pageRead(key: Pick<AuthenticatedKey, 'organizationId' | 'environment'> & ScopedReader, { page, pageSize, scope, status }: ListFilters): PageRead {
  const read = { organizationId: key.organizationId, environment: key.environment, scope, status, pageSize, skip: (page - 1) * pageSize };
  return key.keyScopes === undefined || key.keyScopes === null ? read : { ...read, scopes: key.keyScopes };
}

/** The columns of a list page's rows. */
const LIST_COLUMNS = 'reference, scope, status, price_kobo, charged, created_at';

/**
 * The list's statement for one page: most recent first, offset paging over the list indexes. One
 * round trip for the total and the page. The projection keeps the counts per scope and status: at
 * most 40 rows to sum, whatever the size of the organization. A page past the end still gives the
 * one row that carries the total (its verification columns null).
 * A named (prepared) statement per filter combination: PostgreSQL parses and plans it once per
 * connection instead of on every call, which is most of the cost of so small a query.
 *
 * A deep page (more than MAX_SHARED_PAGE_ROWS rows of index to walk) finds its references in the
 * list index alone (an index-only scan: every column it needs is in the index) and reads only its
 * own rows from the table. Read straight from the table, each skipped row costs a fetch of its own,
 * scattered over the table when a filter is set: at 100,000 rows skipped, three to five times the
 * index-only walk. The page's references are an array rather than a join: a generic plan does not
 * know the page is small, and planned the join of as many rows as it guessed (a tenth of the table)
 * as a sort of the whole organization. With both filters no list index covers the walk, which then
 * reads the table as before.
 */
export function listStatement({ organizationId, environment, scope, status, pageSize, skip, scopes }: PageRead): pg.QueryConfig {
  const conditions = ['organization_id = $1', 'environment = $2'];
  const params: unknown[] = [organizationId, environment];
  if (scope !== undefined) {
    params.push(scope);
    conditions.push(`scope = $${params.length}`);
  }
  if (status !== undefined) {
    params.push(status);
    conditions.push(`status = $${params.length}`);
  }
  if (scopes !== undefined) {
    params.push(scopes);
    conditions.push(`scope = any($${params.length}::text[])`);
  }
  const where = conditions.join(' and ');
  const filters = `${scope === undefined ? '' : '_scope'}${status === undefined ? '' : '_status'}${scopes === undefined ? '' : '_scopes'}`;
  const window = `order by created_at desc, reference desc limit $${params.length + 1} offset $${params.length + 2}`;
  const deep = skip + pageSize > MAX_SHARED_PAGE_ROWS;
  const page = deep
    ? `select ${LIST_COLUMNS} from verifications
         where reference = any(array(select reference from verifications where ${where} ${window})) order by created_at desc, reference desc`
    : `select ${LIST_COLUMNS} from verifications where ${where} ${window}`;
  return {
    name: `list_verifications${deep ? '_deep' : ''}${filters}`,
    text: `select t.total, v.* from (select sum(count) as total from verification_counts where ${where}) t
       left join lateral (${page}) v on true`,
    values: [...params, pageSize, skip],
  };
}

type ListRow = Partial<VerificationRow> & { total: string | null };

/** Statements of shared list pages under way at once, per filter combination; the pages arriving meanwhile wait and share the next. */
const PAGES_IN_FLIGHT = 2;
/** The most pages one statement reads. */
const PAGES_PER_STATEMENT = 100;
/**
 * A page shares a statement only when the index walk it needs (offset plus page size) is at most
 * this many rows: a deep page (tens of milliseconds at page 5,000) would hold every page sharing
 * its statement, so it goes alone, as before any sharing.
 */
const MAX_SHARED_PAGE_ROWS = 1_000;
/** The most rows of index walked by one shared statement, all its pages together. */
const MAX_STATEMENT_ROWS = 10_000;

const filtersOf = (read: Pick<PageRead, 'scope' | 'status'>) => ({ scope: read.scope !== undefined, status: read.status !== undefined });

/**
 * The list's statement for many pages at once, all with the same filters (`shape`): each page's
 * organization, environment, filter values, page size and offset are arrays unnest()ed in step, and
 * the total and the page are joined laterally to each, so every page is read by the same index scan
 * as a statement of its own would (EXPLAIN: an index scan of the filter's list index per page,
 * stopping at its limit). Each row carries its page's ordinal `i`, from 1.
 */
export function sharedListStatement(shape: { scope: boolean; status: boolean }, reads: readonly PageRead[]): pg.QueryConfig {
  const columns = ['organization_id', 'environment', ...(shape.scope ? ['scope'] : []), ...(shape.status ? ['status'] : [])];
  const matches = (alias: string) => columns.map((column) => `${alias}.${column} = b.${column}`).join(' and ');
  const values: unknown[] = [
    reads.map((read) => read.organizationId),
    reads.map((read) => read.environment),
    ...(shape.scope ? [reads.map((read) => read.scope)] : []),
    ...(shape.status ? [reads.map((read) => read.status)] : []),
    reads.map((read) => read.pageSize),
    reads.map((read) => read.skip),
  ];
  const arrays = columns.map((_, n) => `$${n + 1}::text[]`).join(', ');
  return {
    name: `list_verifications_shared${shape.scope ? '_scope' : ''}${shape.status ? '_status' : ''}`,
    text: `select b.i, t.total, v.* from unnest(${arrays}, $${columns.length + 1}::int[], $${columns.length + 2}::int[]) with ordinality b(${columns.join(', ')}, page_size, skip, i)
       cross join lateral (select sum(c.count) as total from verification_counts c where ${matches('c')}) t
       left join lateral (
         select w.reference, w.scope, w.status, w.price_kobo, w.charged, w.created_at from verifications w where ${matches('w')}
         order by w.created_at desc, w.reference desc limit b.page_size offset b.skip) v on true`,
    values,
  };
}

/**
 * Most recent first, offset paging; a key sees only its environment's checks, and a restricted key
 * only checks of its scopes.
 *
 * Pages asked for while PAGES_IN_FLIGHT statements of the same filters are under way share one
 * statement (sharedListStatement), as reads by reference do: alone, a page goes at once with a
 * statement of its own; under load one round trip to PostgreSQL serves many. A page's statement is
 * always sent after the page was asked for, so it shows every write answered before, as a statement
 * of its own would, and its rows are those a statement of its own would read.
 */
@QueryHandler(ListVerifications)
export class ListVerificationsHandler implements IQueryHandler<ListVerifications, VerificationPage> {
  /** One group per filter combination, so that each statement keeps its filter's index. */
  private readonly groups = new Map<string, GroupCommit<PageRead, ListRow[]>>();

  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  async execute({ key, query }: ListVerifications): Promise<VerificationPage> {
    const filters = parseListQuery(query);
    const read = pageRead(key, filters);
    // A restricted key's page goes alone: the shared statement reads whole organizations' scopes.
    const alone = read.skip + read.pageSize > MAX_SHARED_PAGE_ROWS || read.scopes !== undefined;
    const rows = alone ? await this.readAlone(read) : await this.groupOf(read).write(read);
    return pageFromRows(rows, filters);
  }

  private async readAlone(read: PageRead): Promise<ListRow[]> {
    const { rows } = await this.pool.query<ListRow>(listStatement(read));
    return rows;
  }

  private groupOf(read: PageRead): GroupCommit<PageRead, ListRow[]> {
    const shape = filtersOf(read);
    const name = `${shape.scope}:${shape.status}`;
    let group = this.groups.get(name);
    if (group === undefined) {
      group = new GroupCommit<PageRead, ListRow[]>({
        maxInFlight: PAGES_IN_FLIGHT,
        maxItems: PAGES_PER_STATEMENT,
        maxWeight: MAX_STATEMENT_ROWS,
        weight: (page) => page.skip + page.pageSize,
        writeOne: (page) => this.readAlone(page),
        writeMany: async (pages) => {
          const { rows } = await this.pool.query<ListRow & { i: string }>(sharedListStatement(shape, pages));
          const rowsOf = pages.map((): ListRow[] => []);
          for (const row of rows) {
            const page = rowsOf[Number(row.i) - 1];
            if (page === undefined) throw new InvariantViolated(`a shared list statement answered page ${row.i} of ${pages.length}`);
            page.push(row);
          }
          return rowsOf.map((value) => ({ status: 'fulfilled', value }));
        },
        // A page has no fault of its own: a failed statement fails every page that shared it.
        fatal: (error) => error,
      });
      this.groups.set(name, group);
    }
    return group;
  }
}
