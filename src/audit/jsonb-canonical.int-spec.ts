import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import type { JsonObject, JsonValue } from '../event-store/event-store.port.js';
import { copyText, cutCopyRow, COPY_FIELDS } from '../event-store/postgres-stream-pages.js';
import { chainHash, GENESIS_LINK, linkFor } from '../wallets/wallet-chain.js';
import { copyRowChainHashes, NOT_COMPUTED } from './chain-hashes.js';
import { claimedHashOfCopyRow } from './jsonb-canonical.js';

const STREAM_ID = 'wallet-org_jsonb.live';
const PREVIOUS = 'ab'.repeat(32);

interface Row {
  readonly revision: number;
  readonly id?: string;
  readonly type: string;
  /** JSON text, stored as jsonb: PostgreSQL prints it back in its own layout. */
  readonly data: string;
  readonly metadata: string;
}

/** The metadata of a wallet event linked to PREVIOUS, with `extra` members. */
function metadata(extra: Record<string, JsonValue> = {}, chain: JsonValue = { version: 1, previous: PREVIOUS, hash: 'cd'.repeat(32) }): string {
  return JSON.stringify({ correlationId: 'c-1', causationId: null, actor: { type: 'api_key', id: 'key_1' }, occurredAt: '2026-03-03T13:00:00.000Z', chain, ...extra });
}

const DATA = { schemaVersion: 1, organizationId: 'org_jsonb', environment: 'live', reference: 'vrf_1', amountKobo: 500, scope: 'nin' };

