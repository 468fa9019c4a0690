import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { verificationsProjection } from '../../projections/verifications/verifications.projection.js';
import { rebuildProjection } from '../../projections/rebuild/rebuild.js';
import { streams } from '../../src/common/streams.js';
import { IdGenerator } from '../../src/common/ids.js';
import { RetentionSweep } from '../../src/verifications/retention.js';
import { VerificationStreams } from '../../src/verifications/verification.stream.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { streamEvents, testEventStoreEnv } from '../support/event-store.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

const run = promisify(execFile);
const ROOT = resolve('.');
const AUDITOR_TOKEN = `auditor_${'a'.repeat(30)}`;
const DAY_MS = 86_400_000;

/** Distinct sandbox inputs (found: last digit neither 1, 2, 3 nor 4). */
const NIN = '31440414976';
const PHONE_LOCAL = '08061234565';
const PHONE_FORMS = [PHONE_LOCAL, '+2348061234565', '2348061234565'];

interface Tenant {
  readonly organizationId: string;
  readonly keyId: string;
  readonly key: string;
}

/**
 * Erasure through HTTP, on this project's event store: by reference, by data subject (a phone in
 * its three forms), by retention (a controlled clock) and by offboarding. Each is followed by GET,
 * the list, the portrait link, a projection rebuild (verified against the live tables), a fresh
 * instance on the same stores, and `audit:wallet --reconcile`.
 */
