import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { generate } from 'otplib';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { LocalKeyManagement } from '../data-protection/key-management.port.js';
import { parseMasterKey } from '../data-protection/master-key.js';
import { rotateMaster } from '../data-protection/rotate-master.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { ConsoleClient, uniqueEmail } from '../../test/support/console-client.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../../test/support/data-protection.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';
import { waitUntil } from '../../projections/runner/counting.projection.testing.js';

const PASSWORD = 'correct horse battery staple 42';
const NIN = '31440414976';

/**
 * A master-key rotation, then a restart on the new key: every feature that opens a secret wrapped
 * by the master key still works (an operator's TOTP sign-in; a check's sealed fields, read and
 * searched; an integrator's TOTP sign-in step; a new check under its organization's keys; a webhook endpoint read back, and a delivery
 * signed with its secret).
 */
describe('keys rotate-master, then a restart on the new master key', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let app: TestApp | undefined;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: { headers: Record<string, string>; body: string }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(200).end('thanks');
      });
    });
    await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/ledger`;
  });

  afterAll(async () => {
    await app?.close();
    receiver?.closeAllConnections();
    await new Promise<void>((closed) => receiver?.close(() => closed()));
    await pool?.end();
    await database?.drop();
  });

  it('leaves every feature that opens a secret working', async () => {
    app = await startTestApp({ database, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    const operator = new ConsoleClient(app);
    const email = uniqueEmail('rotation-operator');
    await operator.session();
    expect((await operator.call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email, password: PASSWORD })).status).toBe(201);
    const setup = await operator.call('POST', '/console/api/operator/totp/setup');
    const secret = setup.body.data.secret as string;
    expect((await operator.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret }) })).body.data.user.totpEnabled).toBe(true);
    // An integrator's TOTP secret is wrapped the same way, in the same column.
    const integrator = new ConsoleClient(app);
    const integratorEmail = uniqueEmail('rotation-integrator');
    expect((await integrator.signUpAndSignIn({ organizationName: 'Rotation Ltd', email: integratorEmail, password: PASSWORD })).status).toBe(200);
    const integratorSecret = (await integrator.call('POST', '/console/api/second-factor/totp/setup')).body.data.secret as string;
    expect((await integrator.call('POST', '/console/api/second-factor/totp/confirm', { code: await generate({ secret: integratorSecret }) })).status).toBe(200);

    const { id: organizationId } = await createOrganization(app);
    const { key } = await issueKey(app, organizationId);
    const headers = { 'x-service-key': key };
    const run = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers });
    expect(run.status).toBe(201);
    const reference = run.body.data.reference as string;
    const endpoint = await app.request('POST', '/v1/webhook_endpoints', {
      body: { url: receiverUrl, eventTypes: ['verification.completed'], description: 'rotation receiver' },
      headers,
    });
    expect(endpoint.status).toBe(201);
    const { id: endpointId, secret: signingSecret } = endpoint.body.data as { id: string; secret: string };
    await app.close();
    app = undefined;

    const newKey = randomBytes(32).toString('base64');
    const next = new LocalKeyManagement(parseMasterKey(newKey));
    await rotateMaster(pool, new LocalKeyManagement(parseMasterKey(TEST_DATA_ENCRYPTION_KEY)), next);
    app = await startTestApp({ database, env: { DATA_ENCRYPTION_KEY: newKey, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    // The next time step's code, within the one step of tolerance: the confirmation above may have
    // taken this step's, and each step's code is taken once.
    const signIn = await new ConsoleClient(app).call('POST', '/console/api/operator/login', {
      email,
      password: PASSWORD,
      totpCode: await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }),
    });
    expect(signIn.status).toBe(200);
    const integratorSignIn = new ConsoleClient(app);
    await integratorSignIn.session();
    expect((await integratorSignIn.call('POST', '/console/api/login', { email: integratorEmail, password: PASSWORD })).body.data.user.secondFactorPending).toBe(true);
    const integratorCode = await generate({ secret: integratorSecret, epoch: Math.floor(Date.now() / 1000) + 30 });
    expect((await integratorSignIn.call('POST', '/console/api/second-factor/verify', { code: integratorCode })).status).toBe(200);
    const read = await app.request('GET', `/v1/verifications/${reference}`, { headers });
    expect(read.body.data).toMatchObject({ request: { nin: NIN }, personalDataErasedAt: null });
    expect((await app.request('POST', '/v1/data-subjects/search', { body: { nin: NIN }, headers })).body.data.references).toEqual([reference]);
    const after = await app.request('POST', '/v1/nin', { body: { nin: NIN }, headers });
    expect(after.status).toBe(201);
    // The endpoint made before the rotation reads back, and signs the new check's delivery with its secret.
    expect((await app.request('GET', `/v1/webhook_endpoints/${endpointId}`, { headers })).body.data).toMatchObject({
      id: endpointId,
      url: receiverUrl,
      description: 'rotation receiver',
    });
    await waitUntil(() => received.some((delivery) => delivery.body.includes(after.body.data.reference as string)), 10_000, 'the delivery after the rotation');
    const delivered = received.find((delivery) => delivery.body.includes(after.body.data.reference as string))!;
    expect(new Webhook(signingSecret).verify(delivered.body, delivered.headers)).toMatchObject({ type: 'verification.completed', data: { reference: after.body.data.reference } });
    // The inventory records which master key wraps each secret.
    const { rows } = await pool.query<{ totp_master_key_id: string | null }>('select totp_master_key_id from console_users where totp_secret is not null');
    expect(rows.map((row) => row.totp_master_key_id)).toEqual([next.masterKeyId, next.masterKeyId]);
  });
});
