import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import type { EventToAppend, JsonObject } from '../event-store/event-store.port.js';
import { PostgresEventStore } from '../event-store/postgres-event-store.js';
import { type CopyRowsSidecar, postgresStreamCopy, postgresStreamCopyWith } from '../event-store/postgres-stream-pages.js';
import { GENESIS_LINK, linkFor } from '../wallets/wallet-chain.js';
import type { WalletId } from '../wallets/wallet-ledger.port.js';
import { CHAIN_HASH_WIDTH, copyRowChainHashes, IN_THREAD_CHAIN_HASHES, NOT_COMPUTED } from './chain-hashes.js';
import { type AuditEntry, type ReplayOptions, WalletReplay } from './wallet-replay.js';

const EVENTS = 2_345;
const PRICE_KOBO = 500;

/** The in-thread sidecar, each answer held back a random while: the reader must pair answers with rows whatever their timing. */
const LATE_CHAIN_HASHES: CopyRowsSidecar = {
  width: CHAIN_HASH_WIDTH,
  submit: async (streamId, rows) => {
    const answer = await IN_THREAD_CHAIN_HASHES.submit(streamId, rows);
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)));
    return answer;
  },
};

// Reads the PostgreSQL event table whichever store the run is configured for, as the COPY reader does.
describe('The chain hashes computed beside the COPY reader', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let store: PostgresEventStore;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    store = new PostgresEventStore({ pool, connectionString: database.url });
  });

  afterAll(async () => {
    await store.close();
    await pool.end();
    await database.drop();
  });

  /** A wallet whose first `unhashed` events carry no chain (written before it existed), then reservations and debits, chained. */
  async function writeWallet(unhashed: number): Promise<{ wallet: WalletId; streamId: string }> {
    const wallet: WalletId = { organizationId: `org_${randomUUID().slice(0, 8)}`, environment: 'live' };
    const streamId = `wallet-${wallet.organizationId}.live`;
    const base = { schemaVersion: 1, organizationId: wallet.organizationId, environment: wallet.environment };
    let link = GENESIS_LINK;
    const events: EventToAppend[] = [];
    for (let revision = 0; revision < EVENTS; revision++) {
      const type = revision === 0 ? 'WalletFunded' : revision % 2 === 1 ? 'WalletFundsReserved' : 'WalletDebited';
      const data =
        revision === 0
          ? { ...base, fundingReference: 'fund-1', amountKobo: EVENTS * PRICE_KOBO }
          : { ...base, reference: `vrf_${Math.ceil(revision / 2)}`, amountKobo: PRICE_KOBO, ...(type === 'WalletFundsReserved' ? { scope: 'nin' } : {}) };
      // Text COPY escapes, and characters beyond ASCII, in some events.
      const metadata: JsonObject = {
        correlationId: revision % 97 === 0 ? `tab\there\nline \\ é 😀 ${revision}` : `c-${revision}`,
        actor: { type: 'system', id: 'test' },
        occurredAt: new Date(Date.UTC(2026, 2, 3, 13, 0, 0, revision)).toISOString(),
      };
      const id = randomUUID();
      if (revision < unhashed) {
        link = linkFor(link, { streamId, revision: BigInt(revision), id, type, data, metadata }).hash;
        events.push({ id, type, data, metadata });
      } else {
        const chain = linkFor(link, { streamId, revision: BigInt(revision), id, type, data, metadata });
        link = chain.hash;
        events.push({ id, type, data, metadata: { ...metadata, chain } });
      }
    }
    for (let i = 0; i < events.length; i += 1_000) await store.append(streamId, events.slice(i, i + 1_000), { expectedRevision: i === 0 ? 'no_stream' : BigInt(i - 1) });
    return { wallet, streamId };
  }

  /** Rewrites rows of the event table by hand, as someone with write access to the database could. */
  async function tamper(streamId: string, changes: ReadonlyArray<{ revision: number; set: string }>): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('alter table events disable trigger events_no_update');
      for (const { revision, set } of changes) await client.query(`update events set ${set} where stream_id = $1 and revision = $2`, [streamId, revision]);
      await client.query('alter table events enable trigger events_no_update');
      await client.query('commit');
    } finally {
      client.release();
    }
  }

  async function replay(wallet: WalletId, options: ReplayOptions): Promise<{ entries: AuditEntry[]; summary: WalletReplay['summary'] }> {
    const run = new WalletReplay(store, wallet, { pageSize: 300, ...options });
    const entries: AuditEntry[] = [];
    for await (const page of run.pages()) entries.push(...page);
    return { entries, summary: run.summary };
  }

  it('answers, per COPY row, the hash of its content on its stored previous link, and dashes where it has none', async () => {
    const { streamId } = await writeWallet(3);
    const events = await store.readStream(streamId, { maxCount: 10 });
    const { rows } = await pool.query<{ line: string }>(
      `select concat_ws(e'\\t', position, revision, event_id, type, data, metadata, floor(extract(epoch from created_at) * 1000)) as line from events where stream_id = $1 and revision < 10 order by revision`,
      [streamId],
    );
    const hashes = copyRowChainHashes(streamId, Buffer.from(rows.map((row) => `${row.line}\n`).join(''), 'utf8'));
    expect(hashes).toHaveLength(10 * CHAIN_HASH_WIDTH);
    for (const [i, event] of events.entries()) {
      const chain = event.metadata.chain as { hash: string } | undefined;
      expect(hashes.slice(i * CHAIN_HASH_WIDTH, (i + 1) * CHAIN_HASH_WIDTH)).toBe(chain === undefined ? NOT_COMPUTED : chain.hash);
    }
  });

  it('gives the events and pages of the COPY reader, with the stored hash of each chained event, whatever the answers timing', async () => {
    const { streamId } = await writeWallet(5);
    const plain = [];
    for await (const page of postgresStreamCopy(pool)(streamId, 0n, 400)) plain.push(page);
    const hashed = [];
    for await (const page of postgresStreamCopyWith(pool, LATE_CHAIN_HASHES)(streamId, 0n, 400)) hashed.push(page);
    expect(hashed.map((page) => page.events)).toEqual(plain);
    expect(hashed.map((page) => page.events.length)).toEqual([...Array<number>(5).fill(400), 345]);
    const claimed = hashed.map((page) => page.side).join('');
    const stored = plain
      .flat()
      .map((event) => (event.metadata.chain as { hash: string } | undefined)?.hash ?? NOT_COMPUTED)
      .join('');
    expect(claimed).toBe(stored);

    // Broken off after the first page: the session is closed and the pool goes on.
    for await (const page of postgresStreamCopyWith(pool, LATE_CHAIN_HASHES)(streamId, 2_000n, 100)) {
      expect(page.events[0].revision).toBe(2_000n);
      break;
    }
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('lets the replay find what it finds without them: the same entries, the same first break and counts, on a tampered log', async () => {
    const { wallet, streamId } = await writeWallet(4);
    const hexOf = (character: string) => character.repeat(64);
    await tamper(streamId, [
      // The content changed under its hash.
      { revision: 10, set: `data = jsonb_set(data, '{amountKobo}', '1')` },
      // A link whose hash is the worker's "not computed" answer, and one of a hash in capitals.
      { revision: 20, set: `metadata = jsonb_set(metadata, '{chain,hash}', '"${NOT_COMPUTED}"')` },
      { revision: 30, set: `metadata = jsonb_set(metadata, '{chain,hash}', to_jsonb(upper(metadata #>> '{chain,hash}')))` },
      // Another version, a previous that is not the link before, and a hash stripped.
      { revision: 40, set: `metadata = jsonb_set(metadata, '{chain,version}', '2')` },
      { revision: 50, set: `metadata = jsonb_set(metadata, '{chain,previous}', '"${hexOf('a')}"')` },
      { revision: 60, set: `metadata = metadata - 'chain'` },
      { revision: 70, set: `metadata = jsonb_set(metadata, '{chain}', '"not a link"')` },
      { revision: 80, set: `metadata = jsonb_set(metadata, '{chain,previous}', '7')` },
      // An unhashed event changed: the first hashed event no longer follows it.
      { revision: 2, set: `data = jsonb_set(data, '{amountKobo}', '2')` },
    ]);
    const inThread = await replay(wallet, { readPages: postgresStreamCopy(pool) });
    const beside = await replay(wallet, { readHashedPages: postgresStreamCopyWith(pool, LATE_CHAIN_HASHES) });
    expect(inThread.summary.chain.verified).toBe(false);
    expect(inThread.summary.chain.firstBreak).toMatchObject({ revision: '4', kind: 'link_broken' });
    expect(inThread.entries.filter((entry) => entry.chain === 'broken').map((entry) => Number(entry.revision))).toEqual([4, 10, 20, 30, 40, 50, 60, 70, 80]);
    expect(beside.summary).toEqual(inThread.summary);
    expect(beside.entries).toEqual(inThread.entries);
    // And the same as the store's own reader gives.
    expect((await replay(wallet, {})).entries).toEqual(inThread.entries);
  });
});
