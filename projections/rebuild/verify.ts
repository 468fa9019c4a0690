import type pg from 'pg';

/** Keys of differing rows listed per table and direction: enough to find them, bounded output. */
export const MAX_LISTED_DIFFERENCES = 10;

export interface TableDifference {
  readonly table: string;
  /** Rows in the live table that the rebuild does not have (counted with duplicates). */
  readonly onlyLive: number;
  /** Rows the rebuild has that the live table does not. */
  readonly onlyRebuilt: number;
  /**
   * Primary keys of some differing rows (never whole rows: they may hold personal data). A key
   * present on both sides is a row whose other columns differ.
   */
  readonly sampleKeys: { readonly side: 'live' | 'rebuilt'; readonly key: Record<string, unknown> }[];
}

type Queryable = Pick<pg.PoolClient, 'query'>;

async function columnsOf(client: Queryable, table: string): Promise<string[]> {
  const { rows } = await client.query<{ column: string }>(
    `select quote_ident(attname) as column from pg_attribute where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum`,
    [table],
  );
  return rows.map((row) => row.column);
}

async function primaryKeyOf(client: Queryable, table: string): Promise<string[]> {
  const { rows } = await client.query<{ column: string }>(
    `select quote_ident(a.attname) as column from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
     where i.indrelid = $1::regclass and i.indisprimary order by array_position(i.indkey::int2[], a.attnum)`,
    [table],
  );
  return rows.map((row) => row.column);
}

/**
 * Compares a live table with its rebuilt twin on every column (`except all`, both ways). Runs in
 * the caller's transaction, so inside the swap both sides stand at the same position.
 */
export async function compareTables(client: Queryable, live: string, rebuilt: string): Promise<TableDifference> {
  const columns = await columnsOf(client, live);
  if (columns.length === 0) throw new Error(`invariant: table ${live} has no columns`);
  const list = columns.join(', ');
  const key = await primaryKeyOf(client, live);
  const keyList = key.length > 0 ? key.join(', ') : list;
  const onlyIn = (a: string, b: string) => `select ${list} from ${a} except all select ${list} from ${b}`;
  const count = async (a: string, b: string) => Number((await client.query<{ count: string }>(`select count(*) as count from (${onlyIn(a, b)}) d`)).rows[0].count);
  const sample = async (a: string, b: string) =>
    key.length === 0 ? [] : (await client.query<Record<string, unknown>>(`select ${keyList} from (${onlyIn(a, b)}) d order by ${keyList} limit ${MAX_LISTED_DIFFERENCES}`)).rows;
  const [onlyLive, onlyRebuilt] = [await count(live, rebuilt), await count(rebuilt, live)];
  const sampleKeys = [
    ...(onlyLive > 0 ? await sample(live, rebuilt) : []).map((row) => ({ side: 'live' as const, key: row })),
    ...(onlyRebuilt > 0 ? await sample(rebuilt, live) : []).map((row) => ({ side: 'rebuilt' as const, key: row })),
  ];
  return { table: live, onlyLive, onlyRebuilt, sampleKeys };
}
