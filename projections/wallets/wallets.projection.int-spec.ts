import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { applyEvents, recorded, rowsOf, type GivenEvent } from '../../test/support/projection-harness.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { readWalletBalance, WalletProjectionError, walletsProjection } from './wallets.projection.js';

const org = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const stream = `wallet-${org}.test`;
const t0 = new Date('2026-11-01T10:00:00Z');
const event = (type: string, data: Record<string, unknown>, minutes = 0): GivenEvent => ({
  streamId: stream,
  type,
  data: { schemaVersion: 1, organizationId: org, environment: 'test', ...data } as GivenEvent['data'],
  metadata: { occurredAt: new Date(t0.getTime() + minutes * 60_000).toISOString() },
});
const funded = (fundingReference: string, amountKobo: number) => event('WalletFunded', { fundingReference, amountKobo });
const reserved = (reference: string, amountKobo: number, minutes = 0) => event('WalletFundsReserved', { reference, amountKobo, scope: 'nin' }, minutes);
const debited = (reference: string, amountKobo: number) => event('WalletDebited', { reference, amountKobo });
const released = (reference: string, amountKobo: number) => event('WalletReservationReleased', { reference, amountKobo, reason: 'provider_failed' });

describe('wallets projection', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });
  beforeEach(async () => {
    await pool.query('truncate wallets, wallet_reservations');
  });

  const apply = (events: ReturnType<typeof recorded>) => applyEvents(pool, walletsProjection, events);
  const wallet = async () => (await pool.query('select * from wallets where organization_id = $1 and environment = $2', [org, 'test'])).rows[0];
  const reservations = async () => (await pool.query('select reference, amount_kobo, reserved_at from wallet_reservations order by reference')).rows;

  it('given a funding, then the balance and the revision applied', async () => {
    await apply(recorded([funded('sandbox-credit', 100_000)]));
    expect(await wallet()).toMatchObject({ funded_kobo: '100000', debited_kobo: '0', balance_kobo: '100000', reserved_kobo: '0', revision: '0', updated_at: t0 });
    expect(await readWalletBalance(pool, org, 'test')).toEqual({ balanceKobo: 100_000, reservedKobo: 0, availableKobo: 100_000 });
  });

  it('given reservations, a debit and a release, then the totals and only the open reservation with its time', async () => {
    await apply(recorded([funded('f1', 10_000), reserved('vrf_a', 1_000, 1), reserved('vrf_b', 2_000, 2), reserved('vrf_c', 3_000, 3), debited('vrf_a', 1_000), released('vrf_b', 2_000)]));
    expect(await wallet()).toMatchObject({ funded_kobo: '10000', debited_kobo: '1000', balance_kobo: '9000', reserved_kobo: '3000', revision: '5' });
    expect(await reservations()).toEqual([{ reference: 'vrf_c', amount_kobo: '3000', reserved_at: new Date(t0.getTime() + 3 * 60_000) }]);
    expect(await readWalletBalance(pool, org, 'test')).toEqual({ balanceKobo: 9_000, reservedKobo: 3_000, availableKobo: 6_000 });
  });

  it('given no event for a wallet, then zeros', async () => {
    expect(await readWalletBalance(pool, org, 'live')).toEqual({ balanceKobo: 0, reservedKobo: 0, availableKobo: 0 });
  });

  it('replayed twice, same rows', async () => {
    const events = recorded([funded('f1', 10_000), reserved('vrf_a', 1_000), reserved('vrf_b', 2_000), debited('vrf_a', 1_000), released('vrf_b', 2_000), reserved('vrf_c', 500), funded('f2', 5)]);
    await apply(events);
    const once = { wallets: await rowsOf(pool, 'wallets', 'organization_id, environment'), reservations: await rowsOf(pool, 'wallet_reservations', 'reference') };
    await apply(events);
    // And a replay of a tail only, as after a crash between two batches.
    await apply(events.slice(3));
    expect({ wallets: await rowsOf(pool, 'wallets', 'organization_id, environment'), reservations: await rowsOf(pool, 'wallet_reservations', 'reference') }).toEqual(once);
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
});
