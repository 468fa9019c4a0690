import { describe, expect, it, jest } from '@jest/globals';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { applyEvents, recorded, rowsOf, type GivenEvent, useProjectionDatabase, applyBatch as applyBatchThroughHarness } from '../../test/support/projection-harness.js';
import { readWalletBalance } from '../../src/wallets/wallet.read-model.js';
import { WalletProjectionError, walletsProjection } from './wallets.projection.js';

const org = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const stream = `wallet-${org}.test`;
const t0 = new Date('2026-11-01T10:00:00Z');
const event = (type: string, data: Record<string, unknown>, minutes = 0): GivenEvent => ({
  streamId: stream,
  type,
  data: { schemaVersion: 1, organizationId: org, environment: 'test', ...data },
  metadata: { occurredAt: new Date(t0.getTime() + minutes * 60_000).toISOString() },
});
const funded = (fundingReference: string, amountKobo: number) => event('WalletFunded', { fundingReference, amountKobo });
const reserved = (reference: string, amountKobo: number, minutes = 0) => event('WalletFundsReserved', { reference, amountKobo, scope: 'nin' }, minutes);
const debited = (reference: string, amountKobo: number) => event('WalletDebited', { reference, amountKobo });
const released = (reference: string, amountKobo: number) => event('WalletReservationReleased', { reference, amountKobo, reason: 'provider_failed' });