describe('Erasure of personal data', () => {
  let database: TestDatabase;
  let app: TestApp;
  let pool: pg.Pool;
  let buildDir: string;
  const logged: string[] = [];
  const logDestination = { write: (line: string) => void logged.push(line) };

  beforeAll(async () => {
    database = await createTestDatabase();
    app = await startTestApp({ database, env: { AUDITOR_TOKEN, LOG_LEVEL: 'debug' }, logDestination });
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    buildDir = await mkdtemp(join(tmpdir(), 'ledger-erasure-'));
    for (const entry of ['src', 'projections', 'bench', '.swcrc', 'package.json', 'node_modules']) await symlink(join(ROOT, entry), join(buildDir, entry));
    await run(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: buildDir });
  });

  afterAll(async () => {
    await pool?.end();
    await app?.close();
    await database?.drop();
    if (buildDir !== undefined) await rm(buildDir, { recursive: true, force: true });
  });

  async function tenant(): Promise<Tenant> {
    const { id } = await createOrganization(app);
    const issued = await issueKey(app, id);
    return { organizationId: id, keyId: issued.id, key: issued.key };
  }

  const as = (who: Tenant) => ({ 'x-service-key': who.key });

  async function check(who: Tenant, scope: string, body: Record<string, string>): Promise<Record<string, unknown>> {
    const response = await app.request('POST', `/v1/${scope}`, { body, headers: as(who) });
    expect(response.status).toBe(201);
    expect(response.body.data.status).toBe('found');
    return response.body.data;
  }

  async function get(who: Tenant, reference: string) {
    return app.request('GET', `/v1/verifications/${reference}`, { headers: as(who) });
  }

  /** GET, once the read model shows the erasure too (it answers erased at once either way). */
  async function expectErased(who: Tenant, original: Record<string, unknown>, erasedAt?: string): Promise<string> {
    const response = await get(who, original.reference as string);
    expect(response.status).toBe(200);
    const { request: _request, result: _result, personalDataErasedAt: _erasedAt, ...facts } = original;
    expect(response.body.data).toEqual({ ...facts, request: {}, result: {}, personalDataErasedAt: erasedAt ?? expect.stringMatching(/^\d{4}-\d\d-\d\dT.*\+00:00$/) });
    return response.body.data.personalDataErasedAt as string;
  }

  async function expectListed(who: Tenant, original: Record<string, unknown>): Promise<void> {
    const listed = await app.request('GET', '/v1/verifications?pageSize=100', { headers: as(who) });
    expect(listed.status).toBe(200);
    const summary = (listed.body.data as Record<string, unknown>[]).find((item) => item.reference === original.reference);
    expect(summary).toEqual({
      reference: original.reference,
      scope: original.scope,
      status: original.status,
      priceKobo: original.priceKobo,
      charged: original.charged,
      createdAt: original.createdAt,
    });
  }

  /** The wallet once both checks' captures are in its read model. */
  async function settledWallet(who: Tenant, spentKobo: number) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const wallet = await app.request('GET', '/v1/wallet', { headers: as(who) });
      if ((wallet.body.data.balanceKobo === 1_000_000 - spentKobo && wallet.body.data.reservedKobo === 0) || Date.now() > deadline) return wallet;
      await new Promise((wait) => setTimeout(wait, 50));
    }
  }

  async function projected(reference: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await pool.query<{ status: string }>('select status from verifications where reference = $1', [reference]);
      if ((rows[0] !== undefined && rows[0].status !== 'pending') || Date.now() > deadline) return;
      await new Promise((wait) => setTimeout(wait, 50));
    }
  }

  async function readModelErased(reference: string): Promise<{ personal_data_erased_at: Date | null; request: unknown; result: unknown }> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await pool.query('select personal_data_erased_at, request, result from verifications where reference = $1', [reference]);
      if (rows[0]?.personal_data_erased_at != null || Date.now() > deadline) return rows[0];
      await new Promise((wait) => setTimeout(wait, 50));
    }
  }

  async function audit(who: Tenant): Promise<{ code: number; stdout: string }> {
    const env = {
      PATH: process.env.PATH,
      ...(await testEventStoreEnv(database)),
      DATABASE_URL: database.url,
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: join(buildDir, '.data'),
    };
    try {
      const { stdout } = await run(
        process.execPath,
        [join(buildDir, 'dist/src/audit/audit-cli.js'), '--org', who.organizationId, '--env', 'test', '--reconcile', '--format', 'json'],
        {
          cwd: buildDir,
          env,
          timeout: 60_000,
          maxBuffer: 64 * 1024 * 1024,
        },
      );
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string };
      if (typeof failed.code !== 'number') throw error;
      return { code: failed.code, stdout: failed.stdout ?? '' };
    }
  }

  /** What must hold after any erasure: the projection rebuilt from the log, then a fresh instance, then the audit. */
  async function erasedStaysErased(
    who: Tenant,
    erased: readonly { original: Record<string, unknown>; erasedAt: string }[],
    untouched: readonly { who: Tenant; original: Record<string, unknown> }[] = [],
  ) {
    for (const { original } of erased) {
      const row = await readModelErased(original.reference as string);
      expect(row).toMatchObject({ request: {}, result: {} });
      expect(row.personal_data_erased_at).not.toBeNull();
    }
    const rebuilt = await rebuildProjection(pool, app.eventStore, database.url, verificationsProjection, { verify: true, strict: true });
    expect(rebuilt.outcome).toBe('swapped');
    for (const { original, erasedAt } of erased) await expectErased(who, original, erasedAt);

    await app.close();
    app = await startTestApp({ database, env: { AUDITOR_TOKEN, LOG_LEVEL: 'debug' }, logDestination });
    for (const { original, erasedAt } of erased) {
      await expectErased(who, original, erasedAt);
      await expectListed(who, original);
    }
    for (const other of untouched) {
      const response = await get(other.who, other.original.reference as string);
      expect(response.body.data.personalDataErasedAt).toBeNull();
      expect(response.body.data.request).toEqual(other.original.request);
    }
    const audited = await audit(who);
    expect(audited.code).toBe(0);
    expect(JSON.parse(audited.stdout).reconcile.differences).toEqual([]);
  }

  it('by reference: 200 with every non-personal field, request and result {}, the portrait gone; again 200 with the same time; one event with its actor and no personal data', async () => {
    const who = await tenant();
    const other = await tenant();
    const original = await check(who, 'nin', { nin: NIN });
    const kept = await check(who, 'nin', { nin: '31440414986' });
    const portraitUrl = (original.result as Record<string, string>).portraitUrl;
    expect((await fetch(portraitUrl)).status).toBe(200);

    expect((await app.request('POST', `/v1/verifications/${original.reference}/erasure`, { headers: as(other) })).status).toBe(404);
    expect((await app.request('POST', '/v1/verifications/vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR/erasure', { headers: as(who) })).status).toBe(404);

    const erased = await app.request('POST', `/v1/verifications/${original.reference}/erasure`, { headers: as(who) });
    expect(erased.status).toBe(200);
    const { request: _request, result: _result, personalDataErasedAt: _at, ...facts } = original;
    expect(erased.body.data).toMatchObject({ ...facts, request: {}, result: {} });
    const erasedAt = erased.body.data.personalDataErasedAt as string;
    expect(await expectErased(who, original)).toBe(erasedAt);
    expect((await fetch(portraitUrl)).status).toBe(404);

    const again = await app.request('POST', `/v1/verifications/${original.reference}/erasure`, { headers: as(who) });
    expect(again.status).toBe(200);
    expect(again.body.data.personalDataErasedAt).toBe(erasedAt);

    const events = await streamEvents(app.eventStore, streams.verification(original.reference as string));
    const erasures = events.filter((event) => event.type === 'VerificationPersonalDataErased');
    expect(erasures).toHaveLength(1);
    expect(erasures[0].data).toEqual({ reference: original.reference, erasedAt: new Date(erasedAt).toISOString(), schemaVersion: 1 });
    expect(erasures[0].metadata.actor).toEqual({ type: 'api_key', id: who.keyId });
    await expectListed(who, original);

    await erasedStaysErased(who, [{ original, erasedAt }], [{ who, original: kept }]);
  });

  it('a verification still running: 409 verification_pending', async () => {
    const who = await tenant();
    const reference = app.app.get(IdGenerator).reference();
    await app.app.get(VerificationStreams).request(
      {
        type: 'RequestVerification',
        data: {
          reference,
          organizationId: who.organizationId,
          environment: 'test',
          keyId: who.keyId,
          scope: 'nin',
          category: 'kyc',
          countryCode: 'NG',
          request: { nin: NIN },
          priceKobo: 0,
          requestedAt: new Date().toISOString(),
        },
      },
      { correlationId: 'pending-test', actor: { type: 'system', id: 'test' } },
    );
    const response = await app.request('POST', `/v1/verifications/${reference}/erasure`, { headers: as(who) });
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('verification_pending');
  });

  it('by data subject: a phone in its three forms finds the same verifications; erasure answers them and leaves other subjects and organizations alone', async () => {
    const who = await tenant();
    const other = await tenant();
    const checks = [];
    for (const phone of PHONE_FORMS) checks.push(await check(who, 'phone', { phone }));
    const unrelated = await check(who, 'phone', { phone: '08061234575' });
    const otherOrganization = await check(other, 'phone', { phone: PHONE_LOCAL });
    const references = checks.map((c) => c.reference).sort();

    for (const phone of PHONE_FORMS) {
      const found = await app.request('POST', '/v1/data-subjects/search', { body: { phone }, headers: as(who) });
      expect(found.status).toBe(200);
      expect([...found.body.data.references].sort()).toEqual(references);
    }

    for (const body of [{ phone: '0806123' }, { phone: PHONE_LOCAL, nin: NIN }, { email: 'a@b.c' }, {}, { nin: 12345678901 }]) {
      const refused = await app.request('POST', '/v1/data-subjects/search', { body, headers: as(who) });
      expect(refused.status).toBe(422);
      expect(JSON.stringify(refused.body)).not.toContain('0806123');
      expect(JSON.stringify(refused.body)).not.toContain(NIN);
    }

    const erased = await app.request('POST', '/v1/data-subjects/erasure', { body: { phone: '+2348061234565' }, headers: as(who) });
    expect(erased.status).toBe(200);
    expect([...erased.body.data.references].sort()).toEqual(references);
    expect(erased.body.data.pending).toEqual([]);
    const after = await app.request('POST', '/v1/data-subjects/search', { body: { phone: PHONE_LOCAL }, headers: as(who) });
    expect(after.body.data.references).toEqual([]);

    const erasedAts = [];
    for (const original of checks) erasedAts.push({ original, erasedAt: await expectErased(who, original) });
    for (const { original } of erasedAts) {
      const [erasure] = (await streamEvents(app.eventStore, streams.verification(original.reference as string))).filter((event) => event.type === 'VerificationPersonalDataErased');
      expect(erasure.metadata.actor).toEqual({ type: 'api_key', id: who.keyId });
    }
    await erasedStaysErased(who, erasedAts, [
      { who, original: unrelated },
      { who: other, original: otherOrganization },
    ]);
  });

  it("by retention: past its organization's retentionDays (set by an operator, as an event) the sweep erases, actor system:retention; an organization on the default keeps its data", async () => {
    const who = await tenant();
    const other = await tenant();
    const bad = await app.admin('PUT', `/admin/v1/organizations/${who.organizationId}/retention`, { retentionDays: 0 });
    expect(bad.status).toBe(422);
    const set = await app.admin('PUT', `/admin/v1/organizations/${who.organizationId}/retention`, { retentionDays: 1 });
    expect(set.status).toBe(200);
    expect(set.body.data.retentionDays).toBe(1);
    const events = await streamEvents(app.eventStore, streams.organization(who.organizationId));
    expect(events.at(-1)).toMatchObject({ type: 'RetentionSet', data: { retentionDays: 1 }, metadata: { actor: { type: 'operator' } } });

    const original = await check(who, 'nin', { nin: NIN });
    const kept = await check(other, 'nin', { nin: NIN });
    // The sweep finds verifications through the read model.
    await projected(original.reference as string);
    await projected(kept.reference as string);
    const sweep = app.app.get(RetentionSweep);
    // Not yet due: nothing happens.
    expect((await sweep.runOnce(new Date(Date.now() + DAY_MS / 2))).erased).toBe(0);
    const report = await sweep.runOnce(new Date(Date.now() + 2 * DAY_MS));
    expect(report.erased).toBe(1);
    const erasedAt = await expectErased(who, original);
    expect((await fetch((original.result as Record<string, string>).portraitUrl)).status).toBe(404);
    const [erasure] = (await streamEvents(app.eventStore, streams.verification(original.reference as string))).filter((event) => event.type === 'VerificationPersonalDataErased');
    expect(erasure.metadata.actor).toEqual({ type: 'system', id: 'retention' });

    await erasedStaysErased(who, [{ original, erasedAt }], [{ who: other, original: kept }]);
  });

  it("offboarding: operators only (auditor 403 read_only, confirm must repeat the id); every verification of the organization reads as erased at once, another organization's are untouched, the wallet and the audit whole", async () => {
    const who = await tenant();
    const other = await tenant();
    const originals = [await check(who, 'nin', { nin: NIN }), await check(who, 'phone', { phone: PHONE_LOCAL })];
    const kept = await check(other, 'nin', { nin: NIN });
    const spent = originals.reduce((sum, original) => sum + (original.priceKobo as number), 0);
    const walletBefore = await settledWallet(who, spent);
    const historyBefore = await app.admin('GET', `/admin/v1/organizations/${who.organizationId}/wallets/test/history`);
    expect(historyBefore.status).toBe(200);

    const path = `/admin/v1/organizations/${who.organizationId}/personal-data`;
    const auditor = await app.request('DELETE', `${path}?confirm=${who.organizationId}`, { headers: { authorization: `Bearer ${AUDITOR_TOKEN}` } });
    expect(auditor.status).toBe(403);
    expect(auditor.body.error.code).toBe('read_only');
    expect((await app.admin('DELETE', path)).status).toBe(422);
    expect((await app.admin('DELETE', `${path}?confirm=${other.organizationId}`)).status).toBe(422);
    expect((await get(who, originals[0].reference as string)).body.data.personalDataErasedAt).toBeNull();

    const destroyed = await app.admin('DELETE', `${path}?confirm=${who.organizationId}`);
    expect(destroyed.status).toBe(200);
    const destroyedAt = destroyed.body.data.personalDataDestroyedAt as string;
    expect(destroyedAt).toEqual(expect.stringMatching(/\+00:00$/));
    const again = await app.admin('DELETE', `${path}?confirm=${who.organizationId}`);
    expect(again.body.data.personalDataDestroyedAt).toBe(destroyedAt);
    const organizationEvents = (await streamEvents(app.eventStore, streams.organization(who.organizationId))).filter((event) => event.type === 'PersonalDataDestroyed');
    expect(organizationEvents).toHaveLength(1);
    expect(organizationEvents[0].metadata.actor).toMatchObject({ type: 'operator' });

    for (const original of originals) expect(await expectErased(who, original)).toBe(destroyedAt);
    expect((await fetch((originals[0].result as Record<string, string>).portraitUrl)).status).toBe(404);
    const search = await app.request('POST', '/v1/data-subjects/search', { body: { nin: NIN }, headers: as(who) });
    expect(search.body.data.references).toEqual([]);

    const walletAfter = await app.request('GET', '/v1/wallet', { headers: as(who) });
    expect(walletAfter.body.data).toEqual(walletBefore.body.data);
    const historyAfter = await app.admin('GET', `/admin/v1/organizations/${who.organizationId}/wallets/test/history`);
    expect(historyAfter.body).toEqual(historyBefore.body);

    // After a rebuild and a fresh instance too (its keys are gone for good), the audit reconciles.
    const rebuilt = await rebuildProjection(pool, app.eventStore, database.url, verificationsProjection, { verify: true, strict: true });
    expect(rebuilt.outcome).toBe('swapped');
    await app.close();
    app = await startTestApp({ database, env: { AUDITOR_TOKEN, LOG_LEVEL: 'debug' }, logDestination });
    for (const original of originals) expect(await expectErased(who, original)).toBe(destroyedAt);
    expect((await get(other, kept.reference as string)).body.data.request).toEqual({ nin: NIN });
    const audited = await audit(who);
    expect(audited.code).toBe(0);
    expect(JSON.parse(audited.stdout).reconcile.differences).toEqual([]);
  });

  it('no identifier, name or date of birth reached the logs', () => {
    const text = logged.join('');
    expect(text.length).toBeGreaterThan(0);
    for (const identifier of [NIN, '31440414986', '8061234565', '8061234575']) expect(text).not.toContain(identifier);
  });
});
