import { afterAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { generate } from 'otplib';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { ConsoleClient, uniqueEmail } from '../../test/support/console-client.js';
import { testEventStoreKind } from '../../test/support/event-store.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';
import { processTestBed } from '../../test/support/process-test-bed.js';
import { DIST, runNode } from '../../test/support/processes.js';
import { describeWithPkcs11, testToken } from '../../test/support/softhsm.js';

const PASSWORD = 'correct horse battery staple 42';
const NIN = '31440414976';
const REFRESH_MS = 300;

const describeHere =
  testEventStoreKind() === 'postgres'
    ? describeWithPkcs11
    : (title: string, suite: () => void) => describe.skip(`${title} [skipped on integration-esdb: the key tables are PostgreSQL's either way]`, suite);

/**
 * The service on the PKCS#11 adapter (a SoftHSM2 token): checks run, `keys rotate-master` (the built
 * CLI, another process) makes a new version in the token while the service runs, the running
 * service opens everything and wraps new keys under the new version without a restart, and after a
 * restart reads the old checks.
 */
describeHere('keys rotate-master through the PKCS#11 adapter, without a restart', () => {
  const bed = processTestBed('ledger-rotate-p11-');
  const token = testToken(REFRESH_MS);
  let app: TestApp | undefined;

  afterAll(async () => {
    await app?.close();
  });

  const cli = (...args: string[]) =>
    runNode(DIST.admin, args, {
      cwd: bed.dir,
      env: { PATH: process.env.PATH, ...bed.events.env, DATABASE_URL: bed.database.url, DATA_DIR: join(bed.dir, '.data'), ...token.env },
      timeoutMs: 30_000,
    });
  const masterKeyOf = async (organizationId: string) =>
    (await bed.pool.query<{ master_key_id: string }>('select master_key_id from organization_keys where organization_id = $1', [organizationId])).rows[0]?.master_key_id;

  it('runs checks, rotates while running, keeps serving old and new checks, and reads them after a restart', async () => {
    // No DATA_ENCRYPTION_KEY's key in play: the token holds the master key.
    app = await startTestApp({ database: bed.database, env: { ...token.env, ORGANIZATION_KEY_MAX_WRAPS: '2' } });
    const operator = new ConsoleClient(app);
    const email = uniqueEmail('p11-operator');
    await operator.session();
    expect((await operator.call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email, password: PASSWORD })).status).toBe(201);
    const secret = (await operator.call('POST', '/console/api/operator/totp/setup')).body.data.secret as string;
    expect((await operator.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret }) })).body.data.user.totpEnabled).toBe(true);

    const { id: first } = await createOrganization(app);
    const headers = { 'x-service-key': (await issueKey(app, first)).key };
    const run = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers });
    expect(run.status).toBe(201);
    const reference = run.body.data.reference as string;
    // Two data keys wrapped (ORGANIZATION_KEY_MAX_WRAPS=2): the organization's key has a second version, the first kept.
    const second1 = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers });
    expect(second1.status).toBe(201);
    const { rows: versions } = await bed.pool.query<{ kek_version: number; retired: string }>(
      'select kek_version, (select count(*) from organization_kek_versions v where v.organization_id = k.organization_id) as retired from organization_keys k where organization_id = $1',
      [first],
    );
    expect(versions).toEqual([{ kek_version: 2, retired: '1' }]);
    const third1 = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers });
    expect(third1.status).toBe(201);
    const version1 = await masterKeyOf(first);
    expect(version1).toMatch(new RegExp(`^pkcs11:${token.config.keyLabel}\\.1:`));

    // Every organization's keys are re-wrapped, and the console's contact keys (`console:contacts`) with them; so are all their older versions.
    const { rows: keyRows } = await bed.pool.query<{ keys: string; retired: string }>(
      'select (select count(*) from organization_keys where destroyed_at is null) as keys, (select count(*) from organization_kek_versions) as retired',
    );
    expect(Number(keyRows[0].keys)).toBeGreaterThanOrEqual(2);
    const rotated = await cli('--json', 'keys', 'rotate-master');
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    const report = JSON.parse(rotated.stdout) as { masterKeyId: string; previousMasterKeyId: string; rewrapped: number; totpSecrets: { rewrapped: number } };
    expect(report).toMatchObject({
      previousMasterKeyId: version1,
      rewrapped: Number(keyRows[0].keys),
      retiredOrganizationKeys: { rewrapped: Number(keyRows[0].retired) },
      totpSecrets: { rewrapped: 1 },
    });
    expect(report.masterKeyId).toMatch(new RegExp(`^pkcs11:${token.config.keyLabel}\\.2:`));
    expect(rotated.stdout).not.toContain(token.config.pin);
    expect(await masterKeyOf(first)).toBe(report.masterKeyId);

    // The same running instance: the operator's secret (now under version 2, which this process
    // has never used) opens; after its refresh interval, a new organization's keys are wrapped under version 2.
    const signIn = await new ConsoleClient(app).call('POST', '/console/api/operator/login', {
      email,
      password: PASSWORD,
      totpCode: await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }),
    });
    expect(signIn.status).toBe(200);
    await new Promise((elapsed) => setTimeout(elapsed, REFRESH_MS + 50));
    const { id: second } = await createOrganization(app);
    const secondHeaders = { 'x-service-key': (await issueKey(app, second)).key };
    const later = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers: secondHeaders });
    expect(later.status).toBe(201);
    expect(await masterKeyOf(second)).toBe(report.masterKeyId);
    expect((await app.request('GET', `/v1/verifications/${reference}`, { headers })).body.data).toMatchObject({ request: { nin: NIN }, personalDataErasedAt: null });

    await app.close();
    app = await startTestApp({ database: bed.database, env: token.env });
    expect((await app.request('GET', `/v1/verifications/${reference}`, { headers })).body.data).toMatchObject({ request: { nin: NIN }, personalDataErasedAt: null });
    expect((await app.request('POST', '/v1/data-subjects/search', { body: { nin: NIN }, headers })).body.data.references).toEqual(
      [reference, second1.body.data.reference, third1.body.data.reference].sort(),
    );
    expect((await app.request('GET', `/v1/verifications/${later.body.data.reference as string}`, { headers: secondHeaders })).body.data).toMatchObject({ request: { nin: NIN } });
    // Data keys of both versions of the first organization's key open after the restart.
    for (const check of [second1, third1])
      expect((await app.request('GET', `/v1/verifications/${check.body.data.reference as string}`, { headers })).body.data).toMatchObject({ request: { nin: NIN } });
    const { rows: wrapped } = await bed.pool.query<{ wrapped_key: string }>('select wrapped_key from verification_keys where organization_id = $1 order by reference', [first]);
    // Data keys wrapped before the organization key's second version stay under the first, the later ones under the second
    // (how many of each depends on what else the organization's key sealed first, such as its contact email).
    expect(new Set(wrapped.map((row) => /^v2:/.test(row.wrapped_key)))).toEqual(new Set([false, true]));
  });
});
