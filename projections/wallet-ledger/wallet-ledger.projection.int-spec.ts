import { describe, expect, it } from '@jest/globals';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { applyEvents, recorded, rowsOf, type GivenEvent, useProjectionDatabase, applyBatch as applyBatchThroughHarness } from '../../test/support/projection-harness.js';
import { WalletProjectionError } from '../wallets/wallets.projection.js';
import { walletLedgerProjection } from './wallet-ledger.projection.js';

const org = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const t0 = new Date('2026-11-01T10:00:00Z');
const event = (type: string, data: Record<string, unknown>, environment = 'test'): GivenEvent => ({
  streamId: `wallet-${org}.${environment}`,
  type,
  data: { schemaVersion: 1, organizationId: org, environment, ...data },
  metadata: { occurredAt: t0.toISOString() },
});
const funded = (fundingReference: string, amountKobo: number, environment = 'test') => event('WalletFunded', { fundingReference, amountKobo }, environment);
const reserved = (reference: string, amountKobo: number, environment = 'test', scope = 'bvn') => event('WalletFundsReserved', { reference, amountKobo, scope }, environment);
const debited = (reference: string, amountKobo: number) => event('WalletDebited', { reference, amountKobo });
const released = (reference: string, amountKobo: number) => event('WalletReservationReleased', { reference, amountKobo, reason: 'provider_failed' });

const LINE_COLUMNS = 'environment, entry_type, reference, amount_kobo, balance_kobo, reserved_kobo, available_kobo, scope';