describe('wallets projection', () => {
  const db = useProjectionDatabase(walletsProjection);

  const apply = (events: ReturnType<typeof recorded>) => applyEvents(db.pool, walletsProjection, events);
  const applyBatch = (events: readonly RecordedEvent[]) => applyBatchThroughHarness(db.pool, walletsProjection, events);
  const state = async () => ({
    wallets: await rowsOf(db.pool, 'wallets', 'organization_id, environment'),
    reservations: await rowsOf(db.pool, 'wallet_reservations', 'reference'),
  });
  const wallet = async () => (await db.pool.query('select * from wallets where organization_id = $1 and environment = $2', [org, 'test'])).rows[0];
  const reservations = async () => (await db.pool.query('select reference, amount_kobo, reserved_at from wallet_reservations order by reference')).rows;

  it('given a funding, then the balance and the revision applied', async () => {
    await apply(recorded([funded('sandbox-credit', 100_000)]));
    expect(await wallet()).toMatchObject({ funded_kobo: '100000', debited_kobo: '0', balance_kobo: '100000', reserved_kobo: '0', revision: '0', updated_at: t0 });
    expect(await readWalletBalance(db.pool, org, 'test')).toEqual({ balanceKobo: 100_000, reservedKobo: 0, availableKobo: 100_000 });
  });

  it('given reservations, a debit and a release, then the totals and only the open reservation with its time', async () => {
    await apply(
      recorded([funded('f1', 10_000), reserved('vrf_a', 1_000, 1), reserved('vrf_b', 2_000, 2), reserved('vrf_c', 3_000, 3), debited('vrf_a', 1_000), released('vrf_b', 2_000)]),
    );
    expect(await wallet()).toMatchObject({ funded_kobo: '10000', debited_kobo: '1000', balance_kobo: '9000', reserved_kobo: '3000', revision: '5' });
    expect(await reservations()).toEqual([{ reference: 'vrf_c', amount_kobo: '3000', reserved_at: new Date(t0.getTime() + 3 * 60_000) }]);
    expect(await readWalletBalance(db.pool, org, 'test')).toEqual({ balanceKobo: 9_000, reservedKobo: 3_000, availableKobo: 6_000 });
  });

  it('given no event for a wallet, then zeros', async () => {
    expect(await readWalletBalance(db.pool, org, 'live')).toEqual({ balanceKobo: 0, reservedKobo: 0, availableKobo: 0 });
  });

  it('replayed twice, same rows', async () => {
    const events = recorded([
      funded('f1', 10_000),
      reserved('vrf_a', 1_000),
      reserved('vrf_b', 2_000),
      debited('vrf_a', 1_000),
      released('vrf_b', 2_000),
      reserved('vrf_c', 500),
      funded('f2', 5),
    ]);
    await apply(events);
    const once = { wallets: await rowsOf(db.pool, 'wallets', 'organization_id, environment'), reservations: await rowsOf(db.pool, 'wallet_reservations', 'reference') };
    await apply(events);
    // And a replay of a tail only, as after a crash between two batches.
    await apply(events.slice(3));
    expect({ wallets: await rowsOf(db.pool, 'wallets', 'organization_id, environment'), reservations: await rowsOf(db.pool, 'wallet_reservations', 'reference') }).toEqual(once);
    expect(once.wallets[0]).toMatchObject({ balance_kobo: '9005', reserved_kobo: '500' });
  });

  it('applied in two batches, the same rows as in one', async () => {
    const events = recorded([funded('f1', 10_000), reserved('vrf_a', 1_000), debited('vrf_a', 1_000), reserved('vrf_b', 700)]);
    await apply(events.slice(0, 2));
    await apply(events.slice(2));
    expect(await wallet()).toMatchObject({ balance_kobo: '9000', reserved_kobo: '700', revision: '3' });
  });

  it('stops loudly on a revision gap instead of showing a wrong balance', async () => {
    const events = recorded([funded('f1', 10_000), reserved('vrf_a', 1_000), debited('vrf_a', 1_000)]);
    await apply(events.slice(0, 1));
    await expect(apply(events.slice(2))).rejects.toBeInstanceOf(WalletProjectionError);
    expect(await wallet()).toMatchObject({ balance_kobo: '10000', revision: '0' });
  });

  it('stops loudly on an event naming another wallet than its stream', async () => {
    const wrong: GivenEvent = { ...funded('f1', 10), streamId: `wallet-${org}.live` };
    await expect(apply(recorded([wrong]))).rejects.toBeInstanceOf(WalletProjectionError);
  });

  it('stops loudly on a capture of a reservation that is not open', async () => {
    await expect(apply(recorded([funded('f1', 10_000), debited('vrf_zzz', 1_000)]))).rejects.toBeInstanceOf(WalletProjectionError);
  });

  it('a mixed batch all at once gives the same rows as one event at a time, and replayed twice the same again', async () => {
    const live = (e: GivenEvent): GivenEvent => ({ ...e, streamId: `wallet-${org}.live`, data: { ...e.data, environment: 'live' } });
    const events = recorded([
      funded('f1', 10_000),
      live(funded('f1', 50_000)),
      reserved('vrf_a', 1_000, 1),
      reserved('vrf_b', 2_000, 2),
      live(reserved('vrf_l', 4_000, 2)),
      debited('vrf_a', 1_000),
      reserved('vrf_c', 3_000, 3),
      released('vrf_b', 2_000),
      live(debited('vrf_l', 4_000)),
      reserved('vrf_d', 500, 4),
      debited('vrf_c', 3_000),
      live(reserved('vrf_m', 700, 5)),
      funded('f2', 5),
    ]);
    await apply(events.slice(0, 4));
    await apply(events.slice(4));
    const oneByOne = await state();

    await db.pool.query('truncate wallets, wallet_reservations');
    await applyBatch(events);
    expect(await state()).toEqual(oneByOne);

    // Reservations opened in one batch and closed in the next, with a replayed head.
    await db.pool.query('truncate wallets, wallet_reservations');
    await applyBatch(events.slice(0, 4));
    await applyBatch(events.slice(2));
    expect(await state()).toEqual(oneByOne);
    await applyBatch(events);
    await applyBatch(events);
    expect(await state()).toEqual(oneByOne);
    expect(oneByOne.wallets.map((w) => `${String(w.environment)}:${String(w.balance_kobo)}/${String(w.reserved_kobo)}/${String(w.revision)}`)).toEqual([
      'live:46000/700/3',
      'test:6005/500/8',
    ]);
    expect(oneByOne.reservations.map((r) => r.reference)).toEqual(['vrf_d', 'vrf_m']);
  });

  it('all at once, refuses what one event at a time refuses: a gap, and a capture of a reservation that is not open', async () => {
    const events = recorded([funded('f1', 10_000), reserved('vrf_a', 1_000), debited('vrf_a', 1_000), released('vrf_a', 1_000)]);
    await expect(applyBatch([events[0], events[2]])).rejects.toBeInstanceOf(WalletProjectionError);
    await expect(applyBatch(events)).rejects.toBeInstanceOf(WalletProjectionError);
    await expect(applyBatch(recorded([funded('f1', 10_000), debited('vrf_zzz', 1_000)]))).rejects.toBeInstanceOf(WalletProjectionError);
    expect(await state()).toEqual({ wallets: [], reservations: [] });
  });

  it('refuses what the money rule refuses, one event at a time and all at once: an overdraft, and a close for another amount than its reservation', async () => {
    const overdraft = recorded([funded('f1', 1_000), reserved('vrf_a', 600), reserved('vrf_b', 401)]);
    const otherAmount = recorded([funded('f1', 1_000), reserved('vrf_a', 600), debited('vrf_a', 500)]);
    for (const events of [overdraft, otherAmount]) {
      await expect(apply(events)).rejects.toThrow(WalletProjectionError);
      await expect(applyBatch(events)).rejects.toThrow(WalletProjectionError);
      // Closed in a later call than the reservation: the amount comes from wallet_reservations.
      await applyBatch(events.slice(0, 2));
      await expect(applyBatch(events.slice(2))).rejects.toThrow(WalletProjectionError);
      await db.pool.query('truncate wallets, wallet_reservations');
    }
    expect(await state()).toEqual({ wallets: [], reservations: [] });
  });
  it('looks a wallet up at most twice per event of a page (its key built once), whatever the wallets', async () => {
    // bench:projections: a fresh key string built and hashed for each of three lookups per event
    // was a large share of the catch-up's CPU. Counted here on the Map lookups by a wallet key.
    const other = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TS';
    const events = recorded([
      funded('f1', 1_000_000),
      {
        ...funded('f2', 1_000_000),
        streamId: `wallet-${other}.test`,
        data: { schemaVersion: 1, organizationId: other, environment: 'test', fundingReference: 'f2', amountKobo: 1_000_000 },
      },
      ...Array.from({ length: 200 }, (_, i) => [reserved(`vrf_${i}`, 100), i % 5 === 0 ? released(`vrf_${i}`, 100) : debited(`vrf_${i}`, 100)]).flat(),
    ]);
    const get = jest.spyOn(Map.prototype, 'get');
    const has = jest.spyOn(Map.prototype, 'has');
    let walletLookups: number;
    try {
      await applyBatch(events);
      walletLookups = [...get.mock.calls, ...has.mock.calls].filter(([key]) => typeof key === 'string' && key.includes('\u0000')).length;
    } finally {
      get.mockRestore();
      has.mockRestore();
    }
    expect(walletLookups).toBeGreaterThan(0);
    expect(walletLookups).toBeLessThanOrEqual(2 * events.length);
    expect(await wallet()).toMatchObject({ funded_kobo: '1000000', debited_kobo: '16000', reserved_kobo: '0', revision: '400' });
  });
});
