import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { toAppend, type Event } from '../common/event.js';
import { streams } from '../common/streams.js';
import type { EventStore, EventToAppend, JsonObject } from '../event-store/event-store.port.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { createTestEventStore, testEventStoreKind, type TestEventStore } from '../../test/support/event-store.js';
import { describeOnProject } from '../../test/support/store-independent.js';
import { GENESIS_LINK, linkAfter, linkFor, storedLink } from '../wallets/wallet-chain.js';
import type { WalletId } from '../wallets/wallet-ledger.port.js';
import { checkpointMac, HistoryCheckpoints, historyCheckpointKey, stateToJson } from './history-checkpoints.js';
import { WalletHistory, type HistoryPageRequest } from './wallet-history.js';
import { WalletReplay, type ReplayState } from './wallet-replay.js';

const EVERY = 25;
const UNHASHED = 30;
const EVENTS = 333;
const START = Date.parse('2026-03-01T00:00:00Z');
const context = { correlationId: 'history-test', actor: { type: 'system' as const, id: 'test' } };

/** A minute apart, except every 40th event, stamped 90 minutes back (events need not be in time order). */
const stampOf = (revision: number) => new Date(START + revision * 60_000 - (revision % 40 === 39 ? 90 * 60_000 : 0));

const isReservation = (revision: number) => revision > 0 && revision !== 101 && revision % 3 !== 0 && revision % 50 !== 7;

/** The event at `revision` of the test wallet: fundings, reservations, captures and releases, and one event that is not a wallet event. */
function eventAt(wallet: WalletId, revision: number): Event<string, JsonObject> {
  const base = { schemaVersion: 1, organizationId: wallet.organizationId, environment: wallet.environment };
  if (revision === 101) return { type: 'SomethingElse', data: { ...base, amountKobo: 1 } };
  if (isReservation(revision)) return { type: 'WalletFundsReserved', data: { ...base, reference: `vrf_${revision}`, amountKobo: 1_000, scope: 'nin' } };
  // Every third event closes the reservation two before it, if there is one: some reservations stay open.
  if (revision % 3 === 0 && isReservation(revision - 2)) {
    const reference = `vrf_${revision - 2}`;
    return revision % 9 === 0
      ? { type: 'WalletReservationReleased', data: { ...base, reference, amountKobo: 1_000, reason: 'provider_failed' } }
      : { type: 'WalletDebited', data: { ...base, reference, amountKobo: 1_000 } };
  }
  return { type: 'WalletFunded', data: { ...base, fundingReference: `f-${revision}`, amountKobo: revision === 0 ? 10_000_000 : 50_000 } };
}

/**
 * Events `from` to `to` (exclusive) of the test wallet, chained as the ledger chains them onto
 * `link`; the first UNHASHED carry no link (written before the chain existed).
 */
function walletEvents(wallet: WalletId, from: number, to: number, link: string): { events: EventToAppend[]; link: string } {
  const streamId = streams.wallet(wallet.organizationId, wallet.environment);
  const events: EventToAppend[] = [];
  for (let revision = from; revision < to; revision++) {
    const unchained = toAppend(eventAt(wallet, revision), randomUUID(), context, stampOf(revision));
    const content = { ...unchained, metadata: unchained.metadata ?? {}, streamId, revision: BigInt(revision) };
    if (revision < UNHASHED) {
      events.push(unchained);
      link = linkAfter(link, content);
      continue;
    }
    const chain = linkFor(link, content);
    link = chain.hash;
    events.push({ ...unchained, metadata: { ...unchained.metadata, chain } });
  }
  return { events, link };
}

async function append(store: EventStore, wallet: WalletId, from: number, events: readonly EventToAppend[]): Promise<void> {
  const streamId = streams.wallet(wallet.organizationId, wallet.environment);
  for (let start = 0; start < events.length; start += 100) {
    const revision = from + start;
    await store.append(streamId, events.slice(start, start + 100), { expectedRevision: revision === 0 ? 'no_stream' : BigInt(revision - 1) });
  }
}