describe('wallet-ledger projection', () => {
  const db = useProjectionDatabase(walletLedgerProjection);

  const apply = (events: ReturnType<typeof recorded>) => applyEvents(db.pool, walletLedgerProjection, events);
  const applyBatch = (events: readonly RecordedEvent[]) => applyBatchThroughHarness(db.pool, walletLedgerProjection, events);
  const lines = async () => (await db.pool.query(`select ${LINE_COLUMNS} from wallet_ledger order by event_position`)).rows;

  it('given a wallet history, then one line per event with the running figures after it', async () => {
    const events = recorded([funded('f1', 10_000), reserved('vrf_a', 1_000), reserved('vrf_b', 2_000), debited('vrf_a', 1_000), released('vrf_b', 2_000)]);
    await apply(events);
    expect(await lines()).toEqual([
      { environment: 'test', entry_type: 'funding', reference: 'f1', amount_kobo: '10000', balance_kobo: '10000', reserved_kobo: '0', available_kobo: '10000', scope: null },
      {
        environment: 'test',
        entry_type: 'reservation',
        reference: 'vrf_a',
        amount_kobo: '1000',
        balance_kobo: '10000',
        reserved_kobo: '1000',
        available_kobo: '9000',
        scope: 'bvn',
      },
      {
        environment: 'test',
        entry_type: 'reservation',
        reference: 'vrf_b',
        amount_kobo: '2000',
        balance_kobo: '10000',
        reserved_kobo: '3000',
        available_kobo: '7000',
        scope: 'bvn',
      },
      { environment: 'test', entry_type: 'debit', reference: 'vrf_a', amount_kobo: '1000', balance_kobo: '9000', reserved_kobo: '2000', available_kobo: '7000', scope: 'bvn' },
      { environment: 'test', entry_type: 'release', reference: 'vrf_b', amount_kobo: '2000', balance_kobo: '9000', reserved_kobo: '0', available_kobo: '9000', scope: 'bvn' },
    ]);
    const positions = (await db.pool.query('select event_position from wallet_ledger order by event_position')).rows.map((row) => BigInt(row.event_position));
    expect(positions).toEqual(events.map((e) => e.position));
  });

  it('given two wallets of one organization interleaved, then each runs on its own figures', async () => {
    await apply(recorded([funded('f1', 500), funded('f2', 7_000, 'live'), reserved('vrf_a', 200), reserved('vrf_b', 1_000, 'live')]));
    expect((await lines()).map((line) => [line.environment, line.available_kobo])).toEqual([
      ['test', '500'],
      ['live', '7000'],
      ['test', '300'],
      ['live', '6000'],
    ]);
  });

  it('replayed twice, same rows', async () => {
    const events = recorded([funded('f1', 10_000), reserved('vrf_a', 1_000), debited('vrf_a', 1_000), reserved('vrf_b', 2_000), released('vrf_b', 2_000), funded('f2', 1)]);
    await apply(events);
    const once = await rowsOf(db.pool, 'wallet_ledger', 'organization_id, environment, event_position');
    await apply(events);
    await apply(events.slice(2));
    expect(await rowsOf(db.pool, 'wallet_ledger', 'organization_id, environment, event_position')).toEqual(once);
    expect(once).toHaveLength(6);
    expect(once[5]).toMatchObject({ balance_kobo: '9001', reserved_kobo: '0', available_kobo: '9001' });
  });

  describe('debits and releases carry the scope of the reservation they close (the events do not)', () => {
    const history = () =>
      recorded([
        funded('f1', 10_000),
        funded('f1', 10_000, 'live'),
        reserved('vrf_a', 1_000, 'test', 'nin'),
        reserved('vrf_b', 2_000, 'test', 'phone'),
        // The same reference in the other wallet, another scope: each close finds its own wallet's.
        reserved('vrf_a', 500, 'live', 'passport'),
        debited('vrf_b', 2_000),
        reserved('vrf_c', 300, 'test', 'premium_bank_account'),
        released('vrf_a', 1_000),
        event('WalletDebited', { reference: 'vrf_a', amountKobo: 500 }, 'live'),
        debited('vrf_c', 300),
      ]);
    const scopes = async () =>
      (await db.pool.query(`select environment, entry_type, reference, scope from wallet_ledger where entry_type in ('debit', 'release') order by event_position`)).rows;
    const expected = [
      { environment: 'test', entry_type: 'debit', reference: 'vrf_b', scope: 'phone' },
      { environment: 'test', entry_type: 'release', reference: 'vrf_a', scope: 'nin' },
      { environment: 'live', entry_type: 'debit', reference: 'vrf_a', scope: 'passport' },
      { environment: 'test', entry_type: 'debit', reference: 'vrf_c', scope: 'premium_bank_account' },
    ];

    it('one event at a time, the reservation found among the lines already written', async () => {
      await apply(history());
      expect(await scopes()).toEqual(expected);
    });

    it('all at once: reservations in the batch, in earlier batches, and a replayed batch', async () => {
      const events = history();
      for (const split of [1, 4, 6, 8, 10]) {
        await db.pool.query('truncate wallet_ledger');
        await applyBatch(events.slice(0, split));
        await applyBatch(events.slice(split));
        expect(await scopes()).toEqual(expected);
      }
      // Lines already there for the reservations, new lines for their closes.
      await db.pool.query(`delete from wallet_ledger where entry_type in ('debit', 'release')`);
      await db.pool.query(`delete from wallet_ledger where event_position > $1`, [events[5].position.toString()]);
      await applyBatch(events.slice(3));
      expect(await scopes()).toEqual(expected);
      const once = await rowsOf(db.pool, 'wallet_ledger', 'organization_id, environment, event_position');
      await applyBatch(events);
      expect(await rowsOf(db.pool, 'wallet_ledger', 'organization_id, environment, event_position')).toEqual(once);
    });
  });

  it('stops loudly on a line that would overdraw the wallet', async () => {
    await expect(apply(recorded([funded('f1', 100), reserved('vrf_a', 101)]))).rejects.toBeInstanceOf(WalletProjectionError);
  });

  it('a mixed batch all at once gives the same rows as one event at a time, and replayed twice the same again', async () => {
    const events = recorded([
      funded('f1', 10_000),
      funded('f1', 50_000, 'live'),
      reserved('vrf_a', 1_000),
      reserved('vrf_l', 4_000, 'live'),
      reserved('vrf_b', 2_000),
      debited('vrf_a', 1_000),
      released('vrf_b', 2_000),
      reserved('vrf_c', 300),
      funded('f2', 7),
    ]);
    const all = () => rowsOf(db.pool, 'wallet_ledger', 'organization_id, environment, event_position');
    await apply(events.slice(0, 3));
    await apply(events.slice(3));
    const oneByOne = await all();

    await db.pool.query('truncate wallet_ledger');
    await applyBatch(events);
    expect(await all()).toEqual(oneByOne);

    // A batch overlapping lines already there (a replayed head) runs on from them.
    await db.pool.query('truncate wallet_ledger');
    await applyBatch(events.slice(0, 5));
    await applyBatch(events.slice(2));
    expect(await all()).toEqual(oneByOne);
    await applyBatch(events);
    await applyBatch(events);
    expect(await all()).toEqual(oneByOne);
    expect(oneByOne.map((line) => `${String(line.environment)}:${String(line.available_kobo)}`)).toEqual([
      'live:50000',
      'live:46000',
      'test:10000',
      'test:9000',
      'test:7000',
      'test:7000',
      'test:9000',
      'test:8700',
      'test:8707',
    ]);
  });

  it('finds the scope of a reservation further back than the recent lines searched first, one event at a time and all at once', async () => {
    // Reserved, then more lines than the first search covers (4,096), then closed in a later batch.
    const fundings = Array.from({ length: 4_200 }, (_, at) => funded(`f${at}`, 1));
    const events = recorded([
      funded('f', 10_000),
      reserved('vrf_far', 1_000, 'test', 'nin'),
      reserved('vrf_near', 500, 'test', 'bvn'),
      ...fundings,
      debited('vrf_far', 1_000),
      released('vrf_near', 500),
    ]);
    const closes = events.slice(-2);
    await applyBatch(events.slice(0, -2));
    await applyBatch(closes);
    const scopes = async () =>
      (await db.pool.query(`select entry_type, reference, scope from wallet_ledger where entry_type in ('debit', 'release') order by event_position`)).rows;
    expect(await scopes()).toEqual([
      { entry_type: 'debit', reference: 'vrf_far', scope: 'nin' },
      { entry_type: 'release', reference: 'vrf_near', scope: 'bvn' },
    ]);
    await db.pool.query(`delete from wallet_ledger where entry_type in ('debit', 'release')`);
    await apply(closes);
    expect(await scopes()).toEqual([
      { entry_type: 'debit', reference: 'vrf_far', scope: 'nin' },
      { entry_type: 'release', reference: 'vrf_near', scope: 'bvn' },
    ]);
  });

  it('all at once, stops loudly on an event naming another wallet than its stream, first of its stream in the batch or after another', async () => {
    const otherOrganization = (given: GivenEvent): GivenEvent => ({ ...given, data: { ...given.data, organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TS' } });
    const otherEnvironment = (given: GivenEvent): GivenEvent => ({ ...given, data: { ...given.data, environment: 'live' } });
    await expect(applyBatch(recorded([otherOrganization(funded('f1', 100))]))).rejects.toBeInstanceOf(WalletProjectionError);
    await expect(applyBatch(recorded([funded('f1', 100), otherOrganization(funded('f2', 100))]))).rejects.toBeInstanceOf(WalletProjectionError);
    await expect(applyBatch(recorded([funded('f1', 100), otherEnvironment(reserved('vrf_a', 50))]))).rejects.toBeInstanceOf(WalletProjectionError);
    expect(await lines()).toEqual([]);
  });

  it('all at once, stops loudly on a line that would overdraw the wallet', async () => {
    await expect(applyBatch(recorded([funded('f1', 100), reserved('vrf_a', 50), reserved('vrf_b', 51)]))).rejects.toBeInstanceOf(WalletProjectionError);
    expect(await lines()).toEqual([]);
  });
});
