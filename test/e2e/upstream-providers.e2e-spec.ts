import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { dojah, PORTRAIT } from '../../src/providers/upstream-fixtures.testing.js';
import { WalletLedger } from '../../src/wallets/wallet-ledger.port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { streamEvents } from '../support/event-store.js';
import { json, slow, UpstreamStub } from '../support/upstream-stub.js';

const DOJAH_SECRET = `sk_live_${randomBytes(12).toString('hex')}`;
const NIN = { nin: '12345678905' };

/**
 * A live key of an approved organization, configured through the admin API to reach "Dojah" (a
 * local stub answering in Dojah's documented shapes): the whole path from PUT .../provider to a
 * charged check with a portrait link, an uncharged 502, and a breaker that fails fast.
 */
describe('Upstream providers through the API', () => {
  let app: TestApp;
  let stub: UpstreamStub;
  let org: { id: string };
  let liveKey: string;

  const post = (scope: string, body: unknown) => app.request('POST', `/v1/${scope}`, { body, headers: { 'x-service-key': liveKey } });
  const balance = () => app.app.get(WalletLedger).balance({ organizationId: org.id, environment: 'live' });

  beforeAll(async () => {
    stub = await UpstreamStub.start();
    app = await startTestApp({
      env: {
        DOJAH_BASE_URL: stub.baseUrl,
        PROVIDER_TIMEOUT_MS: '2000',
        DOJAH_TIMEOUT_MS: '500',
        PROVIDER_BREAKER_FAILURES: '2',
        PROVIDER_BREAKER_HALF_OPEN_MS: '60000',
        PROVIDER_CREDENTIALS_KEY: randomBytes(32).toString('hex'),
      },
    });
    org = await createOrganization(app, { approved: true, scopes: ['nin', 'bvn', 'passport'] });
    liveKey = (await issueKey(app, org.id, { environment: 'live' })).key;
    expect((await app.admin('POST', `/admin/v1/organizations/${org.id}/wallets/live/fundings`, { amountKobo: 1_000_000, reference: 'e2e-upstream' })).status).toBe(201);
  });
  afterAll(async () => {
    await app?.close();
    await stub?.close();
  });

  it('refuses a provider that cannot serve an active scope (422 naming it), and bad credentials field by field', async () => {
    const unserved = await app.admin('PUT', `/admin/v1/organizations/${org.id}/provider`, {
      environment: 'live',
      provider: 'dojah',
      credentials: { appId: 'app-1', secretKey: DOJAH_SECRET },
    });
    expect(unserved.status).toBe(422);
    expect(unserved.body.error.details.fields[0]).toMatchObject({ field: 'scopes', message: expect.stringMatching(/^dojah cannot serve passport/) });
    const badCredentials = await app.admin('PUT', `/admin/v1/organizations/${org.id}/provider`, {
      environment: 'live',
      provider: 'dojah',
      credentials: { appId: 'app-1', apiKey: DOJAH_SECRET },
    });
    expect(badCredentials.status).toBe(422);
    expect(badCredentials.body.error.details.fields.map((field: { field: string }) => field.field)).toEqual(['credentials.apiKey', 'credentials.secretKey']);
    expect(JSON.stringify(badCredentials.body)).not.toContain(DOJAH_SECRET);
  });

  it('stores the credentials encrypted: in no response, not in plain text in the event', async () => {
    expect((await app.admin('PUT', `/admin/v1/organizations/${org.id}/scopes`, { scopes: ['nin', 'bvn'] })).status).toBe(200);
    const configured = await app.admin('PUT', `/admin/v1/organizations/${org.id}/provider`, {
      environment: 'live',
      provider: 'dojah',
      credentials: { appId: 'app-1', secretKey: DOJAH_SECRET },
    });
    expect(configured.status).toBe(200);
    expect(configured.body.data.providers).toEqual({ live: { provider: 'dojah', fallback: null } });
    const fetched = await app.admin('GET', `/admin/v1/organizations/${org.id}`);
    expect(fetched.body.data.providers).toEqual({ live: { provider: 'dojah', fallback: null } });
    expect(JSON.stringify([configured.body, fetched.body])).not.toContain(DOJAH_SECRET);
    const event = (await streamEvents(app.eventStore, `organization-${org.id}`)).find((recorded) => recorded.type === 'ProviderConfigured');
    expect(event?.data.credentials).toMatch(/^v1\./);
    expect(JSON.stringify([event?.data, event?.metadata])).not.toContain(DOJAH_SECRET);
  });

  it('found: 201, charged, the portrait behind a signed link, the upstream called with the decrypted credentials', async () => {
    stub.next(json(200, dojah.nin));
    const before = await balance();
    const response = await post('nin', NIN);
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ status: 'found', charged: true, result: { firstName: 'MOSHOOD', dateOfBirth: '1993-06-10', gender: 'Male' } });
    expect(response.body.data.result).not.toHaveProperty('picture');
    const portrait = await fetch(response.body.data.result.portraitUrl);
    expect(Buffer.from(await portrait.arrayBuffer()).equals(PORTRAIT)).toBe(true);
    expect(stub.requests.at(-1)?.headers).toMatchObject({ appid: 'app-1', authorization: DOJAH_SECRET });
    expect((await balance()).balanceKobo).toBe(before.balanceKobo - response.body.data.priceKobo);
  });

  it('an upstream too slow, and one answering something that is not a record: 502 provider_timeout and provider_error', async () => {
    stub.next(slow(1_000));
    const late = await post('nin', NIN);
    expect(late.status).toBe(502);
    expect(late.body.error.details.failureReason).toBe('provider_timeout');
    // A success between the failures: two in a row would open the breaker (PROVIDER_BREAKER_FAILURES=2).
    stub.next(json(200, dojah.nin));
    expect((await post('nin', NIN)).status).toBe(201);
    stub.next(json(200, { entity: 'not a record' }));
    const malformed = await post('nin', NIN);
    expect(malformed.status).toBe(502);
    expect(malformed.body.error.details.failureReason).toBe('provider_error');
    const shown = await app.request('GET', `/v1/verifications/${malformed.body.error.details.reference}`, { headers: { 'x-service-key': liveKey } });
    expect(shown.body.data).toMatchObject({ status: 'failed', failureReason: 'provider_error' });
    // Closes the count of consecutive failures again, for the breaker's own test below.
    stub.next(json(200, dojah.nin));
    expect((await post('nin', NIN)).status).toBe(201);
  });

  it('a provider failure: 502 with the reference, not charged; the breaker then opens and answers 502 fast without calling the upstream', async () => {
    stub.always(json(500, { error: 'upstream down' }));
    const before = await balance();
    const failed = await post('nin', NIN);
    expect(failed.status).toBe(502);
    // An upstream answering 5xx is unavailable.
    expect(failed.body.error).toMatchObject({ code: 'provider_failed', details: { reference: expect.stringMatching(/^vrf_/), failureReason: 'provider_unavailable' } });
    const shown = await app.request('GET', `/v1/verifications/${failed.body.error.details.reference}`, { headers: { 'x-service-key': liveKey } });
    expect(shown.body.data).toMatchObject({ status: 'failed', charged: false, failureReason: 'provider_unavailable' });
    expect(await post('bvn', { bvn: '22468537919' })).toMatchObject({ status: 502 });
    const calls = stub.requests.length;
    const started = Date.now();
    const fast = await post('nin', NIN);
    expect(fast.status).toBe(502);
    // Fast: no upstream call (below). What time it takes is the store's: four appends, each
    // acknowledged once readable (on the esdb project, behind its index lag).
    expect(Date.now() - started).toBeLessThan(1_000);
    // Not called at all: the breaker is open. Its reason code in the event says so precisely.
    expect(fast.body.error.details.failureReason).toBe('provider_unavailable');
    const events = await streamEvents(app.eventStore, `verification-${fast.body.error.details.reference}`);
    expect(events.find((event) => event.type === 'VerificationFailed')?.data.reasonCode).toBe('provider_circuit_open');
    expect(stub.requests).toHaveLength(calls);
    const after = await balance();
    expect(after.balanceKobo).toBe(before.balanceKobo);
    expect(after.reservedKobo).toBe(0);
  });
});
