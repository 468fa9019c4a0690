import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DataKeys } from '../../src/data-protection/data-keys.js';
import { IndexKeyRotation } from '../../src/data-protection/index-key-rotation.js';
import type { RetokeniseProgress } from '../../src/data-protection/rotation-pass.js';
import { verificationIdentifiers } from '../../src/verifications/verification-identifiers.js';
import { VerificationStreams } from '../../src/verifications/verification.stream.js';
import { RetentionSweep } from '../../src/verifications/retention.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { testEventStoreEnv } from '../support/event-store.js';
import { DIST, exited, runNode } from '../support/processes.js';

const NINS = ['11440414905', '11440414906', '11440414907', '11440414908', '11440414909'];
const LATER_NIN = '11440414915';
/** A subject held with no check of it. */
const UNCHECKED_NIN = '11440414925';
/** A subject whose only check was erased before the rotation: its erasure record is left, and no check. */
const ERASED_NIN = '11440414935';
const DAY_MS = 86_400_000;

/** The pass was killed: its process died between two batches (each batch is one transaction, so a kill inside one leaves nothing of it). */
class Killed extends Error {}

/**
 * A rotation of an organization's blind-index key, over HTTP: checks indexed under the old key and
 * under the new one are found before, during and after the re-tokenising pass, which is killed
 * part-way and resumed; a hold placed on a subject before the rotation still stops its erasure and
 * the retention sweep after it; the old version is destroyed at the end.
 */
