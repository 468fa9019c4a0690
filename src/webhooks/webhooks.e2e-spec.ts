import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type net from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';
import { waitUntil } from '../../projections/runner/counting.projection.testing.js';
import pg from 'pg';
import { READY_MADE_PEOPLE, sandboxPerson } from '../scopes/sandbox-world.js';
import { AccountStore } from '../console-auth/accounts.js';
import { Outbox } from '../console-auth/outbox.js';
import { WebhookEndpoints } from './webhook-endpoints.service.js';

interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
}

describe('Webhooks through the API: an integrator adds an endpoint, runs a sandbox check, and receives it signed', () => {
  let app: TestApp;
  let server: http.Server;
  let receiverUrl: string;
  const received: Received[] = [];
  let organizationId: string;
  let headers: Record<string, string>;
  let otherHeaders: Record<string, string>;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(200).end('thanks');
      });
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    receiverUrl = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/ledger`;
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    organizationId = (await createOrganization(app, { scopes: ['bvn'] })).id;
    headers = { 'x-service-key': (await issueKey(app, organizationId)).key };
    otherHeaders = { 'x-service-key': (await issueKey(app, (await createOrganization(app)).id)).key };
  });
  afterAll(async () => {
    await app?.close();
    server?.closeAllConnections();
    await new Promise<void>((closed) => server?.close(() => closed()));
  });

  it('creates an endpoint with its secret shown once, delivers the check signed with it, and shows the attempt', async () => {
    const created = await app.request('POST', '/v1/webhook_endpoints', { body: { url: receiverUrl, eventTypes: ['verification.completed'], description: 'ci receiver' }, headers });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ url: receiverUrl, eventTypes: ['verification.completed'], description: 'ci receiver', enabled: true, environment: 'test' });
    const { id, secret } = created.body.data as { id: string; secret: string };
    expect(secret).toMatch(/^whsec_/);

    const listed = await app.request('GET', '/v1/webhook_endpoints', { headers });
    expect(listed.body.data).toEqual([
      { id, url: receiverUrl, eventTypes: ['verification.completed'], description: 'ci receiver', enabled: true, environment: 'test', createdAt: expect.any(String) },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    // Another organization's key does not see it.
    expect((await app.request('GET', `/v1/webhook_endpoints/${id}`, { headers: otherHeaders })).status).toBe(404);

    const check = await app.request('POST', '/v1/bvn', { body: { bvn: sandboxPerson(READY_MADE_PEOPLE[0]).bvn }, headers });
    expect(check.status).toBe(201);
    const reference = check.body.data.reference as string;
    await waitUntil(() => received.length >= 1, 10_000, 'the delivery');
    const payload = new Webhook(secret).verify(received[0].body, received[0].headers) as { type: string; data: Record<string, unknown> };
    expect(payload).toEqual({
      type: 'verification.completed',
      timestamp: expect.any(String),
      data: { organizationId, environment: 'test', reference, scope: 'bvn', status: expect.stringMatching(/^(found|not_found)$/), charged: true, completedAt: expect.any(String) },
    });
    // No personal data in what left the service.
    expect(received[0].body).not.toContain(sandboxPerson(READY_MADE_PEOPLE[0]).bvn);

    let deliveries: { webhookId: string; status: string; attempts: { statusCode: number; responseExcerpt: string }[] }[] = [];
    await waitUntil(
      async () => {
        deliveries = (await app.request('GET', `/v1/webhook_endpoints/${id}/deliveries`, { headers })).body.data;
        return deliveries[0]?.status === 'succeeded';
      },
      10_000,
      'the attempt recorded',
    );
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      webhookId: received[0].headers['webhook-id'],
      status: 'succeeded',
      attempts: [{ attempt: 1, statusCode: 200, outcome: 'succeeded', responseExcerpt: 'thanks' }],
    });
  });

  it('changes, rotates, resends and deletes an endpoint, and sets the low-balance threshold', async () => {
    const created = await app.request('POST', '/v1/webhook_endpoints', { body: { url: receiverUrl, eventTypes: [] }, headers });
    const { id } = created.body.data as { id: string };
    const changed = await app.request('PATCH', `/v1/webhook_endpoints/${id}`, { body: { enabled: false, description: 'paused' }, headers });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ id, enabled: false, description: 'paused', eventTypes: [] });
    const rotated = await app.request('POST', `/v1/webhook_endpoints/${id}/rotate_secret`, { body: { overlapSeconds: 60 }, headers });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect((await app.request('POST', `/v1/webhook_endpoints/${id}/deliveries/999999/resend`, { headers })).status).toBe(404);
    const range = await app.request('POST', `/v1/webhook_endpoints/${id}/deliveries/resend`, { body: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }, headers });
    expect(range.body).toEqual({ status: true, data: { resent: 0 } });
    const threshold = await app.request('PUT', '/v1/wallet/low_balance_threshold', { body: { thresholdKobo: 5_000 }, headers });
    expect(threshold.body).toEqual({ status: true, data: { environment: 'test', thresholdKobo: 5_000 } });
    expect((await app.request('GET', '/v1/wallet/low_balance_threshold', { headers })).body.data).toEqual({ environment: 'test', thresholdKobo: 5_000 });
    expect((await app.request('DELETE', `/v1/webhook_endpoints/${id}`, { headers })).body).toEqual({ status: true, data: { id, deleted: true } });
    expect((await app.request('GET', `/v1/webhook_endpoints/${id}`, { headers })).status).toBe(404);
  });

  it('refuses an unknown event type, a URL with credentials, and unknown fields, naming the fields', async () => {
    const refused = await app.request('POST', '/v1/webhook_endpoints', {
      body: { url: 'https://user:pw@hooks.example/x', eventTypes: ['wallet.emptied'], colour: 'red' },
      headers,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.fields.map((field: { field: string }) => field.field).sort()).toEqual(['colour', 'url']);
    const badType = await app.request('POST', '/v1/webhook_endpoints', { body: { url: 'https://hooks.example/x', eventTypes: ['wallet.emptied'] }, headers });
    expect(badType.status).toBe(422);
    expect(badType.body.error.details.fields).toEqual([{ field: 'eventTypes[0]', message: expect.any(String) }]);
  });

  it('operators manage the same endpoints through the admin API', async () => {
    const created = await app.admin('POST', `/admin/v1/organizations/${organizationId}/webhook_endpoints`, { environment: 'live', url: 'https://hooks.example/live' });
    expect(created.status).toBe(201);
    const listed = await app.admin('GET', `/admin/v1/organizations/${organizationId}/webhook_endpoints?environment=live`);
    expect(listed.body.data.map((endpoint: { id: string }) => endpoint.id)).toEqual([created.body.data.id]);
    // A test key does not see the live endpoint.
    expect((await app.request('GET', `/v1/webhook_endpoints/${created.body.data.id as string}`, { headers })).status).toBe(404);
    expect((await app.admin('GET', `/admin/v1/webhook_endpoints/${created.body.data.id as string}/deliveries`)).body).toMatchObject({ status: true, data: [] });
  });

  it('an endpoint failing for days is turned off once, and its owner and developer users are mailed', async () => {
    const { id } = (await app.request('POST', '/v1/webhook_endpoints', { body: { url: receiverUrl, eventTypes: [] }, headers })).body.data as { id: string };
    const pool = new pg.Pool({ connectionString: app.database.url, max: 1 });
    try {
      // Members as the console makes them: their emails sealed under the organization's key.
      const accounts = app.app.get(AccountStore);
      for (const [user, role] of [
        ['usr_owner', 'owner'],
        ['usr_dev', 'developer'],
        ['usr_finance', 'finance'],
      ] as const) {
        await accounts.insert({ id: user, kind: 'integrator', organizationId, email: `${user}@acme.test`, role, passwordHash: null, emailVerifiedAt: null, createdAt: new Date() });
      }
      const endpoints = app.app.get(WebhookEndpoints);
      await endpoints.disableFailing(id);
      await endpoints.disableFailing(id);
      await waitUntil(async () => (await app.request('GET', `/v1/webhook_endpoints/${id}`, { headers })).body.data.enabled === false, 5_000, 'the endpoint off');
      // Opened as the outbox sends them (the development mailbox reads the same): each member's own address.
      const mail = (await app.app.get(Outbox).mailbox()).filter((entry) => entry.subject === 'A webhook endpoint was turned off').sort((x, y) => x.to.localeCompare(y.to));
      expect(mail.map((entry) => entry.to)).toEqual(['usr_dev@acme.test', 'usr_owner@acme.test']);
      // The text is dropped once the mail is sent (outside the embedded default): until then it names the endpoint, never its URL.
      for (const entry of mail) expect(entry.text === '' || entry.text.includes(id)).toBe(true);
      expect(mail.map((entry) => entry.text).join(' ')).not.toContain(receiverUrl);
      // No address in the row itself.
      const stored = (await pool.query<{ recipient: string }>("select recipient from console_outbox where subject = 'A webhook endpoint was turned off'")).rows;
      expect(stored.map((row) => row.recipient).join(' ')).not.toContain('@acme.test');
    } finally {
      await pool.end();
    }
  });

  it("an offboarded organization's endpoints are gone: not listed and not found, and none can be added, through the API and the admin API", async () => {
    const offboarded = (await createOrganization(app, { scopes: ['bvn'] })).id;
    const keyHeaders = { 'x-service-key': (await issueKey(app, offboarded)).key };
    const { id } = (await app.request('POST', '/v1/webhook_endpoints', { body: { url: `${receiverUrl}/offboarded`, eventTypes: [] }, headers: keyHeaders })).body.data as {
      id: string;
    };
    expect((await app.admin('DELETE', `/admin/v1/organizations/${offboarded}/personal-data?confirm=${offboarded}`)).status).toBe(200);
    expect((await app.request('GET', '/v1/webhook_endpoints', { headers: keyHeaders })).body).toEqual({ status: true, data: [] });
    expect((await app.request('GET', `/v1/webhook_endpoints/${id}`, { headers: keyHeaders })).status).toBe(404);
    expect((await app.admin('GET', `/admin/v1/organizations/${offboarded}/webhook_endpoints`)).body).toEqual({ status: true, data: [] });
    // A new one has no key to be sealed under.
    const refused = await app.request('POST', '/v1/webhook_endpoints', { body: { url: `${receiverUrl}/offboarded`, eventTypes: [] }, headers: keyHeaders });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'personal_data_destroyed']);
    const refusedToOperator = await app.admin('POST', `/admin/v1/organizations/${offboarded}/webhook_endpoints`, { environment: 'live', url: 'https://hooks.example/live' });
    expect([refusedToOperator.status, refusedToOperator.body.error.code]).toEqual([403, 'personal_data_destroyed']);
  });
});
