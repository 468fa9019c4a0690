import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { seal } from '../data-protection/sealing.js';
import { PostgresEventStore } from '../event-store/postgres-event-store.js';
import { UNSEALED_PERSONAL_FIELD } from '../event-store/postgres-legacy-events.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { describeOnPostgresProjectOnly } from '../../test/support/store-independent.js';
import { inTransaction } from '../database/transaction.js';

/** The one update the PostgreSQL log allows (migration 1732250000012), and everything it still refuses. */
describeOnPostgresProjectOnly('The event log under encrypt-legacy-events', "the trigger is PostgreSQL's", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let store: PostgresEventStore;
  const reference = 'vrf_TRIGGER00000000000000000000';
  const sealed = JSON.stringify(seal(randomBytes(32), { nin: '70931485599' }, { reference, eventType: 'VerificationRequested', field: 'request' }));

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    store = new PostgresEventStore({ pool, connectionString: database.url });
    await store.append(
      `verification-${reference}`,
      [{ id: randomUUID(), type: 'VerificationRequested', data: { reference, request: { nin: '70931485599' }, scope: 'nin' }, metadata: { actor: 'x' } }],
      { expectedRevision: 'no_stream' },
    );
    await store.append('wallet-org_x-test', [{ id: randomUUID(), type: 'WalletFunded', data: { amountKobo: 100 }, metadata: {} }], { expectedRevision: 'no_stream' });
  });
  afterAll(async () => {
    await store?.close();
    await pool?.end();
    await database?.drop();
  });

  async function inMaintenance(sql: string, params: unknown[] = []): Promise<void> {
    await inTransaction(pool, async (client) => {
      await client.query("set local ledger.seal_legacy_events = 'on'");
      await client.query(sql, params);
    });
  }

  const plainExists = async () =>
    (
      await pool.query<{ found: boolean }>(
        `select exists (select 1 from events where type = 'VerificationRequested' and (data -> 'request' ->> 'sealed') is distinct from 'aes-256-gcm') as found`,
      )
    ).rows[0].found;

  it('refuses, even with the setting on, an update that changes anything but the plain personal field into a sealed one', async () => {
    const where = `where stream_id = 'verification-${reference}'`;
    await expect(inMaintenance(`update events set metadata = '{}' ${where}`)).rejects.toThrow(/append-only/);
    await expect(inMaintenance(`update events set data = jsonb_set(data, '{scope}', '"bvn"') ${where}`)).rejects.toThrow(/append-only/);
    await expect(inMaintenance(`update events set data = jsonb_set(data, '{request}', '{"nin":"1"}') ${where}`)).rejects.toThrow(/append-only/);
    await expect(inMaintenance(`update events set data = jsonb_set(data, '{request}', $1::jsonb), revision = revision + 1 ${where}`, [sealed])).rejects.toThrow(/append-only/);
    await expect(inMaintenance(`update events set data = '{"amountKobo": 1}' where type = 'WalletFunded'`)).rejects.toThrow(/append-only/);
    await expect(inMaintenance(`delete from events ${where}`)).rejects.toThrow(/append-only/);
    // Without the setting, the sealing update itself is refused.
    await expect(pool.query(`update events set data = jsonb_set(data, '{request}', $1::jsonb) ${where}`, [sealed])).rejects.toThrow(/append-only/);
    expect(await plainExists()).toBe(true);
  });

  it('lets the sealing update through, once: a sealed field is not replaced again', async () => {
    const where = `where stream_id = 'verification-${reference}'`;
    await inMaintenance(`update events set data = jsonb_set(data, '{request}', $1::jsonb) ${where}`, [sealed]);
    expect(await plainExists()).toBe(false);
    const again = JSON.stringify(seal(randomBytes(32), {}, { reference, eventType: 'VerificationRequested', field: 'request' }));
    await expect(inMaintenance(`update events set data = jsonb_set(data, '{request}', $1::jsonb) ${where}`, [again])).rejects.toThrow(/append-only/);
  });

  it('finds the plain fields through the partial index (the start-up check is an index probe)', async () => {
    const client = await pool.connect();
    try {
      // The table is tiny, so a sequential scan would win on cost: forbid it to see whether the index matches the predicate.
      await client.query('set enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain select exists (select 1 from events where ${UNSEALED_PERSONAL_FIELD}) as found`);
      expect(rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('events_unsealed_personal');
    } finally {
      await client.query('reset enable_seqscan');
      client.release();
    }
  });
});