describe("Rotation of an organization's blind-index key", () => {
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

  it('finds old and new checks during and after the pass, resumes after a kill, keeps holds, and retires the old version', async () => {
    const { id: organizationId } = await createOrganization(app, { approved: true });
    expect((await app.admin('PUT', `/admin/v1/organizations/${organizationId}/retention`, { retentionDays: 1 })).status).toBe(200);
    const { key } = await issueKey(app, organizationId);
    const headers = { 'x-service-key': key };
    const check = async (nin: string) => {
      const response = await app.request('POST', '/v1/nin', { body: { nin }, headers });
      expect(response.status).toBe(201);
      return response.body.data.reference as string;
    };
    const search = async (nin: string) => {
      const response = await app.request('POST', '/v1/data-subjects/search', { body: { nin }, headers });
      expect(response.status).toBe(200);
      return response.body.data.references as string[];
    };
    const references = new Map<string, string>();
    for (const nin of NINS) references.set(nin, await check(nin));
    const held = NINS[0];
    const placed = await app.request('POST', '/v1/data-subjects/holds', { body: { subject: { nin: held }, reason: 'litigation' }, headers });
    expect(placed.status).toBe(201);
    const heldUnchecked = await app.request('POST', '/v1/data-subjects/holds', { body: { subject: { nin: UNCHECKED_NIN }, reason: 'litigation' }, headers });
    expect(heldUnchecked.status).toBe(201);
    await check(ERASED_NIN);
    const erasedBefore = await app.request('POST', '/v1/data-subjects/erasure', { body: { nin: ERASED_NIN }, headers });
    expect(erasedBefore.status).toBe(200);
    const tokens = async () =>
      (await pool.query<{ token: string }>('select token from verification_subjects where organization_id = $1', [organizationId])).rows.map((row) => row.token);
    /** The checks with a token under version 2. */
    const retokenised = async () =>
      Number(
        (await pool.query<{ n: string }>("select count(distinct reference) as n from verification_subjects where organization_id = $1 and token like 'v2:%'", [organizationId]))
          .rows[0].n,
      );
    expect((await tokens()).every((token) => !/^v\d+:/.test(token))).toBe(true);

    const keys = app.app.get(DataKeys);
    expect(await keys.rotateIndexKey(organizationId, new Date())).toEqual({ version: 2, started: true });
    // A second start while the pass has not finished changes nothing.
    expect(await keys.rotateIndexKey(organizationId, new Date())).toEqual({ version: 2, started: false });
    const later = await check(LATER_NIN);
    for (const nin of NINS) expect(await search(nin)).toEqual([references.get(nin)]);
    expect(await search(LATER_NIN)).toEqual([later]);

    const pass = (settleMs: number) => new IndexKeyRotation(pool, keys, verificationIdentifiers(app.app.get(VerificationStreams)), { settleMs });
    const seen: RetokeniseProgress[] = [];
    await expect(
      pass(60_000).run(organizationId, {
        batchSize: 2,
        onProgress: (progress) => {
          seen.push(progress);
          if (progress.done >= 2) throw new Killed();
        },
      }),
    ).rejects.toBeInstanceOf(Killed);
    expect(seen).toEqual([
      { done: 0, total: 5 },
      { done: 2, total: 5 },
    ]);
    expect(await retokenised()).toBe(3);
    // Half done: both kinds are found.
    for (const nin of [...NINS, LATER_NIN]) expect(await search(nin)).toHaveLength(1);

    const resumed: RetokeniseProgress[] = [];
    const summary = await pass(0).run(organizationId, { batchSize: 2, onProgress: (progress) => resumed.push(progress) });
    expect(summary).toEqual({ version: 2, retokenised: 3, retired: true, interrupted: false });
    expect(resumed[0]).toEqual({ done: 0, total: 3 });
    expect((await tokens()).every((token) => token.startsWith('v2:'))).toBe(true);
    expect(await retokenised()).toBe(NINS.length + 1);
    const row = await pool.query('select index_version, retiring_index_key, retiring_index_version from organization_keys where organization_id = $1', [organizationId]);
    expect(row.rows[0]).toEqual({ index_version: 2, retiring_index_key: null, retiring_index_version: null });

    for (const nin of NINS) expect(await search(nin)).toEqual([references.get(nin)]);
    expect(await search(LATER_NIN)).toEqual([later]);
    // The hold was placed under the old key: it still stops the subject's erasure, and retention.
    const refused = await app.request('POST', '/v1/data-subjects/erasure', { body: { nin: held }, headers });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('legal_hold');
    await app.app.get(RetentionSweep).runOnce(new Date(Date.now() + 2 * DAY_MS));
    expect((await app.request('GET', `/v1/verifications/${references.get(held)}`, { headers })).body.data.personalDataErasedAt).toBeNull();
    expect((await app.request('GET', `/v1/verifications/${references.get(NINS[1])}`, { headers })).body.data.personalDataErasedAt).not.toBeNull();
    const exported = await app.request('POST', '/v1/data-subjects/export', { body: { nin: held }, headers });
    expect(exported.body.data.holds.map((hold: { id: string }) => hold.id)).toEqual([placed.body.data.id]);
    // A subject with no check: its hold and its erasure record were re-tokenised from their sealed identifiers.
    const refusedUnchecked = await app.request('POST', '/v1/data-subjects/erasure', { body: { nin: UNCHECKED_NIN }, headers });
    expect(refusedUnchecked.status).toBe(409);
    expect(refusedUnchecked.body.error.code).toBe('legal_hold');
    expect(refusedUnchecked.body.error.details).toMatchObject({ holdId: heldUnchecked.body.data.id });
    const exportedErased = await app.request('POST', '/v1/data-subjects/export', { body: { nin: ERASED_NIN }, headers });
    expect(exportedErased.body.data.requests.map((entry: { type: string }) => entry.type)).toEqual(['erasure']);
    // Nothing left to do: another run retires nothing more and finds nothing.
    expect(await pass(0).run(organizationId)).toEqual({ version: 2, retokenised: 0, retired: true, interrupted: false });
  });

  it('keys rotate-index: killed with SIGKILL part-way, the next run resumes and retires the old version', async () => {
    const { id: organizationId } = await createOrganization(app, { approved: true });
    const { key } = await issueKey(app, organizationId);
    const headers = { 'x-service-key': key };
    const nins = Array.from({ length: 12 }, (_, n) => `71440415${String(n).padStart(2, '0')}7`);
    const references: string[] = [];
    for (const nin of nins) {
      const response = await app.request('POST', '/v1/nin', { body: { nin }, headers });
      expect(response.status).toBe(201);
      references.push(response.body.data.reference);
    }
    const env = {
      PATH: process.env.PATH,
      ...(await testEventStoreEnv(app.database)),
      DATABASE_URL: app.database.url,
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: await mkdtemp(join(tmpdir(), 'ledger-rotate-index-')),
    };
    const count = async (sql: string) => Number((await pool.query<{ n: string }>(sql, [organizationId])).rows[0].n);
    const retokenised = () => count("select count(distinct reference) as n from verification_subjects where organization_id = $1 and token like 'v2:%'");

    const first = spawn(process.execPath, [DIST.admin, 'keys', 'rotate-index', organizationId, '--batch-size', '1'], { env, stdio: 'ignore' });
    for (let waited = 0; (await retokenised()) === 0; waited++) {
      if (waited > 1_500 || first.exitCode !== null) throw new Error('the pass wrote nothing');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    first.kill('SIGKILL');
    await exited(first);
    // Killed before the end: the old version stands, and every check is found under one version or the other.
    expect(await count('select count(*) as n from organization_keys where organization_id = $1 and retiring_index_key is not null')).toBe(1);
    for (const [i, nin] of nins.entries()) {
      expect((await app.request('POST', '/v1/data-subjects/search', { body: { nin }, headers })).body.data.references).toEqual([references[i]]);
    }

    // As if the instances' caches had expired since the rotation, so the resumed run need not wait.
    await pool.query("update organization_keys set index_rotated_at = now() - interval '5 minutes' where organization_id = $1", [organizationId]);
    const resumed = await runNode(DIST.admin, ['--json', 'keys', 'rotate-index', organizationId], { env, timeoutMs: 120_000 });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ organizationId, started: false, version: 2, retired: true, interrupted: false });
    expect(resumed.stderr).toMatch(/rotate-index: \d+\/\d+ checks re-tokenised under version 2/);
    expect(await retokenised()).toBe(nins.length);
    expect(await count("select count(*) as n from verification_subjects where organization_id = $1 and token not like 'v2:%'")).toBe(0);
    expect(await count('select count(*) as n from organization_keys where organization_id = $1 and retiring_index_key is null')).toBe(1);
    for (const [i, nin] of nins.entries()) {
      expect((await app.request('POST', '/v1/data-subjects/search', { body: { nin }, headers })).body.data.references).toEqual([references[i]]);
    }
  });
});