// PostgreSQL's jsonb text, through COPY as the audit reads it: the transcoder's input is only ever that.
describe('The canonical form written from the bytes of a COPY row (jsonb-canonical.ts)', () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    await pool.query(`create table copy_rows (position bigint, revision bigint, event_id uuid, type text, data jsonb, metadata jsonb, created_at timestamptz default now())`);
  });

  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  /** The rows as the COPY reader selects them, one Buffer each (newline included). */
  async function copyRows(rows: readonly Row[]): Promise<Buffer[]> {
    const client = await pool.connect();
    try {
      await client.query('truncate copy_rows');
      // One statement for all the rows: this suite runs beside others on the same cluster.
      await client.query(
        `insert into copy_rows (position, revision, event_id, type, data, metadata)
         select * from unnest($1::bigint[], $2::bigint[], $3::uuid[], $4::text[], $5::text[]::jsonb[], $6::text[]::jsonb[])`,
        [
          rows.map((_, index) => index + 1),
          rows.map((row) => row.revision),
          rows.map((row) => row.id ?? randomUUID()),
          rows.map((row) => row.type),
          rows.map((row) => row.data),
          rows.map((row) => row.metadata),
        ],
      );
      const copy = client.query(
        copyTo('copy (select position, revision, event_id, type, data, metadata, floor(extract(epoch from created_at) * 1000) from copy_rows order by position) to stdout'),
      );
      const chunks: Buffer[] = [];
      for await (const chunk of copy as AsyncIterable<Buffer>) chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      const lines: Buffer[] = [];
      for (let start = 0; start < bytes.length;) {
        const end = bytes.indexOf(0x0a, start);
        lines.push(bytes.subarray(start, end + 1));
        start = end + 1;
      }
      return lines;
    } finally {
      client.release();
    }
  }

  /** The claimed hash the exact way: the row decoded, parsed, and hashed by the chain's own canonical form; NOT_COMPUTED where that has none. */
  function parsedHash(line: Buffer): string {
    const fields = new Array<string>(COPY_FIELDS);
    cutCopyRow(line.toString('utf8'), 0, fields);
    const parsedMetadata = JSON.parse(copyText(fields[5])) as JsonObject;
    const chain = parsedMetadata.chain as { previous?: unknown } | undefined;
    if (typeof chain !== 'object' || chain === null || Array.isArray(chain) || typeof chain.previous !== 'string') return NOT_COMPUTED;
    return chainHash(chain.previous, {
      streamId: STREAM_ID,
      revision: BigInt(fields[1]),
      id: fields[2],
      type: copyText(fields[3]),
      data: JSON.parse(copyText(fields[4])) as JsonObject,
      metadata: parsedMetadata,
    });
  }

  const fast = (line: Buffer) => claimedHashOfCopyRow(line, 0, line.length - 1, Buffer.from(JSON.stringify(STREAM_ID)));

  it('hashes a wallet event from its bytes to the hash of the parsed event, and a ledger-written link to its stored hash', async () => {
    const content = { streamId: STREAM_ID, revision: 7n, id: randomUUID(), type: 'WalletFundsReserved', data: DATA, metadata: JSON.parse(metadata()) as JsonObject };
    const link = linkFor(GENESIS_LINK, content);
    const [line, other] = await copyRows([
      { revision: 7, id: content.id, type: 'WalletFundsReserved', data: JSON.stringify(DATA), metadata: metadata({}, { ...link, previous: GENESIS_LINK }) },
      {
        revision: 123_456_789,
        type: 'WalletFunded',
        data: JSON.stringify({ ...DATA, fundingReference: 'f-1', nested: { b: { d: 1, c: [] as never }, a: true } }),
        metadata: metadata({ empty: {} }),
      },
    ]);
    expect(fast(line)).toBe(link.hash);
    expect(parsedHash(line)).toBe(link.hash);
    expect(fast(other)).toBeUndefined();
    expect(copyRowChainHashes(STREAM_ID, Buffer.concat([line, other]))).toBe(parsedHash(line) + parsedHash(other));
    // A link with a longer key than previous: jsonb prints previous before it, where it is searched for.
    const [annotated] = await copyRows([
      { revision: 8, type: 'WalletFunded', data: JSON.stringify(DATA), metadata: metadata({}, { ...link, previous: PREVIOUS, annotation: 'x' }) },
    ]);
    expect(annotated.toString('utf8')).toMatch(/"previous": "[0-9a-f]{64}", "annotation": "x"\}/);
    expect(fast(annotated)).toBeDefined();
    expect(fast(annotated)).toBe(parsedHash(annotated));
  });

  it('takes the exact path for whatever it does not handle, and the answers stay those of the parsed event', async () => {
    const cases: Row[] = [
      // Handled: nested objects, empty objects, literals, negative integers, keys that sort differently in jsonb and JCS.
      {
        revision: 0,
        type: 'WalletFunded',
        data: JSON.stringify({ ...DATA, zz: { b: 1, a: { d: null, c: false } }, e: {}, n: -12, aa: true }),
        metadata: metadata({ long_key_first: 1, k: 'v' }),
      },
      // Not handled: escapes, text beyond ASCII, numbers that are not small integers, arrays, too deep, odd links.
      { revision: 1, type: 'WalletFunded', data: JSON.stringify({ ...DATA, note: 'quote " and backslash \\' }), metadata: metadata() },
      { revision: 2, type: 'WalletFunded', data: JSON.stringify({ ...DATA, note: 'tab\tnewline\n' }), metadata: metadata() },
      { revision: 3, type: 'WalletFunded', data: JSON.stringify({ ...DATA, note: 'naïve 😀' }), metadata: metadata() },
      { revision: 4, type: 'WalletFunded', data: JSON.stringify({ ...DATA, amountKobo: 1.5 }), metadata: metadata() },
      { revision: 5, type: 'WalletFunded', data: '{"amountKobo": 1e3, "negativeZero": -0, "big": 12345678901234567890}', metadata: metadata() },
      { revision: 6, type: 'WalletFunded', data: JSON.stringify(DATA).replace(/"amountKobo":\d+/, '"amountKobo":9007199254740993'), metadata: metadata() },
      { revision: 7, type: 'WalletFunded', data: JSON.stringify({ ...DATA, list: [1, 2] }), metadata: metadata() },
      { revision: 8, type: 'WalletFunded', data: JSON.stringify({ a: { b: { c: { d: { e: { f: 1 } } } } } }), metadata: metadata() },
      { revision: 9, type: 'WalletFunded', data: '[1]', metadata: metadata() },
      { revision: 10, type: 'WalletFunded', data: JSON.stringify(DATA), metadata: metadata({}, { version: 1, previous: 'short', hash: 'x' }) },
      { revision: 11, type: 'WalletFunded', data: JSON.stringify(DATA), metadata: metadata({}, { version: 1, previous: 7, hash: 'x' }) },
      { revision: 12, type: 'WalletFunded', data: JSON.stringify(DATA), metadata: metadata({}, { version: 1, previous: PREVIOUS, extra: { a: 1 } }) },
      { revision: 13, type: 'WalletFunded', data: JSON.stringify(DATA), metadata: metadata({}, 'not a link') },
      { revision: 14, type: 'WalletFunded', data: JSON.stringify(DATA), metadata: JSON.stringify({ actor: { type: 'system', id: 'x' } }) },
      { revision: 15, type: 'Wallet "Funded"', data: JSON.stringify(DATA), metadata: metadata() },
      { revision: 16, type: 'Wallet\tFunded', data: JSON.stringify(DATA), metadata: metadata() },
      { revision: 17, type: 'WalletFunded', data: JSON.stringify(DATA), metadata: metadata({ chainNote: 'the "previous": "' }) },
    ];
    const lines = await copyRows(cases);
    expect(fast(lines[0])).toBe(parsedHash(lines[0]));
    for (const [index, line] of lines.entries()) {
      if (index > 0) expect({ revision: index, fast: fast(line) }).toEqual({ revision: index, fast: undefined });
      expect(copyRowChainHashes(STREAM_ID, line)).toBe(parsedHash(line));
    }
    expect(parsedHash(lines[13])).toBe(NOT_COMPUTED);
    expect(parsedHash(lines[14])).toBe(NOT_COMPUTED);
  });

  it('gives the parsed event hash for any JSON PostgreSQL prints', async () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }));
    const member = fc.oneof(
      text,
      fc.integer({ min: -1e15 + 1, max: 1e15 - 1 }),
      fc.boolean(),
      fc.constant(null),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.jsonValue({ maxDepth: 2 }),
    );
    // Mostly what the transcoder handles (ASCII text, small integers, literals, nested objects), and any JSON besides.
    // ASCII without a quote or backslash, with the characters of jsonb's layout (`, `, `: `, braces) inside strings.
    const handledText = (maxLength: number) => fc.string({ unit: fc.constantFrom(...' !#$%&()*+,-./09:;<=>?@AZaz[]^_`{|}~'), maxLength });
    const handledMember = fc.oneof(handledText(12), fc.integer({ min: -1e15 + 1, max: 1e15 - 1 }), fc.boolean(), fc.constant(null));
    const handledObject = fc.dictionary(handledText(12), fc.oneof(handledMember, fc.dictionary(handledText(6), handledMember, { maxKeys: 4 })), { maxKeys: 8 });
    // jsonb stores no NUL character.
    const anyObject = fc
      .dictionary(fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 4 })), member, { maxKeys: 8 })
      .filter((value) => !JSON.stringify(value).includes('\\u0000'));
    let transcodedRows = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.oneof({ arbitrary: handledObject, weight: 3 }, { arbitrary: anyObject, weight: 1 }),
            fc.oneof({ arbitrary: handledObject, weight: 3 }, { arbitrary: anyObject, weight: 1 }),
          ),
          { minLength: 1, maxLength: 20 },
        ),
        async (pairs) => {
          const lines = await copyRows(
            pairs.map(([data, extra], revision) => ({ revision, type: 'WalletFunded', data: JSON.stringify(data), metadata: metadata(extra as Record<string, JsonValue>) })),
          );
          for (const line of lines) {
            const expected = parsedHash(line);
            const transcoded = fast(line);
            if (transcoded !== undefined) {
              transcodedRows++;
              expect(transcoded).toBe(expected);
            }
            expect(copyRowChainHashes(STREAM_ID, line)).toBe(expected);
          }
        },
      ),
      { numRuns: 60 },
    );
    // The transcoder itself was exercised, not only the exact path it falls back to.
    expect(transcodedRows).toBeGreaterThan(100);
  });

  it('gives another hash than the stored one for an event changed under its link, as the parsed path does', async () => {
    const id = randomUUID();
    const content = { streamId: STREAM_ID, revision: 3n, id, type: 'WalletDebited', data: DATA, metadata: JSON.parse(metadata()) as JsonObject };
    const link = linkFor(PREVIOUS, content);
    const stored = metadata({}, link);
    const changes: Row[] = [
      { revision: 3, id, type: 'WalletDebited', data: JSON.stringify({ ...DATA, amountKobo: 501 }), metadata: stored },
      { revision: 3, id, type: 'WalletDebited', data: JSON.stringify({ ...DATA, extra: 1 }), metadata: stored },
      { revision: 3, id, type: 'WalletReservationReleased', data: JSON.stringify(DATA), metadata: stored },
      { revision: 4, id, type: 'WalletDebited', data: JSON.stringify(DATA), metadata: stored },
      { revision: 3, id: randomUUID(), type: 'WalletDebited', data: JSON.stringify(DATA), metadata: stored },
      { revision: 3, id, type: 'WalletDebited', data: JSON.stringify(DATA), metadata: metadata({ actor: { type: 'operator', id: 'admin' } }, link) },
    ];
    const [untouched, ...changed] = await copyRows([{ revision: 3, id, type: 'WalletDebited', data: JSON.stringify(DATA), metadata: stored }, ...changes]);
    expect(fast(untouched)).toBe(link.hash);
    for (const line of changed) {
      const transcoded = fast(line);
      expect(transcoded).toBeDefined();
      expect(transcoded).not.toBe(link.hash);
      expect(transcoded).toBe(parsedHash(line));
    }
  });
});
