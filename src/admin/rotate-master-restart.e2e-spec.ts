import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import pg from 'pg';
import { LocalKeyManagement } from '../data-protection/key-management.port.js';
import { parseMasterKey } from '../data-protection/master-key.js';
import { rotateMaster } from '../data-protection/rotate-master.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { ConsoleClient, uniqueEmail } from '../../test/support/console-client.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../../test/support/data-protection.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';

const PASSWORD = 'correct horse battery staple 42';
const NIN = '31440414976';

/**
 * A master-key rotation, then a restart on the new key: every feature that opens a secret wrapped
 * by the master key still works (an operator's TOTP sign-in; a check's sealed fields, read and
 * searched; a new check under its organization's keys).
 */
describe('keys rotate-master, then a restart on the new master key', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let app: TestApp | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
  });

  afterAll(async () => {
    await app?.close();
    await pool?.end();
    await database?.drop();
  });

  it('leaves every feature that opens a secret working', async () => {
    app = await startTestApp({ database });
    const operator = new ConsoleClient(app);
    const email = uniqueEmail('rotation-operator');
    await operator.session();
    expect((await operator.call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email, password: PASSWORD })).status).toBe(201);
    const setup = await operator.call('POST', '/console/api/operator/totp/setup');
    const secret = setup.body.data.secret as string;
    expect((await operator.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret }) })).body.data.user.totpEnabled).toBe(true);

    const { id: organizationId } = await createOrganization(app);
    const { key } = await issueKey(app, organizationId);
    const headers = { 'x-service-key': key };
    const run = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers });
    expect(run.status).toBe(201);
    const reference = run.body.data.reference as string;
    await app.close();
    app = undefined;

    const newKey = randomBytes(32).toString('base64');
    const next = new LocalKeyManagement(parseMasterKey(newKey));
    await rotateMaster(pool, new LocalKeyManagement(parseMasterKey(TEST_DATA_ENCRYPTION_KEY)), next);
    app = await startTestApp({ database, env: { DATA_ENCRYPTION_KEY: newKey } });
    const signIn = await new ConsoleClient(app).call('POST', '/console/api/operator/login', { email, password: PASSWORD, totpCode: await generate({ secret }) });
    expect(signIn.status).toBe(200);
    const read = await app.request('GET', `/v1/verifications/${reference}`, { headers });
    expect(read.body.data).toMatchObject({ request: { nin: NIN }, personalDataErasedAt: null });
    expect((await app.request('POST', '/v1/data-subjects/search', { body: { nin: NIN }, headers })).body.data.references).toEqual([reference]);
    expect((await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers })).status).toBe(201);
    // The inventory records which master key wraps each secret.
    const { rows } = await pool.query<{ totp_master_key_id: string | null }>('select totp_master_key_id from console_users where totp_secret is not null');
    expect(rows.map((row) => row.totp_master_key_id)).toEqual([next.masterKeyId]);
  });
});
