import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { SystemClock } from '../common/clock.js';
import { InvariantViolated, ServiceUnavailable } from '../common/errors.js';
import { asDomainEvent, type CommandContext } from '../common/event.js';
import { RandomIdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import type { EventStore, RecordedEvent } from '../event-store/event-store.port.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { createTestEventStore, testEventStoreKind } from '../../test/support/event-store.js';
import { describeOnProject } from '../../test/support/store-independent.js';
import { availableKobo, evolve, initialWalletState } from './wallet.decider.js';
import type { WalletEvent } from './wallet.events.js';
import { checkLink, GENESIS_LINK, linkAfter } from './wallet-chain.js';
import { EventSourcedWalletLedger, type WalletLedgerOptions } from './wallet-ledger.js';
import { PostgresWalletSnapshots } from './wallet-snapshots.js';
import type { Alongside, AlongsideOutcome, ReserveOutcome, WalletId } from './wallet-ledger.port.js';
import { AlongsideRefused } from '../event-sourcing/event-sourced-handler.js';

const context: CommandContext = { correlationId: 'req-wallet-ledger-test', actor: { type: 'system', id: 'test' } };
const PRICE_KOBO = 1_000;

// Two connections to one store (two store clients on one test server on esdb): two app instances.
async function connect(database: TestDatabase) {
  const pool = new pg.Pool({ connectionString: database.url, max: 8 });
  const testStore = await createTestEventStore(database, pool);
  const { store } = testStore;
  const ledger = new EventSourcedWalletLedger(store, new SystemClock(), new RandomIdGenerator());
  return { pool, store, testStore, ledger };
}

function newWallet(): WalletId {
  return { organizationId: `org_${randomUUID().replaceAll('-', '')}`, environment: 'test' };
}

describe(`Wallet ledger on the ${testEventStoreKind()} event store`, () => {
  let database: TestDatabase;
  let a: Awaited<ReturnType<typeof connect>>;
  let b: Awaited<ReturnType<typeof connect>>;

  beforeAll(async () => {
    database = await createTestDatabase();
    a = await connect(database);
    b = await connect(database);
  });

  afterAll(async () => {
    for (const instance of [a, b]) {
      await instance?.testStore.close();
      await instance?.pool.end();
    }
    await database?.drop();
  });

  async function history(wallet: WalletId): Promise<RecordedEvent[]> {
    return a.store.readStream(streams.wallet(wallet.organizationId, wallet.environment), { maxCount: 10_000 });
  }

  it('charges exactly N of 10×N concurrent checks spread over two instances, and never overdraws', async () => {
    const wallet = newWallet();
    const checks = 20;
    await a.ledger.fund(wallet, { fundingReference: 'initial', amountKobo: checks * PRICE_KOBO }, context);
    // Both instances hold the funded fold, so their first appends race for the same revision.
    await b.ledger.balance(wallet);
    const conflictsBefore = a.ledger.stats.conflicts + b.ledger.stats.conflicts;

    const references = Array.from({ length: checks * 10 }, (_, i) => `vrf_${i.toString().padStart(4, '0')}`);
    const contextOf = (instance: string): CommandContext => ({ ...context, correlationId: `instance-${instance}` });
    // Ten waves a turn of the event loop apart, as requests arrive, not one synchronous burst.
    const pending: Promise<ReserveOutcome>[] = [];
    const perWave = references.length / 10;
    for (let wave = 0; wave < 10; wave++) {
      for (let i = wave * perWave; i < (wave + 1) * perWave; i++) {
        pending.push(
          i % 2 === 0
            ? a.ledger.reserve(wallet, { reference: references[i], amountKobo: PRICE_KOBO, scope: 'nin' }, contextOf('a'))
            : b.ledger.reserve(wallet, { reference: references[i], amountKobo: PRICE_KOBO, scope: 'nin' }, contextOf('b')),
        );
      }
      await new Promise((resolveWave) => setImmediate(resolveWave));
    }
    const outcomes = await Promise.all(pending);
    const reserved = references.filter((_, i) => outcomes[i].reserved);
    expect(reserved).toHaveLength(checks);
    for (const outcome of outcomes) if (!outcome.reserved) expect(outcome.availableKobo).toBe(0);

    // The two instances raced on one stream: at least one append was refused and decided again.
    expect(a.ledger.stats.conflicts + b.ledger.stats.conflicts).toBeGreaterThan(conflictsBefore);

    await Promise.all(reserved.map((reference, i) => (i % 2 === 0 ? b : a).ledger.capture(wallet, reference, context)));
    expect(await a.ledger.balance(wallet)).toEqual({ balanceKobo: 0, reservedKobo: 0, availableKobo: 0 });
    expect(await b.ledger.balance(wallet)).toEqual({ balanceKobo: 0, reservedKobo: 0, availableKobo: 0 });

    const all = await history(wallet);
    expect(all.map((event) => event.type).sort()).toEqual([...Array(checks).fill('WalletDebited'), 'WalletFunded', ...Array(checks).fill('WalletFundsReserved')].sort());
    let state = initialWalletState(wallet.organizationId, wallet.environment);
    for (const event of all) {
      state = evolve(state, asDomainEvent<WalletEvent>(event));
      expect(availableKobo(state)).toBeGreaterThanOrEqual(0);
    }
    expect(all.map((event) => event.revision)).toEqual(all.map((_, i) => BigInt(i)));

    // Refused appends were chained again on the fresh fold: one linear hash chain over both instances' writes.
    let link = GENESIS_LINK;
    for (const event of all) {
      expect({ revision: event.revision, check: checkLink(link, event, event.revision > 0n) }).toEqual({ revision: event.revision, check: { status: 'hashed' } });
      link = linkAfter(link, event);
    }
  });

  it('writes nothing for a repeated funding, capture or release, and refuses a funding reference reused for another amount', async () => {
    const wallet = newWallet();
    const first = await a.ledger.fund(wallet, { fundingReference: 'bank-001', amountKobo: 50_000 }, context);
    expect(first).toMatchObject({ funded: true, balance: { balanceKobo: 50_000, reservedKobo: 0, availableKobo: 50_000 } });
    const again = await b.ledger.fund(wallet, { fundingReference: 'bank-001', amountKobo: 50_000 }, context);
    expect(again).toMatchObject({ funded: false, balance: { balanceKobo: 50_000, reservedKobo: 0, availableKobo: 50_000 } });
    expect(again.position).toBe(first.position);
    // The same reference for another amount is a conflict, on the instance that did not write the funding too.
    await expect(b.ledger.fund(wallet, { fundingReference: 'bank-001', amountKobo: 70_000 }, context)).rejects.toMatchObject({
      code: 'funding_reference_conflict',
      details: { reference: 'bank-001', existingAmountKobo: 50_000, requestedAmountKobo: 70_000 },
    });
    expect(await a.ledger.balance(wallet)).toEqual({ balanceKobo: 50_000, reservedKobo: 0, availableKobo: 50_000 });

    expect(await a.ledger.reserve(wallet, { reference: 'vrf_1', amountKobo: 5_000, scope: 'bvn' }, context)).toEqual({ reserved: true });
    expect(await b.ledger.reserve(wallet, { reference: 'vrf_1', amountKobo: 5_000, scope: 'bvn' }, context)).toEqual({ reserved: true });
    expect(await a.ledger.reserve(wallet, { reference: 'vrf_2', amountKobo: 7_000, scope: 'nin' }, context)).toEqual({ reserved: true });
    expect(await b.ledger.balance(wallet)).toEqual({ balanceKobo: 50_000, reservedKobo: 12_000, availableKobo: 38_000 });

    await a.ledger.capture(wallet, 'vrf_1', context);
    await b.ledger.capture(wallet, 'vrf_1', context);
    await b.ledger.release(wallet, 'vrf_1', 'provider_failed', context);
    await b.ledger.release(wallet, 'vrf_2', 'provider_failed', context);
    await a.ledger.release(wallet, 'vrf_2', 'provider_failed', context);
    await a.ledger.capture(wallet, 'vrf_2', context);
    await a.ledger.capture(wallet, 'vrf_never_reserved', context);

    const events = await history(wallet);
    expect(events.map((event) => [event.type, event.data.reference ?? event.data.fundingReference])).toEqual([
      ['WalletFunded', 'bank-001'],
      ['WalletFundsReserved', 'vrf_1'],
      ['WalletFundsReserved', 'vrf_2'],
      ['WalletDebited', 'vrf_1'],
      ['WalletReservationReleased', 'vrf_2'],
    ]);
    expect(await a.ledger.balance(wallet)).toEqual({ balanceKobo: 45_000, reservedKobo: 0, availableKobo: 45_000 });
    expect(events[0].metadata).toMatchObject({ correlationId: context.correlationId, actor: context.actor });
  });

  it('catches a cached fold up after another writer moved the stream, and decides on the fresh state', async () => {
    const wallet = newWallet();
    const streamId = streams.wallet(wallet.organizationId, wallet.environment);
    await a.ledger.fund(wallet, { fundingReference: 'f1', amountKobo: 2_000 }, context);
    expect(await a.ledger.reserve(wallet, { reference: 'vrf_a', amountKobo: 1_000, scope: 'nin' }, context)).toEqual({ reserved: true });

    // Instance b writes behind a's cached fold. On PostgreSQL a's append from its fold is refused
    // (the stream moved), it folds b's event and decides again; on EventStoreDB it reads the stream
    // from its fold's revision first and folds b's event before deciding.
    expect(await b.ledger.reserve(wallet, { reference: 'vrf_b', amountKobo: 500, scope: 'nin' }, context)).toEqual({ reserved: true });
    const conflictsBefore = a.ledger.stats.conflicts;
    expect(await a.ledger.reserve(wallet, { reference: 'vrf_c', amountKobo: 500, scope: 'nin' }, context)).toEqual({ reserved: true });
    expect(a.ledger.stats.conflicts).toBe(conflictsBefore + (a.store.expectedEventIds === 'checked' ? 1 : 0));
    // A refusal is confirmed against the stream before it is answered.
    expect(await a.ledger.reserve(wallet, { reference: 'vrf_d', amountKobo: 1, scope: 'nin' }, context)).toEqual({ reserved: false, availableKobo: 0 });

    // A funding and a reservation made elsewhere: a's stale fold would refuse and no-op; the stream says otherwise.
    await b.ledger.fund(wallet, { fundingReference: 'f2', amountKobo: 3_000 }, context);
    await b.ledger.reserve(wallet, { reference: 'vrf_e', amountKobo: 3_000, scope: 'nin' }, context);
    await a.ledger.capture(wallet, 'vrf_e', context);
    expect(await a.ledger.reserve(wallet, { reference: 'vrf_f', amountKobo: 1, scope: 'nin' }, context)).toEqual({ reserved: false, availableKobo: 0 });

    const events = await a.store.readStream(streamId, { maxCount: 100 });
    expect(events.map((event) => [event.type, event.data.reference ?? event.data.fundingReference])).toEqual([
      ['WalletFunded', 'f1'],
      ['WalletFundsReserved', 'vrf_a'],
      ['WalletFundsReserved', 'vrf_b'],
      ['WalletFundsReserved', 'vrf_c'],
      ['WalletFunded', 'f2'],
      ['WalletFundsReserved', 'vrf_e'],
      ['WalletDebited', 'vrf_e'],
    ]);
    expect(await b.ledger.balance(wallet)).toEqual({ balanceKobo: 2_000, reservedKobo: 2_000, availableKobo: 0 });
  });

  it('retries a batch whose append lost the race to another writer, and gives up with 503 when every attempt loses it, having written nothing', async () => {
    const wallet = newWallet();
    // Another writer funds the wallet between each read of this ledger and its append (a real store, raced).
    let rivals = 0;
    let rivalFundings = 0;
    const store = a.store;
    const raced: EventStore = {
      kind: store.kind,
      shortStreams: store.shortStreams,
      append: async (...args) => {
        if (rivals > 0) {
          rivals -= 1;
          rivalFundings += 1;
          await b.ledger.fund(wallet, { fundingReference: `rival-${rivalFundings}`, amountKobo: 1_000 }, context);
        }
        return store.append(...args);
      },
      multiStreamAppends: store.multiStreamAppends,
      expectedEventIds: store.expectedEventIds,
      appendMany: (...args) => store.appendMany(...args),
      readStream: (...args) => store.readStream(...args),
      readAll: (...args) => store.readAll(...args),
      subscribeToAll: (...args) => store.subscribeToAll(...args),
      headPosition: () => store.headPosition(),
      ping: () => store.ping(),
      close: async () => undefined,
    };
    const patient = new EventSourcedWalletLedger(raced, new SystemClock(), new RandomIdGenerator());
    await patient.fund(wallet, { fundingReference: 'f1', amountKobo: 1_000 }, context);
    rivals = 1;
    expect(await patient.reserve(wallet, { reference: 'vrf_0', amountKobo: 500, scope: 'nin' }, context)).toEqual({ reserved: true });
    expect(await patient.balance(wallet)).toEqual({ balanceKobo: 2_000, reservedKobo: 500, availableKobo: 1_500 });
    expect(patient.stats.conflicts).toBe(1);

    const impatient = new EventSourcedWalletLedger(raced, new SystemClock(), new RandomIdGenerator(), { maxAttempts: 1 });
    await impatient.balance(wallet);
    rivals = 1;
    await expect(impatient.reserve(wallet, { reference: 'vrf_a', amountKobo: 100, scope: 'nin' }, context)).rejects.toBeInstanceOf(ServiceUnavailable);
    expect((await history(wallet)).map((event) => event.type)).toEqual(['WalletFunded', 'WalletFunded', 'WalletFundsReserved', 'WalletFunded']);
    // The next command starts from the stream again and succeeds.
    expect(await impatient.reserve(wallet, { reference: 'vrf_a', amountKobo: 100, scope: 'nin' }, context)).toEqual({ reserved: true });
  });

  it('stays correct when the cache holds fewer wallets than are in use', async () => {
    const tiny = new EventSourcedWalletLedger(a.store, new SystemClock(), new RandomIdGenerator(), { cacheSize: 1 });
    const wallets = [newWallet(), newWallet(), newWallet()];
    for (const [i, wallet] of wallets.entries()) await tiny.fund(wallet, { fundingReference: 'f', amountKobo: 3 + i }, context);
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => tiny.reserve(wallets[i % 3], { reference: `vrf_${i}`, amountKobo: 1, scope: 'nin' }, context)));
    expect(outcomes.filter((outcome) => outcome.reserved)).toHaveLength(3 + 4 + 5);
    for (const [i, wallet] of wallets.entries()) expect(await b.ledger.balance(wallet)).toEqual({ balanceKobo: 3 + i, reservedKobo: 3 + i, availableKobo: 0 });
  });

  it('folds a long stream in pages on a cold cache', async () => {
    const wallet = newWallet();
    const writer = new EventSourcedWalletLedger(a.store, new SystemClock(), new RandomIdGenerator(), { pageSize: 7, maxBatch: 5 });
    await writer.fund(wallet, { fundingReference: 'f', amountKobo: 100 }, context);
    await Promise.all(Array.from({ length: 40 }, (_, i) => writer.reserve(wallet, { reference: `vrf_${i}`, amountKobo: 1, scope: 'nin' }, context)));
    const cold = new EventSourcedWalletLedger(b.store, new SystemClock(), new RandomIdGenerator(), { pageSize: 7 });
    expect(await cold.balance(wallet)).toEqual({ balanceKobo: 100, reservedKobo: 40, availableKobo: 60 });
    expect(await history(wallet)).toHaveLength(41);
  });
  describeOnProject(
    'postgres',
    'a cached fold holding events the log lost',
    'events can be taken out from under the ledger only on the PostgreSQL log, by disabling its append-only trigger',
    () => {
      /** What a failover to an asynchronous replica or a restore does to a stream: its events after `revision` are gone. */
      async function loseEventsAfter(wallet: WalletId, revision: number): Promise<void> {
        const streamId = streams.wallet(wallet.organizationId, wallet.environment);
        const client = await a.pool.connect();
        try {
          await client.query('begin');
          await client.query('alter table events disable trigger events_no_update');
          await client.query('delete from events where stream_id = $1 and revision > $2', [streamId, revision]);
          await client.query('alter table events enable trigger events_no_update');
          await client.query('update event_streams set revision = $2 where stream_id = $1', [streamId, revision]);
          await client.query('commit');
        } catch (error) {
          await client.query('rollback');
          throw error;
        } finally {
          client.release();
        }
      }

      /** Folds the stream from its start and checks that the available balance never went negative. */
      async function expectNeverOverdrawn(wallet: WalletId): Promise<void> {
        let state = initialWalletState(wallet.organizationId, wallet.environment);
        for (const event of await history(wallet)) {
          state = evolve(state, asDomainEvent<WalletEvent>(event));
          expect(availableKobo(state)).toBeGreaterThanOrEqual(0);
        }
      }

      it('is not approved from once other writers brought the stream back to the same revision with other events', async () => {
        const wallet = newWallet();
        await a.ledger.fund(wallet, { fundingReference: 'f1', amountKobo: 600_000 }, context);
        await a.ledger.reserve(wallet, { reference: 'vrf_lost', amountKobo: 500_000, scope: 'nin' }, context);
        await a.ledger.release(wallet, 'vrf_lost', 'provider_failed', context);
        // a's fold: revision 2, 600,000 available. The log loses revisions 1 and 2.
        await loseEventsAfter(wallet, 0);
        // Instance b, folding the log as it is, writes two other events: the stream is at revision 2 again, 90,000 available.
        expect(await b.ledger.reserve(wallet, { reference: 'vrf_b', amountKobo: 510_000, scope: 'nin' }, context)).toEqual({ reserved: true });
        await b.ledger.capture(wallet, 'vrf_b', context);

        const staleBefore = a.ledger.stats.staleFolds;
        expect(await a.ledger.reserve(wallet, { reference: 'vrf_a', amountKobo: 500_000, scope: 'nin' }, context)).toEqual({ reserved: false, availableKobo: 90_000 });
        expect(a.ledger.stats.staleFolds).toBe(staleBefore + 1);
        expect(await a.ledger.reserve(wallet, { reference: 'vrf_a2', amountKobo: 90_000, scope: 'nin' }, context)).toEqual({ reserved: true });
        expect(await a.ledger.balance(wallet)).toEqual({ balanceKobo: 90_000, reservedKobo: 90_000, availableKobo: 0 });
        await expectNeverOverdrawn(wallet);
      });

      it('is folded afresh when the stream is now behind it, for a balance and for a command', async () => {
        const wallet = newWallet();
        await a.ledger.fund(wallet, { fundingReference: 'f1', amountKobo: 10_000 }, context);
        await a.ledger.reserve(wallet, { reference: 'vrf_lost', amountKobo: 4_000, scope: 'nin' }, context);
        await a.ledger.capture(wallet, 'vrf_lost', context);
        await loseEventsAfter(wallet, 0);

        expect(await a.ledger.balance(wallet)).toEqual({ balanceKobo: 10_000, reservedKobo: 0, availableKobo: 10_000 });
        await a.ledger.capture(wallet, 'vrf_lost', context);
        expect(await a.ledger.reserve(wallet, { reference: 'vrf_a', amountKobo: 8_000, scope: 'nin' }, context)).toEqual({ reserved: true });
        expect((await history(wallet)).map((event) => [event.revision, event.type])).toEqual([
          [0n, 'WalletFunded'],
          [1n, 'WalletFundsReserved'],
        ]);
        await expectNeverOverdrawn(wallet);
      });
    },
  );

  describe('appends alongside a command (the request or the terminal event of a check)', () => {
    /** An alongside that records each outcome it is built for and writes one event to a stream of its own. */
    function alongsideOf(streamId: string, built: AlongsideOutcome[]): Alongside {
      return {
        streamId,
        build: async (outcome) => {
          built.push(outcome);
          const type = outcome.refusedAvailableKobo === undefined ? 'Requested' : 'Rejected';
          return { streamId, events: [{ id: randomUUID(), type, data: { availableKobo: outcome.refusedAvailableKobo ?? -1 } }], expectedRevision: 'no_stream' };
        },
      };
    }
    const otherStream = () => `verification-vrf_${randomUUID().replaceAll('-', '')}`;

    if (testEventStoreKind() === 'esdb') {
      it('are refused on a store that writes several streams one after the other, with nothing written', async () => {
        const wallet = newWallet();
        await a.ledger.fund(wallet, { fundingReference: 'f', amountKobo: 5_000 }, context);
        const other = otherStream();
        await expect(a.ledger.reserve(wallet, { reference: 'vrf_1', amountKobo: PRICE_KOBO, scope: 'nin' }, context, alongsideOf(other, []))).rejects.toBeInstanceOf(
          InvariantViolated,
        );
        expect(await history(wallet)).toHaveLength(1);
        expect(await a.store.readStream(other, { maxCount: 10 })).toEqual([]);
      });
      return;
    }

    async function transactionOf(streamId: string): Promise<string[]> {
      const { rows } = await a.pool.query<{ xmin: string }>('select xmin::text from events where stream_id = $1 order by revision', [streamId]);
      return rows.map((row) => row.xmin);
    }

    it('writes the reservation and its alongside in one transaction; a refused reservation writes the alongside alone, made with the balance', async () => {
      const wallet = newWallet();
      const walletStream = streams.wallet(wallet.organizationId, wallet.environment);
      await a.ledger.fund(wallet, { fundingReference: 'f', amountKobo: 1_500 }, context);
      const [first, second] = [otherStream(), otherStream()];
      const built: AlongsideOutcome[] = [];
      const reserved = await a.ledger.reserve(wallet, { reference: 'vrf_1', amountKobo: PRICE_KOBO, scope: 'nin' }, context, alongsideOf(first, built));
      expect(reserved).toMatchObject({ reserved: true, alongside: { nextExpectedRevision: 0n } });
      const [, reservationTransaction] = await transactionOf(walletStream);
      expect(await transactionOf(first)).toEqual([reservationTransaction]);

      const refused = await a.ledger.reserve(wallet, { reference: 'vrf_2', amountKobo: PRICE_KOBO, scope: 'nin' }, context, alongsideOf(second, built));
      expect(refused).toMatchObject({ reserved: false, availableKobo: 500, alongside: { nextExpectedRevision: 0n } });
      expect(built).toEqual([{}, { refusedAvailableKobo: 500 }]);
      expect((await a.store.readStream(second, { maxCount: 10 })).map((event) => [event.type, event.data.availableKobo])).toEqual([['Rejected', 500]]);
      expect(await history(wallet)).toHaveLength(2);
    });

    it('fails only the command whose alongside its stream refuses, with nothing of it written; the others of its batch are written', async () => {
      const wallet = newWallet();
      await a.ledger.fund(wallet, { fundingReference: 'f', amountKobo: 100_000 }, context);
      const taken = otherStream();
      await a.store.append(taken, [{ id: randomUUID(), type: 'Requested', data: {} }], { expectedRevision: 'no_stream' });
      const others = Array.from({ length: 8 }, () => otherStream());
      // Made together: the first goes alone, the rest (the refused one among them) in one batch.
      const outcomes = await Promise.allSettled(
        [...others.slice(0, 4), taken, ...others.slice(4)].map((streamId, index) =>
          a.ledger.reserve(wallet, { reference: `vrf_${index}`, amountKobo: PRICE_KOBO, scope: 'nin' }, context, alongsideOf(streamId, [])),
        ),
      );
      expect(outcomes.map((outcome) => outcome.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      expect((outcomes[4] as PromiseRejectedResult).reason).toBeInstanceOf(AlongsideRefused);
      const reservations = (await history(wallet)).filter((event) => event.type === 'WalletFundsReserved').map((event) => event.data.reference);
      expect(reservations.sort()).toEqual(['vrf_0', 'vrf_1', 'vrf_2', 'vrf_3', 'vrf_5', 'vrf_6', 'vrf_7', 'vrf_8']);
      expect(await a.store.readStream(taken, { maxCount: 10 })).toHaveLength(1);
      for (const streamId of others) expect(await a.store.readStream(streamId, { maxCount: 10 })).toHaveLength(1);
      expect(await a.ledger.balance(wallet)).toEqual({ balanceKobo: 100_000, reservedKobo: 8 * PRICE_KOBO, availableKobo: 100_000 - 8 * PRICE_KOBO });
    });

    it('decided again after another writer moved the wallet first, is made again on the new decision and written once', async () => {
      const wallet = newWallet();
      const store = a.store;
      let rival = true;
      const raced: EventStore = {
        kind: store.kind,
        multiStreamAppends: store.multiStreamAppends,
        expectedEventIds: store.expectedEventIds,
        shortStreams: store.shortStreams,
        append: (...args) => store.append(...args),
        appendMany: async (...args) => {
          if (rival) {
            rival = false;
            await b.ledger.reserve(wallet, { reference: 'vrf_rival', amountKobo: 4_500, scope: 'nin' }, context);
          }
          return store.appendMany(...args);
        },
        readStream: (...args) => store.readStream(...args),
        readAll: (...args) => store.readAll(...args),
        subscribeToAll: (...args) => store.subscribeToAll(...args),
        headPosition: () => store.headPosition(),
        ping: () => store.ping(),
        close: async () => undefined,
      };
      const ledger = new EventSourcedWalletLedger(raced, new SystemClock(), new RandomIdGenerator());
      await ledger.fund(wallet, { fundingReference: 'f', amountKobo: 5_000 }, context);
      const other = otherStream();
      const built: AlongsideOutcome[] = [];
      // On the fold this ledger holds the reservation fits; the rival's reservation, written first, leaves 500 kobo.
      expect(await ledger.reserve(wallet, { reference: 'vrf_1', amountKobo: PRICE_KOBO, scope: 'nin' }, context, alongsideOf(other, built))).toMatchObject({
        reserved: false,
        availableKobo: 500,
      });
      expect(built).toEqual([{}, { refusedAvailableKobo: 500 }]);
      expect(ledger.stats.conflicts).toBe(1);
      expect((await a.store.readStream(other, { maxCount: 10 })).map((event) => event.type)).toEqual(['Rejected']);
      expect((await history(wallet)).map((event) => event.type)).toEqual(['WalletFunded', 'WalletFundsReserved']);
    });
  });

  describe('snapshots', () => {
    const snapshotted = (instance: typeof a, options: Partial<WalletLedgerOptions> = {}) =>
      new EventSourcedWalletLedger(instance.store, new SystemClock(), new RandomIdGenerator(), { snapshotEvery: 10, ...options }, new PostgresWalletSnapshots(instance.pool));

    /** A wallet of 1 funding and `reservations` reservations of 1 kobo, each its own event, written with snapshots every 10 events. */
    async function walletOf(reservations: number): Promise<WalletId> {
      const wallet = newWallet();
      const writer = snapshotted(a);
      await writer.fund(wallet, { fundingReference: 'f', amountKobo: 1_000 }, context);
      for (let i = 0; i < reservations; i++) {
        await writer.reserve(wallet, { reference: `vrf_${i}`, amountKobo: 1, scope: 'nin' }, context);
        // Snapshots are written in the background; waiting for each keeps them at the revisions the tests name on a loaded machine too.
        await writer.snapshotsWritten();
      }
      expect(writer.stats.snapshotsSaved).toBeGreaterThan(0);
      return wallet;
    }

    async function snapshotRow(wallet: WalletId): Promise<{ revision: string; link: string } | undefined> {
      const { rows } = await a.pool.query('select revision, link from wallet_snapshots where stream_id = $1', [streams.wallet(wallet.organizationId, wallet.environment)]);
      return rows[0];
    }

    it('a cold ledger folds only the events after the newest snapshot, and goes on writing a chain that holds', async () => {
      const wallet = await walletOf(34);
      // 35 events (revisions 0 to 34): snapshots at revisions 9, 19 and 29.
      expect(await snapshotRow(wallet)).toMatchObject({ revision: '29' });

      const cold = snapshotted(b);
      expect(await cold.balance(wallet)).toEqual({ balanceKobo: 1_000, reservedKobo: 34, availableKobo: 966 });
      expect(cold.stats.eventsFolded).toBe(5);
      const unsnapshotted = new EventSourcedWalletLedger(b.store, new SystemClock(), new RandomIdGenerator());
      expect(await unsnapshotted.balance(wallet)).toEqual(await cold.balance(wallet));
      expect(unsnapshotted.stats.eventsFolded).toBe(35);

      // Commands decided on the snapshot's state append at the right revision, chained onto it.
      const another = snapshotted(b);
      expect(await another.reserve(wallet, { reference: 'vrf_34', amountKobo: 1, scope: 'nin' }, context)).toEqual({ reserved: true });
      await another.capture(wallet, 'vrf_0', context);
      expect(another.stats.conflicts).toBe(0);
      const events = await history(wallet);
      expect(events.map((event) => event.revision)).toEqual(Array.from({ length: 37 }, (_, i) => BigInt(i)));
      let link = GENESIS_LINK;
      for (const event of events) {
        expect({ revision: event.revision, check: checkLink(link, event, event.revision > 0n) }).toEqual({ revision: event.revision, check: { status: 'hashed' } });
        link = linkAfter(link, event);
      }
      expect(await unsnapshotted.balance(wallet)).toEqual({ balanceKobo: 999, reservedKobo: 34, availableKobo: 965 });
    });

    it('does not read a version 1 snapshot (funding references without amounts): folds the stream and replaces it at the same revision', async () => {
      const wallet = await walletOf(9);
      const key = streams.wallet(wallet.organizationId, wallet.environment);
      expect(await snapshotRow(wallet)).toMatchObject({ revision: '9' });
      const old = { version: 1, fundedKobo: 1_000, debitedKobo: 0, reservedKobo: 0, reservations: [], fundingReferences: ['f'] };
      await a.pool.query('update wallet_snapshots set state = $2 where stream_id = $1', [key, JSON.stringify(old)]);
      const cold = snapshotted(b);
      expect(await cold.balance(wallet)).toEqual({ balanceKobo: 1_000, reservedKobo: 9, availableKobo: 991 });
      expect(cold.stats.eventsFolded).toBe(10);
      await cold.snapshotsWritten();
      const { rows } = await a.pool.query("select revision, state->'version' as version, state->'fundingReferences' as funding from wallet_snapshots where stream_id = $1", [key]);
      expect(rows).toEqual([{ revision: '9', version: 2, funding: [['f', 1_000]] }]);
      await expect(snapshotted(a).fund(wallet, { fundingReference: 'f', amountKobo: 2_000 }, context)).rejects.toMatchObject({ code: 'funding_reference_conflict' });
    });

    it('ignores and drops a snapshot that does not match its stream, and folds the whole stream instead', async () => {
      const wallet = await walletOf(12);
      const key = streams.wallet(wallet.organizationId, wallet.environment);
      const truth = { balanceKobo: 1_000, reservedKobo: 12, availableKobo: 988 };
      // A snapshot of another history under the same stream id: its hash is not the one the stream carries at its revision.
      const forged = { version: 2, fundedKobo: 9_999_999, debitedKobo: 0, reservedKobo: 0, reservations: [], fundingReferences: [['f', 9_999_999]] };
      await a.pool.query('update wallet_snapshots set state = $2, link = $3 where stream_id = $1', [key, JSON.stringify(forged), 'a'.repeat(64)]);
      const cold = snapshotted(b);
      expect(await cold.balance(wallet)).toEqual(truth);
      expect(cold.stats.eventsFolded).toBe(13);
      // The whole fold is then snapshotted afresh, with the hash the stream carries.
      await cold.snapshotsWritten();
      const newest = (await history(wallet)).at(-1);
      expect(await snapshotRow(wallet)).toEqual({ revision: '12', link: (newest?.metadata.chain as { hash: string }).hash });

      // One past the stream's end (the log replaced by a shorter one) is dropped the same way.
      await a.pool.query('update wallet_snapshots set revision = 500, link = $2, state = $3 where stream_id = $1', [key, 'b'.repeat(64), JSON.stringify(forged)]);
      const another = snapshotted(b, { snapshotEvery: 1_000 });
      expect(await another.balance(wallet)).toEqual(truth);
      expect(another.stats.eventsFolded).toBe(13);
      expect(await snapshotRow(wallet)).toBeUndefined();
    });
  });
});
