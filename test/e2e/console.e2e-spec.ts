import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { streamEvents } from '../support/event-store.js';
import { SCOPES } from '../../src/scopes/scopes.js';

const PASSWORD = 'correct horse battery';

describe('Console API: integrators', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: '500000', DEFAULT_ACTIVE_SCOPES: 'nin,bvn' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  async function signedUp(label = 'owner'): Promise<{ client: ConsoleClient; email: string; organizationId: string; userId: string }> {
    const client = new ConsoleClient(app);
    const email = uniqueEmail(label);
    const response = await client.signUpAndSignIn({ organizationName: `Acme ${label}`, email, password: PASSWORD });
    expect(response.status).toBe(200);
    return { client, email, organizationId: response.body.data.organization.id, userId: response.body.data.user.id };
  }

  describe('sign-up to a first sandbox check', () => {
    it('creates the organization through the admin command, with the sandbox credit, the user as actor, and a session', async () => {
      const { client, organizationId, userId, email } = await signedUp();
      const session = await client.session();
      expect(session.body.data.user).toMatchObject({ id: userId, email, kind: 'integrator', role: 'owner', emailVerified: false });
      expect(session.body.data.organization).toMatchObject({ id: organizationId, status: 'pending', approved: false, activeScopes: ['nin', 'bvn'], liveAccessRequestedAt: null });
      const events = await streamEvents(app.eventStore, `organization-${organizationId}`);
      expect(events.map((event) => event.type)).toEqual(['OrganizationRegistered', 'ApiKeyIssued']);
      for (const event of events) expect(event.metadata.actor).toEqual({ type: 'user', id: userId });
      const wallet = await client.call('GET', '/console/api/wallet?environment=test');
      expect(wallet.status).toBe(200);
      expect(wallet.body.data).toMatchObject({ environment: 'test', balanceKobo: 500_000, availableKobo: 500_000 });
    });

    it("gives each scope's example request, which the playground runs as it is, and marks an input that is a file", async () => {
      const { client, organizationId } = await signedUp('examples');
      expect((await app.admin('PUT', `/admin/v1/organizations/${organizationId}/scopes`, { scopes: [...SCOPES] })).status).toBe(200);
      const scopes = (await client.call('GET', '/console/api/scopes')).body.data as {
        scope: string;
        active: boolean;
        example: Record<string, string>;
        fields: { name: string; mediaTypes?: string[] }[];
      }[];
      const active = scopes.filter((item) => item.active);
      expect(active.map((item) => item.scope)).toEqual([...SCOPES]);
      for (const { scope, example } of active) {
        const run = await client.call('POST', `/console/api/playground/${scope}`, { environment: 'test', input: example });
        expect({ scope, status: run.status, result: run.body.data?.status, error: run.body.error }).toEqual({ scope, status: 201, result: 'found', error: undefined });
      }
      const faceMatch = scopes.find((item) => item.scope === 'face_match');
      expect(faceMatch?.fields.filter((field) => field.mediaTypes !== undefined)).toEqual([
        { name: 'image', required: true, description: expect.any(String), example: expect.any(String), mediaTypes: ['image/jpeg', 'image/png'] },
      ]);
    });

    it('runs a playground check at once, then shows it in the list, the overview and the wallet', async () => {
      const { client, organizationId, userId } = await signedUp('playground');
      const scopes = await client.call('GET', '/console/api/scopes');
      const nin = scopes.body.data.find((scope: { scope: string }) => scope.scope === 'nin');
      expect(nin).toMatchObject({ active: true, fields: [expect.objectContaining({ name: 'nin', required: true })] });
      const run = await client.call('POST', '/console/api/playground/nin', { environment: 'test', input: { nin: nin.fields[0].example } });
      expect(run.status).toBe(201);
      expect(run.body.data).toMatchObject({ scope: 'nin', status: 'found', charged: true });
      const reference = run.body.data.reference as string;
      const requested = (await streamEvents(app.eventStore, `verification-${reference}`))[0];
      expect(requested.metadata.actor).toEqual({ type: 'user', id: userId });

      const list = await client.call('GET', '/console/api/verifications?environment=test&page=1&pageSize=5');
      expect(list.status).toBe(200);
      expect(list.body.data.map((row: { reference: string }) => row.reference)).toContain(reference);
      expect(list.body.meta).toMatchObject({ total: 1, page: 1, pageSize: 5 });
      const detail = await client.call('GET', `/console/api/verifications/${reference}?environment=test`);
      expect(detail.body.data).toMatchObject({ reference, status: 'found' });
      const live = await client.call('GET', '/console/api/verifications?environment=live');
      expect(live.body.meta.total).toBe(0);

      const wallet = await client.call('GET', '/console/api/wallet?environment=test');
      expect(wallet.body.data.balanceKobo).toBe(500_000 - run.body.data.priceKobo);
      const transactions = await client.call('GET', '/console/api/wallet/transactions?environment=test');
      expect(transactions.body.data.map((t: { type: string }) => t.type)).toEqual(['debit', 'reservation', 'funding']);
      const csv = await client.call('GET', '/console/api/wallet/transactions.csv?environment=test');
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(String(csv.body).trim().split('\r\n')).toHaveLength(4);

      const overview = await client.call('GET', '/console/api/overview?environment=test');
      expect(overview.body.data.recent[0].reference).toBe(reference);
      expect(overview.body.data.days).toEqual([{ date: new Date().toISOString().slice(0, 10), scope: 'nin', status: 'found', count: 1 }]);
      expect(organizationId).toMatch(/^org_/);
    });

    it("refuses a blank name and a bad email by the registration command's own rules, every field at once, writing nothing", async () => {
      const client = new ConsoleClient(app);
      await client.session();
      const refused = await client.call('POST', '/console/api/signup', { organizationName: '   ', email: 'not-an-email', password: PASSWORD });
      expect(refused.status).toBe(422);
      expect([...new Set(refused.body.error.details.fields.map((field: { field: string }) => field.field))].sort()).toEqual(['email', 'organizationName']);
      const short = await client.call('POST', '/console/api/signup', { organizationName: 'Acme', email: uniqueEmail('short'), password: 'short' });
      expect(short.body.error.details.fields).toEqual([{ field: 'password', message: 'password must be 10 to 200 characters' }]);
      expect((await client.call('POST', '/console/api/login', { email: 'not-an-email', password: PASSWORD })).status).toBe(401);
    });
  });

  describe('API keys', () => {
    it('shows a new key once, lists it without the key, and a revoked key gets 401 from the API', async () => {
      const { client } = await signedUp('keys');
      const issued = await client.call('POST', '/console/api/keys', { environment: 'test', name: 'backend', scopes: ['nin'] });
      expect(issued.status).toBe(201);
      const key = issued.body.data.key as string;
      expect(key).toMatch(/^service_test_/);
      const before = await app.request('POST', '/v1/nin', { body: { nin: '21440414976' }, headers: { 'x-service-key': key } });
      expect(before.status).toBe(201);
      const listed = await client.call('GET', '/console/api/keys');
      const row = listed.body.data.find((k: { id: string }) => k.id === issued.body.data.id);
      expect(row).toMatchObject({ name: 'backend', environment: 'test', scopes: ['nin'], revokedAt: null });
      expect(JSON.stringify(listed.body)).not.toContain(key);
      expect(row.lastUsedAt).not.toBeNull();
      const revoked = await client.call('DELETE', `/console/api/keys/${issued.body.data.id}`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.data.revokedAt).not.toBeNull();
      const after = await app.request('POST', '/v1/nin', { body: { nin: '21440414976' }, headers: { 'x-service-key': key } });
      expect(after.status).toBe(401);
    });

    it("refuses another organization's key (404)", async () => {
      const a = await signedUp('key-a');
      const b = await signedUp('key-b');
      const keys = await b.client.call('GET', '/console/api/keys');
      const revoked = await a.client.call('DELETE', `/console/api/keys/${keys.body.data[0].id}`);
      expect(revoked.status).toBe(404);
    });
  });

  describe('sessions and CSRF', () => {
    it("refuses a write without the CSRF token, or with another session's, and from another origin", async () => {
      const { client } = await signedUp('csrf');
      const other = await signedUp('csrf-other');
      const none = await client.call('POST', '/console/api/keys', { environment: 'test' }, { csrf: null });
      expect(none.status).toBe(403);
      expect(none.body.error.code).toBe('csrf_failed');
      const foreign = await client.call('POST', '/console/api/keys', { environment: 'test' }, { csrf: other.client.csrfToken });
      expect(foreign.body.error.code).toBe('csrf_failed');
      const crossSite = await client.call('POST', '/console/api/keys', { environment: 'test' }, { headers: { origin: 'https://evil.example' } });
      expect(crossSite.body.error.code).toBe('csrf_failed');
      const anonymous = await new ConsoleClient(app).call('POST', '/console/api/login', { email: 'x@example.com', password: 'whatever12' }, { csrf: null });
      expect(anonymous.body.error.code).toBe('csrf_failed');
    });

    it('sets an httpOnly SameSite=Lax cookie, lists sessions, and a revoked session answers 401', async () => {
      const client = new ConsoleClient(app);
      await client.session();
      const email = uniqueEmail('sessions');
      const signedUp = await client.call('POST', '/console/api/signup', { organizationName: 'Acme sessions', email, password: PASSWORD });
      expect(signedUp.status).toBe(202);
      expect(signedUp.headers.getSetCookie()).toEqual([]);
      const response = await client.call('POST', '/console/api/login', { email, password: PASSWORD });
      const cookie = response.headers.getSetCookie().find((line) => line.startsWith('ivl_session='));
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Lax/i);
      expect(cookie).toMatch(/Path=\/console/);
      const second = new ConsoleClient(app);
      expect((await second.call('POST', '/console/api/login', { email, password: PASSWORD })).status).toBe(200);
      const sessions = await client.call('GET', '/console/api/sessions');
      expect(sessions.body.data).toHaveLength(2);
      const theirs = sessions.body.data.find((s: { current: boolean }) => !s.current);
      expect((await client.call('DELETE', `/console/api/sessions/${theirs.id}`)).status).toBe(204);
      const refused = await second.call('GET', '/console/api/keys');
      expect(refused.status).toBe(401);
      expect((await client.call('GET', '/console/api/keys')).status).toBe(200);
    });

    it('signs out', async () => {
      const { client } = await signedUp('logout');
      expect((await client.call('POST', '/console/api/logout')).status).toBe(204);
      expect((await client.call('GET', '/console/api/keys')).status).toBe(401);
      expect((await client.session()).body.data.user).toBeNull();
    });

    it('refuses a wrong password, then throttles the account (429 with Retry-After)', async () => {
      const { email } = await signedUp('throttle');
      const client = new ConsoleClient(app);
      for (let attempt = 0; attempt < 5; attempt++) {
        const wrong = await client.call('POST', '/console/api/login', { email, password: 'not the password' });
        expect(wrong.status).toBe(401);
        expect(wrong.body.error.code).toBe('invalid_credentials');
      }
      const throttled = await client.call('POST', '/console/api/login', { email, password: PASSWORD });
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    });
  });
});
