import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { ConsoleClient, uniqueEmail } from '../../test/support/console-client.js';
import { streamEvents } from '../../test/support/event-store.js';

const PASSWORD = 'correct horse battery';
const RECEIVER = 'https://hooks.acme.example/ledger';

describe('Console API: webhooks and the low-balance threshold', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  async function signedUp(label: string): Promise<{ client: ConsoleClient; userId: string }> {
    const client = new ConsoleClient(app);
    const response = await client.signUpAndSignIn({ organizationName: `Acme ${label}`, email: uniqueEmail(label), password: PASSWORD });
    expect(response.status).toBe(200);
    return { client, userId: response.body.data.user.id };
  }

  it("manages the organization's endpoints of the chosen environment through the webhooks service, with the user as actor", async () => {
    const { client, userId } = await signedUp('hooks');
    const created = await client.call('POST', '/console/api/webhooks/endpoints?environment=live', {
      url: RECEIVER,
      eventTypes: ['verification.completed'],
      description: 'receiver',
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      url: RECEIVER,
      eventTypes: ['verification.completed'],
      description: 'receiver',
      enabled: true,
      environment: 'live',
      secret: expect.stringMatching(/^whsec_/),
    });
    const { id, secret } = created.body.data as { id: string; secret: string };
    const events = await streamEvents(app.eventStore, `webhookEndpoint-${id}`);
    expect(events.map((event) => event.metadata.actor)).toEqual([{ type: 'user', id: userId }]);

    expect((await client.call('GET', '/console/api/webhooks/endpoints?environment=test')).body.data).toEqual([]);
    const live = await client.call('GET', '/console/api/webhooks/endpoints?environment=live');
    expect(live.body.data.map((endpoint: { id: string }) => endpoint.id)).toEqual([id]);
    expect(JSON.stringify(live.body)).not.toContain(secret);
    // The endpoint belongs to its environment: from the test environment it is not found.
    expect((await client.call('PATCH', `/console/api/webhooks/endpoints/${id}?environment=test`, { enabled: false })).status).toBe(404);

    const changed = await client.call('PATCH', `/console/api/webhooks/endpoints/${id}?environment=live`, { enabled: false });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ id, enabled: false });
    const rotated = await client.call('POST', `/console/api/webhooks/endpoints/${id}/rotate_secret?environment=live`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(secret);
    const deliveries = await client.call('GET', `/console/api/webhooks/endpoints/${id}/deliveries?environment=live&pageSize=5`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body).toMatchObject({ data: [], meta: { total: 0, page: 1, pageSize: 5 } });
    expect((await client.call('POST', `/console/api/webhooks/endpoints/${id}/deliveries/1/resend?environment=live`, {})).status).toBe(404);

    // Another organization's owner does not find it.
    const other = (await signedUp('other')).client;
    for (const [method, path] of [
      ['GET', `/console/api/webhooks/endpoints/${id}/deliveries?environment=live`],
      ['PATCH', `/console/api/webhooks/endpoints/${id}?environment=live`],
      ['POST', `/console/api/webhooks/endpoints/${id}/rotate_secret?environment=live`],
      ['DELETE', `/console/api/webhooks/endpoints/${id}?environment=live`],
    ] as const) {
      expect({ method, status: (await other.call(method, path, method === 'GET' || method === 'DELETE' ? undefined : {})).status }).toEqual({ method, status: 404 });
    }

    expect((await client.call('DELETE', `/console/api/webhooks/endpoints/${id}?environment=live`)).status).toBe(200);
    expect((await client.call('GET', '/console/api/webhooks/endpoints?environment=live')).body.data).toEqual([]);
  });

  it('refuses a write without the CSRF token, or from another site, and a signed-out caller', async () => {
    const { client } = await signedUp('csrf');
    const missing = await client.call('POST', '/console/api/webhooks/endpoints', { url: RECEIVER }, { csrf: null });
    expect({ status: missing.status, code: missing.body.error.code }).toEqual({ status: 403, code: 'csrf_failed' });
    const crossSite = await client.call('PUT', '/console/api/wallet/low_balance_threshold', { thresholdKobo: 1 }, { headers: { origin: 'https://evil.example' } });
    expect({ status: crossSite.status, code: crossSite.body.error.code }).toEqual({ status: 403, code: 'csrf_failed' });
    expect((await client.call('GET', '/console/api/webhooks/endpoints')).body.data).toEqual([]);
    expect((await new ConsoleClient(app).call('GET', '/console/api/webhooks/endpoints')).status).toBe(401);
  });

  it('validates the body and the environment without echoing values', async () => {
    const { client } = await signedUp('invalid');
    const bad = await client.call('POST', '/console/api/webhooks/endpoints', { url: 'ftp://secret-host.example/x', color: 'blue' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.fields.map((field: { field: string }) => field.field).sort()).toEqual(['color', 'url']);
    expect(JSON.stringify(bad.body)).not.toContain('secret-host');
    expect((await client.call('GET', '/console/api/webhooks/endpoints?environment=staging')).status).toBe(422);
  });

  it("reads and sets the wallet's low-balance threshold per environment", async () => {
    const { client } = await signedUp('threshold');
    expect((await client.call('GET', '/console/api/wallet/low_balance_threshold?environment=test')).body.data).toEqual({ environment: 'test', thresholdKobo: null });
    const set = await client.call('PUT', '/console/api/wallet/low_balance_threshold?environment=test', { thresholdKobo: 500_000 });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({ environment: 'test', thresholdKobo: 500_000 });
    expect((await client.call('GET', '/console/api/wallet/low_balance_threshold?environment=test')).body.data.thresholdKobo).toBe(500_000);
    expect((await client.call('GET', '/console/api/wallet/low_balance_threshold?environment=live')).body.data.thresholdKobo).toBeNull();
    expect((await client.call('PUT', '/console/api/wallet/low_balance_threshold?environment=test', { thresholdKobo: -1 })).status).toBe(422);
    expect((await client.call('PUT', '/console/api/wallet/low_balance_threshold?environment=test', { thresholdKobo: null })).body.data.thresholdKobo).toBeNull();
  });
});