describe(`History pages from verified checkpoints on the ${testEventStoreKind()} event store`, () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let testStore: TestEventStore;
  let store: EventStore;
  const key = historyCheckpointKey(randomBytes(32));

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 4 });
    testStore = await createTestEventStore(database, pool);
    store = testStore.store;
  });
  afterAll(async () => {
    await testStore?.close();
    await pool?.end();
    await database?.drop();
  });

  const history = () => new WalletHistory(store, new HistoryCheckpoints(pool, key), EVERY);
  const newWallet = async (): Promise<WalletId> => {
    const wallet: WalletId = { organizationId: `org_${randomUUID().replaceAll('-', '')}`, environment: 'live' };
    await append(store, wallet, 0, walletEvents(wallet, 0, EVENTS, GENESIS_LINK).events);
    return wallet;
  };

  /** The answer of a replay from revision 0, as the endpoint gave it before checkpoints. */
  async function fullReplay(wallet: WalletId, request: HistoryPageRequest) {
    const replay = new WalletReplay(store, wallet, { to: request.asOf });
    const first = (request.page - 1) * request.pageSize;
    const entries = [];
    let index = 0;
    for await (const entry of replay.entries()) {
      if (index >= first && index < first + request.pageSize) entries.push(entry);
      index++;
    }
    return { entries, summary: replay.summary };
  }

  const REQUESTS: HistoryPageRequest[] = [
    { page: 1, pageSize: 20 },
    { page: 9, pageSize: 20 },
    { page: 4, pageSize: 100 },
    { page: 99, pageSize: 20 },
    { page: 1, pageSize: 20, asOf: stampOf(0) },
    { page: 3, pageSize: 10, asOf: new Date(stampOf(160).getTime() + 30_000) },
    { page: 2, pageSize: 100, asOf: stampOf(240) },
    { page: 1, pageSize: 5, asOf: new Date(START - 1) },
  ];

  /** A first page, a middle one, a partial last one and one as of a moment: enough to tell a checkpoint believed from one rejected. */
  const SOME = [REQUESTS[0], REQUESTS[1], REQUESTS[2], REQUESTS[5]] as HistoryPageRequest[];

  async function expectSameAnswers(wallet: WalletId, requests: readonly HistoryPageRequest[] = REQUESTS) {
    const pages = history();
    for (const request of requests) {
      const { entries, summary } = await pages.page(wallet, request);
      expect({ request, entries, summary }).toEqual({ request, ...(await fullReplay(wallet, request)) });
    }
  }

  const streamOf = (wallet: WalletId) => streams.wallet(wallet.organizationId, wallet.environment);
  const rows = async (wallet: WalletId) =>
    (
      await pool.query<{ revision: string; entries: string; latest_occurred_at: Date; state: JsonObject; mac: string }>(
        'select revision, entries, latest_occurred_at, state, mac from wallet_history_checkpoints where stream_id = $1 order by revision',
        [streamOf(wallet)],
      )
    ).rows;

  it('answers every page and as-of moment as a replay from revision 0 does, and after the first request replays at most a checkpoint interval plus the page and the tail', async () => {
    const wallet = await newWallet();
    const cold = await history().page(wallet, { page: 1, pageSize: 20 });
    // The first request replays the whole wallet and leaves a checkpoint every EVERY events, and one at its end.
    const regular = Array.from({ length: Math.floor(EVENTS / EVERY) }, (_, i) => (i + 1) * EVERY - 1);
    expect(cold.stats).toMatchObject({ eventsReplayed: EVENTS, pageFrom: undefined, checkpointsWritten: regular.length + 1 });
    expect((await rows(wallet)).map((row) => Number(row.revision))).toEqual([...regular, EVENTS - 1]);
    expect(cold.summary.chain).toMatchObject({ verified: true, unhashedEvents: UNHASHED, hashedFromRevision: String(UNHASHED) });
    expect(cold.summary.ledgerProblemCount).toBe(1);

    await expectSameAnswers(wallet);
    const tail = EVENTS % EVERY;
    for (const request of REQUESTS) {
      const { stats } = await history().page(wallet, request);
      expect({ request, stats }).toEqual({ request, stats: expect.objectContaining({ checkpointsRejected: 0, checkpointsWritten: 0 }) });
      expect(stats.eventsReplayed).toBeLessThanOrEqual(EVERY + request.pageSize + EVERY + tail);
    }
    const middle = await history().page(wallet, { page: 9, pageSize: 20 });
    expect(middle.stats.pageFrom).toBe(149n);
    expect(middle.stats.summaryFrom).toBe(332n);

    // Events appended after the newest checkpoint are replayed on top of it, and checkpointed on the way.
    await append(store, wallet, EVENTS, walletEvents(wallet, EVENTS, EVENTS + 40, cold.summary.chain.head).events);
    const grown = await history().page(wallet, { page: 1, pageSize: 20 });
    expect(grown.stats).toMatchObject({ summaryFrom: 332n, eventsReplayed: 20 + 40, checkpointsWritten: 2 });
    expect(grown.summary).toEqual((await fullReplay(wallet, { page: 1, pageSize: 20 })).summary);
    // The regular checkpoint at 349 and the new end, 372; the end at 332 is dropped.
    expect((await rows(wallet)).map((row) => Number(row.revision)).slice(-3)).toEqual([324, 349, 372]);
    expect((await history().page(wallet, { page: 1, pageSize: 20 })).stats).toMatchObject({ summaryFrom: 372n, eventsReplayed: 20, checkpointsWritten: 0 });
    await expectSameAnswers(wallet);
  });

  it('gives the same answers whatever is done to the checkpoint rows: figures changed, MACs changed, filter columns changed, rows signed for another history, rows deleted', async () => {
    const wallet = await newWallet();
    await history().page(wallet, { page: 1, pageSize: 20 });
    const good = await rows(wallet);
    const streamId = streamOf(wallet);

    // Figures changed in every row, the MAC left as it was.
    await pool.query(
      `update wallet_history_checkpoints set state = jsonb_set(jsonb_set(state, '{fundedKobo}', to_jsonb((state->>'fundedKobo')::bigint + 1000000)), '{entries}', '0') where stream_id = $1`,
      [streamId],
    );
    await expectSameAnswers(wallet, SOME);
    // Rewritten by the replays that passed them: the rows hold the true figures again.
    expect(await rows(wallet)).toEqual(good);

    // The MACs changed; then the columns used to pick a checkpoint.
    await pool.query(`update wallet_history_checkpoints set mac = repeat('a', 64) where stream_id = $1`, [streamId]);
    await expectSameAnswers(wallet, SOME);
    await pool.query(`update wallet_history_checkpoints set entries = 0, latest_occurred_at = '2000-01-01' where stream_id = $1`, [streamId]);
    await expectSameAnswers(wallet, SOME);
    await pool.query('delete from wallet_history_checkpoints where stream_id = $1', [streamId]);
    await history().page(wallet, { page: 1, pageSize: 20 });
    expect(await rows(wallet)).toEqual(good);

    // A row with a valid MAC (what a log replaced under the same stream id would leave): its link is not the log's.
    const [newest] = (await pool.query<{ state: JsonObject }>('select state from wallet_history_checkpoints where stream_id = $1 order by revision desc limit 1', [streamId])).rows;
    const forged: JsonObject = { ...newest?.state, link: 'b'.repeat(64), fundedKobo: 1 };
    await pool.query('update wallet_history_checkpoints set state = $3, mac = $4 where stream_id = $1 and revision = $2', [
      streamId,
      forged.revision,
      forged,
      checkpointMac(key, streamId, forged),
    ]);
    const seen = await history().page(wallet, { page: 1, pageSize: 20 });
    expect(seen.stats.checkpointsRejected).toBe(1);
    expect(seen.summary).toEqual((await fullReplay(wallet, { page: 1, pageSize: 20 })).summary);
    await expectSameAnswers(wallet, SOME);

    // Rows of one wallet copied to another's stream: the MAC binds the stream.
    const other = await newWallet();
    await pool.query(
      `insert into wallet_history_checkpoints (stream_id, revision, entries, latest_occurred_at, state, mac)
       select $2, revision, entries, latest_occurred_at, state, mac from wallet_history_checkpoints where stream_id = $1`,
      [streamId, streamOf(other)],
    );
    expect((await history().page(other, { page: 1, pageSize: 20 })).stats).toMatchObject({ checkpointsRejected: Math.floor(EVENTS / EVERY) + 1, pageFrom: undefined });
    await expectSameAnswers(other, SOME);

    await pool.query('delete from wallet_history_checkpoints where stream_id = $1', [streamId]);
    await expectSameAnswers(wallet, SOME);
    expect(await rows(wallet)).toEqual(good);
    // What is stored is the replay's own state at that revision, in full.
    expect(good.find((row) => row.revision === '324')?.state).toEqual(stateToJson(await stateAt(wallet, 324n)));
  });

  /** The state of a replay from revision 0 after `revision`. */
  async function stateAt(wallet: WalletId, revision: bigint): Promise<ReplayState> {
    let found: ReplayState | undefined;
    const replay = new WalletReplay(store, wallet, { stateEvery: Number(revision) + 1, onState: (state) => void (found ??= state) });
    for await (const _entry of replay.entries()) {
      // Only the state at `revision` is wanted.
    }
    if (found === undefined) throw new Error(`the replay gave no state at ${revision}`);
    return found;
  }

  describeOnProject('postgres', 'a log rewritten under its checkpoints', 'EventStoreDB has no rows to edit', () => {
    it('replays from the newest checkpoint the rewritten log still carries and writes the others afresh', async () => {
      const wallet = await newWallet();
      await history().page(wallet, { page: 1, pageSize: 20 });
      const streamId = streamOf(wallet);
      // Someone with write access to the database lowers the funding at revision 257 and re-hashes every event from there on:
      // a consistent chain, which only the checkpoints taken before the change can tell from the original.
      const events = await store.readStream(streamId, { fromRevision: 0n, maxCount: 1_000 });
      let link = (storedLink(events[256]?.metadata ?? {}) as { hash: string }).hash;
      const client = await pool.connect();
      try {
        await client.query('begin');
        await client.query('alter table events disable trigger events_no_update');
        for (const event of events.slice(257)) {
          const data = event.revision === 257n ? { ...event.data, amountKobo: 1 } : event.data;
          const { chain: _chain, ...rest } = event.metadata;
          const chain = linkFor(link, { ...event, data, metadata: rest, streamId });
          link = chain.hash;
          await client.query('update events set data = $3, metadata = $4 where stream_id = $1 and revision = $2', [streamId, event.revision.toString(), data, { ...rest, chain }]);
        }
        await client.query('alter table events enable trigger events_no_update');
        await client.query('commit');
      } finally {
        client.release();
      }

      const rewritten = await history().page(wallet, { page: 1, pageSize: 20 });
      // 332 (the end), 324, 299 and 274 were taken on the original history; 249 precedes the change.
      expect(rewritten.stats).toMatchObject({ checkpointsRejected: 4, summaryFrom: 249n });
      expect(rewritten.summary.chain).toMatchObject({ verified: true, head: link });
      expect(rewritten.summary.closing.fundedKobo).toBe((await fullReplay(wallet, { page: 1, pageSize: 20 })).summary.closing.fundedKobo);
      await expectSameAnswers(wallet);
      expect((await history().page(wallet, { page: 1, pageSize: 20 })).stats).toMatchObject({ checkpointsRejected: 0, summaryFrom: 332n });
    });
  });
});
