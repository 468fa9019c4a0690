import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { describeOnPostgresProjectOnly } from '../../test/support/store-independent.js';
import { createPool } from '../database/pool.js';
import { listStatement, sharedListStatement, type PageRead } from './verification.queries.js';

const ORGANIZATIONS = ['org_list_a', 'org_list_b', 'org_list_c'];
const SCOPES = ['nin', 'bvn', 'phone'];
const STATUSES = ['found', 'not_found', 'failed', 'pending'];
/** Rows of the large organization: enough that PostgreSQL's generic plans prefer the list indexes over a scan. */
const LARGE_ROWS = 20_000;

const SHAPES = [
  { scope: false, status: false },
  { scope: true, status: false },
  { scope: false, status: true },
  { scope: true, status: true },
] as const;

type Row = Record<string, unknown>;

/** Every page the statements are asked for: several organizations and environments, page sizes, offsets within, at and past the end. */
function pagesOf(shape: { scope: boolean; status: boolean }): PageRead[] {
  const pages: PageRead[] = [];
  for (const organizationId of [...ORGANIZATIONS, 'org_list_none']) {
    for (const environment of ['test', 'live']) {
      for (const [pageSize, skip] of [
        [20, 0],
        [7, 14],
        [100, 0],
        [3, 57],
        [20, 980],
        [20, 5_000],
        [10, 12_000],
        [5, 100_000],
      ]) {
        pages.push({
          organizationId,
          environment,
          scope: shape.scope ? SCOPES[(pages.length + pageSize) % SCOPES.length] : undefined,
          status: shape.status ? STATUSES[(pages.length + skip) % 3] : undefined,
          pageSize,
          skip,
        });
      }
    }
  }
  return pages;
}

/** The index scans of a plan's nodes on `verifications`, and whether it has any other access to the table or a sort. */
function accessesOf(plan: { Plans?: unknown[] } & Record<string, unknown>, found: { indexes: string[]; other: string[] } = { indexes: [], other: [] }) {
  if (plan['Relation Name'] === 'verifications') {
    if (plan['Node Type'] === 'Index Scan') found.indexes.push(String(plan['Index Name']));
    else found.other.push(String(plan['Node Type']));
  }
  if (plan['Node Type'] === 'Sort') found.other.push('Sort');
  for (const child of plan.Plans ?? []) accessesOf(child as typeof plan, found);
  return found;
}

describeOnPostgresProjectOnly('the list statements', 'the read models are in PostgreSQL on both event stores', () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    // As the service connects: generic plans for its prepared statements (pool.ts).
    pool = createPool(database.url, 2);
    // Rows of several organizations and both environments, some created at the same instant (the reference breaks the tie).
    await pool.query(
      `insert into verifications (reference, organization_id, environment, key_id, scope, category, country_code, status, request, result, price_kobo, charged, created_at)
       select 'vrf_' || o.n || lpad(g::text, 8, '0'), o.id, (array['test', 'live'])[1 + (g % 5 = 0)::int], 'key_list', ($1::text[])[1 + g % 3], 'kyc', 'NG',
              ($2::text[])[1 + (g * 7) % 4], '{}', '{}', 100 * (g % 9), g % 4 <> 2, timestamptz '2026-11-01' + ((g / 3) || ' seconds')::interval
         from unnest($3::text[]) with ordinality o(id, n)
         cross join lateral generate_series(1, case when o.n = 1 then $4::int else 300 end) g`,
      [SCOPES, STATUSES, ORGANIZATIONS, LARGE_ROWS],
    );
    await pool.query(
      `insert into verification_counts (organization_id, environment, scope, status, count)
       select organization_id, environment, scope, status, count(*) from verifications group by 1, 2, 3, 4`,
    );
    await pool.query('analyze verifications, verification_counts');
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it.each(SHAPES)('one shared statement (scope filter: $scope, status filter: $status) reads each page as its own statement does', async (shape) => {
    const pages = pagesOf(shape);
    const alone: Row[][] = [];
    for (const page of pages) alone.push((await pool.query<Row>(listStatement(page))).rows);
    const { rows } = await pool.query<Row & { i: string }>(sharedListStatement(shape, pages));
    const shared = pages.map((): Row[] => []);
    for (const { i, ...row } of rows) shared[Number(i) - 1].push(row);
    expect(shared).toEqual(alone);
    // Not a vacuous comparison: many pages have rows, some none past the end.
    expect(alone.filter((page) => page.length > 1).length).toBeGreaterThan(pages.length / 4);
    expect(alone.some((page) => page.length === 1 && page[0].reference === null)).toBe(true);
  });

  it.each(SHAPES)('the shared statement (scope filter: $scope, status filter: $status) reads each page through the index its own statement uses, with no sort', async (shape) => {
    const [page] = pagesOf(shape);
    const own = accessesOf(await genericPlanOf(listStatement(page)));
    const shared = accessesOf(await genericPlanOf(sharedListStatement(shape, [page, { ...page, organizationId: ORGANIZATIONS[1] }])));
    expect(own.other).toEqual([]);
    expect(own.indexes).toHaveLength(1);
    expect(shared).toEqual(own);
  });

  it.each(SHAPES)(
    'a deep page (scope filter: $scope, status filter: $status) walks its list index alone and reads only its own rows from the table, sorting just those',
    async (shape) => {
      const deep = pagesOf(shape).find((page) => page.organizationId === ORGANIZATIONS[0] && page.skip === 5_000) as PageRead;
      const nodes: string[] = [];
      const walk = (plan: { Plans?: unknown[] } & Record<string, unknown>) => {
        if (plan['Relation Name'] === 'verifications') nodes.push(`${String(plan['Node Type'])} ${String(plan['Index Name'])}`);
        if (plan['Node Type'] === 'Sort') nodes.push('Sort');
        for (const child of plan.Plans ?? []) walk(child as typeof plan);
      };
      walk(await genericPlanOf(listStatement(deep)));
      if (shape.scope && shape.status) {
        // No list index holds both filters' columns: the walk reads the table through one of them.
        expect(nodes.sort()).toEqual([expect.stringMatching(/^Index Scan verifications_list_(scope|status)$/), 'Index Scan verifications_pkey', 'Sort']);
      } else {
        expect(nodes.sort()).toEqual([`Index Only Scan verifications_list${shape.scope ? '_scope' : shape.status ? '_status' : ''}`, 'Index Scan verifications_pkey', 'Sort']);
      }
    },
  );

  /** The plan PostgreSQL uses for `statement` prepared, as the service's connections prepare it (generic, whatever the values). */
  async function genericPlanOf(statement: pg.QueryConfig): Promise<{ Plans?: unknown[] } & Record<string, unknown>> {
    const client = await pool.connect();
    try {
      await client.query(`prepare list_plan as ${statement.text}`);
      try {
        // EXPLAIN takes no bound parameters: the values go in as literals.
        const literal = (value: unknown): string =>
          Array.isArray(value) ? `array[${value.map(literal).join(', ')}]` : typeof value === 'number' ? String(value) : client.escapeLiteral(String(value));
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(
          `explain (format json) execute list_plan(${(statement.values ?? []).map(literal).join(', ')})`,
        );
        return rows[0]['QUERY PLAN'][0].Plan;
      } finally {
        await client.query('deallocate list_plan');
      }
    } finally {
      client.release();
    }
  }
});
