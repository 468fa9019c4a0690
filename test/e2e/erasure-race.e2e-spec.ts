import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataKeys, type StoredDataKey } from '../../src/data-protection/data-keys.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

const NIN = '31440414976';

/**
 * An erasure with a read of the same check running beside it: the read took the check's key row a
 * moment before the erasure and unwraps it just after the key was destroyed (the interleaving a
 * review saw twice in about 140 racing attempts, here made to happen every time).
 */
describe('An erasure racing a read of the same check', () => {
  let app: TestApp;
  let pool: pg.Pool;

  beforeAll(async () => {
    app = await startTestApp();
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await app?.close();
  });

  async function projected(reference: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await pool.query<{ status: string }>('select status from verifications where reference = $1', [reference]);
      if (rows[0] !== undefined && rows[0].status !== 'pending') return;
      if (Date.now() > deadline) throw new Error(`${reference} was not projected`);
      await new Promise((wait) => setTimeout(wait, 50));
    }
  }

  it('answers the erasure erased, with no personal data, and every read after it likewise', async () => {
    const { id } = await createOrganization(app);
    const { key } = await issueKey(app, id);
    const headers = { 'x-service-key': key };
    const run = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers });
    expect(run.status).toBe(201);
    const reference = run.body.data.reference as string;
    const { rows } = await pool.query<StoredDataKey>('select organization_id, wrapped_key, destroyed_at from verification_keys where reference = $1', [reference]);
    expect(rows[0].wrapped_key).not.toBeNull();

    await projected(reference);
    // The projection lags: it cannot mark the row erased until this transaction ends.
    const lagging = await pool.connect();
    await lagging.query('begin');
    await lagging.query('select 1 from verifications where reference = $1 for update', [reference]);

    const keys = app.app.get(DataKeys);
    const destroy = keys.destroy.bind(keys);
    keys.destroy = async (...args: Parameters<DataKeys['destroy']>) => {
      const destroyedAt = await destroy(...args);
      // The racing read finishes now, with the row it took before the erasure.
      keys.forget(reference);
      await keys.stateOf(reference, rows[0]);
      return destroyedAt;
    };
    let erasedAt = '';
    try {
      const erased = await app.request('POST', `/v1/verifications/${reference}/erasure`, { headers });
      expect(erased.status).toBe(200);
      expect(erased.body.data).toMatchObject({ reference, personalDataErasedAt: expect.any(String) });
      expect([erased.body.data.request, erased.body.data.result]).toEqual([{}, {}]);
      expect(JSON.stringify(erased.body)).not.toContain(NIN);
      erasedAt = erased.body.data.personalDataErasedAt as string;
    } finally {
      keys.destroy = destroy;
      await lagging.query('rollback');
      lagging.release();
    }
    const read = await app.request('GET', `/v1/verifications/${reference}`, { headers });
    expect(read.body.data).toMatchObject({ personalDataErasedAt: erasedAt });
    expect([read.body.data.request, read.body.data.result]).toEqual([{}, {}]);
    expect(JSON.stringify(read.body)).not.toContain(NIN);
  });
});
