import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { streams } from '../../src/common/streams.js';
import { RetentionSweep } from '../../src/verifications/retention.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { streamEvents } from '../support/event-store.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

const DAY_MS = 86_400_000;

/**
 * The retention sweep counts from each check's own time, whatever its key row says (or whether it
 * has one), and instances running it at once share the due checks instead of all erasing the same.
 */
describe('The retention sweep', () => {
  let app: TestApp;
  let second: TestApp;
  let pool: pg.Pool;

  beforeAll(async () => {
    app = await startTestApp();
    // A second instance on the same stores, as a scaled-out deployment runs.
    second = await startTestApp({ database: app.database });
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await second?.close();
    await app?.close();
  });

  /** An organization keeping personal data one day, its key, and `count` found checks, all in the read model. */
  async function dueChecks(count: number): Promise<{ references: string[]; key: string }> {
    const { id } = await createOrganization(app, { approved: true });
    expect((await app.admin('PUT', `/admin/v1/organizations/${id}/retention`, { retentionDays: 1 })).status).toBe(200);
    const { key } = await issueKey(app, id);
    const references: string[] = [];
    for (let n = 0; n < count; n++) {
      const response = await app.request('POST', '/v1/nin', { body: { nin: `514404${String(n).padStart(4, '0')}6` }, headers: { 'x-service-key': key } });
      expect(response.status).toBe(201);
      references.push(response.body.data.reference);
    }
    // The key's list waits for its own checks: all are in the read model from here on.
    const listed = await app.request('GET', '/v1/verifications?pageSize=100', { headers: { 'x-service-key': key } });
    expect(listed.body.meta.total).toBe(count);
    return { references, key };
  }

  async function erasedInReadModel(references: readonly string[]): Promise<number> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const { rows } = await pool.query<{ erased: string }>('select count(*) as erased from verifications where reference = any($1) and personal_data_erased_at is not null', [
        references,
      ]);
      if (Number(rows[0].erased) === references.length) return references.length;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { rows } = await pool.query<{ erased: string }>('select count(*) as erased from verifications where reference = any($1) and personal_data_erased_at is not null', [
      references,
    ]);
    return Number(rows[0].erased);
  }

  it('erases a check that has no key row (recorded before personal data was sealed)', async () => {
    const { references } = await dueChecks(1);
    await pool.query('delete from verification_keys where reference = $1', [references[0]]);
    const report = await app.app.get(RetentionSweep).runOnce(new Date(Date.now() + 2 * DAY_MS));
    expect(report.erased).toBe(1);
    expect(await erasedInReadModel(references)).toBe(1);
  });

  it("counts from the check's own time, not from when its key row was written", async () => {
    const { references } = await dueChecks(1);
    // As the maintenance command keys an old check: its key row is written long after the check.
    await pool.query(`update verification_keys set created_at = now() + interval '3 days' where reference = $1`, [references[0]]);
    const report = await app.app.get(RetentionSweep).runOnce(new Date(Date.now() + 2 * DAY_MS));
    expect(report.erased).toBe(1);
    expect(await erasedInReadModel(references)).toBe(1);
  });

  it('sweeps a backlog of expired checks at least as fast as the same app made them', async () => {
    const { id } = await createOrganization(app, { approved: true });
    expect((await app.admin('PUT', `/admin/v1/organizations/${id}/retention`, { retentionDays: 1 })).status).toBe(200);
    const { key } = await issueKey(app, id);
    expect((await app.admin('POST', `/admin/v1/organizations/${id}/wallets/test/fundings`, { amountKobo: 10_000_000, reference: `bank:RETENTION-${id}` })).status).toBe(201);
    // More than one claim batch (100), made as integrators do: several at a time.
    const backlog = 200;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let n = next++; n < backlog; n = next++) {
          const response = await app.request('POST', '/v1/nin', { body: { nin: `624404${String(n).padStart(4, '0')}7` }, headers: { 'x-service-key': key } });
          expect(response.status).toBe(201);
        }
      }),
    );
    const makingMs = performance.now() - started;
    expect((await app.request('GET', '/v1/verifications?pageSize=1', { headers: { 'x-service-key': key } })).body.meta.total).toBe(backlog);

    const sweepStarted = performance.now();
    const report = await app.app.get(RetentionSweep).runOnce(new Date(Date.now() + 2 * DAY_MS));
    const sweepingMs = performance.now() - sweepStarted;
    expect(report.erased).toBe(backlog);
    // Bounded: one instance erases the backlog in no more time than the checks took to make.
    expect(sweepingMs).toBeLessThanOrEqual(makingMs);
  });

  it('shares the due checks between instances sweeping at once: each check is erased by one of them', async () => {
    const { references } = await dueChecks(40);
    const at = new Date(Date.now() + 2 * DAY_MS);
    const [first, other] = await Promise.all([app.app.get(RetentionSweep).runOnce(at), second.app.get(RetentionSweep).runOnce(at)]);
    expect(first.erased + other.erased).toBe(references.length);
    expect(await erasedInReadModel(references)).toBe(references.length);
    for (const reference of references) {
      const erasures = (await streamEvents(app.eventStore, streams.verification(reference))).filter((event) => event.type === 'VerificationPersonalDataErased');
      expect(erasures).toHaveLength(1);
    }
    // Nothing is left to sweep.
    expect((await app.app.get(RetentionSweep).runOnce(at)).erased).toBe(0);
  });
});
