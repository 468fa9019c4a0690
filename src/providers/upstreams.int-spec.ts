import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import client from 'prom-client';
import { testEventStoreKind } from '../../test/support/event-store.js';
import { json, raw, reset, slow, UpstreamStub } from '../../test/support/upstream-stub.js';
import { DojahAdapter } from './dojah.provider.js';
import { PremblyAdapter } from './prembly.provider.js';
import type { ProviderOutcome } from './provider.port.js';
import { ResilientProvider, UpstreamPolicies, type UpstreamPolicySettings } from './resilience.js';
import { dojah, PORTRAIT, prembly } from './upstream-fixtures.testing.js';

// These tests touch no database or event store: running them on the EventStoreDB project too would only repeat them.
const describeOnce = testEventStoreKind() === 'esdb' ? describe.skip : describe;

const SETTINGS: UpstreamPolicySettings = { timeoutMs: { dojah: 150, prembly: 150 }, breakerFailures: 3, breakerHalfOpenMs: 200, retryAttempts: 1, retryDelayMs: 10 };
const options = () => ({ referenceYear: 2026 });
const nin = { nin: '12345678905' };

async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = client.register.getSingleMetric(name);
  if (metric === undefined) return 0;
  const { values } = await metric.get();
  return values
    .filter(
      (value) =>
        (value as { metricName?: string }).metricName === undefined ||
        (value as { metricName?: string }).metricName === name ||
        (value as { metricName?: string }).metricName === `${name}_count`,
    )
    .filter((value) => Object.entries(labels).every(([label, wanted]) => value.labels[label] === wanted))
    .reduce((sum, value) => sum + value.value, 0);
}

describeOnce('Upstream providers against local stub servers (store-independent: runs on the postgres project only)', () => {
  let dojahStub: UpstreamStub;
  let premblyStub: UpstreamStub;

  beforeAll(async () => {
    [dojahStub, premblyStub] = await Promise.all([UpstreamStub.start(), UpstreamStub.start()]);
  });
  afterAll(async () => Promise.all([dojahStub?.close(), premblyStub?.close()]));
  afterEach(() => {
    dojahStub.clear();
    premblyStub.clear();
  });

  const dojahAdapter = (baseUrl = dojahStub.baseUrl) => new DojahAdapter(baseUrl, { appId: 'app-dojah', secretKey: 'sk-dojah' }, options);
  const premblyAdapter = () => new PremblyAdapter(premblyStub.baseUrl, { appId: 'app-prembly', apiKey: 'key-prembly' }, options);
  const verify = (provider: ResilientProvider, scope: Parameters<ResilientProvider['verify']>[0] = 'nin', input: Record<string, string> = nin): Promise<ProviderOutcome> =>
    provider.verify(scope, input, { timeoutMs: 2_000, signal: new AbortController().signal });

  describe('Dojah', () => {
    it('GETs the documented path with query strings and its two headers; found, with the portrait beside the result', async () => {
      dojahStub.next(json(200, dojah.nin));
      const outcome = await verify(new ResilientProvider([dojahAdapter()], new UpstreamPolicies(SETTINGS)));
      expect(outcome).toMatchObject({ outcome: 'found', result: { firstName: 'MOSHOOD', dateOfBirth: '1993-06-10', gender: 'Male' } });
      expect(outcome.outcome === 'found' && outcome.portrait?.equals(PORTRAIT)).toBe(true);
      const [request] = dojahStub.requests;
      expect(request.method).toBe('GET');
      expect(`${request.url.pathname}${request.url.search}`).toBe('/api/v1/kyc/nin?nin=12345678905');
      expect(request.headers).toMatchObject({ appid: 'app-dojah', authorization: 'sk-dojah' });
    });

    it('404 {"error": ...} is not_found; unexpected extra fields are ignored', async () => {
      const provider = new ResilientProvider([dojahAdapter()], new UpstreamPolicies(SETTINGS));
      dojahStub.next(json(404, dojah.notFound), json(200, { entity: { ...dojah.vin.entity, brand_new_field: { nested: [1, 2] } }, extra: true }));
      expect(await verify(provider)).toEqual({ outcome: 'not_found' });
      expect(await verify(provider, 'pvc', { vin: '90F5B1C5BD295355586' })).toMatchObject({ outcome: 'found', result: { fullName: 'SALIU MOSHOOD KOLAWOLE' } });
    });

    it('malformed JSON and 5xx fail without a retry (an answer came back)', async () => {
      const provider = new ResilientProvider([dojahAdapter()], new UpstreamPolicies(SETTINGS));
      dojahStub.next(raw(200, '{"entity": {"first_name": "A"'), json(503, { error: 'maintenance' }));
      expect(await verify(provider)).toMatchObject({ outcome: 'failed', reasonCode: 'provider_malformed_response' });
      expect(await verify(provider)).toMatchObject({ outcome: 'failed', reasonCode: 'provider_unavailable' });
      expect(dojahStub.requests).toHaveLength(2);
    });

    it('a slow answer times out at the per-upstream timeout and is never retried', async () => {
      const provider = new ResilientProvider([dojahAdapter()], new UpstreamPolicies(SETTINGS));
      dojahStub.next(slow(600, dojah.nin));
      const started = Date.now();
      expect(await verify(provider)).toMatchObject({ outcome: 'failed', reasonCode: 'provider_timeout' });
      expect(Date.now() - started).toBeLessThan(500);
      expect(dojahStub.requests).toHaveLength(1);
    });

    it('a connection reset before any answer is retried once, then answers', async () => {
      const provider = new ResilientProvider([dojahAdapter()], new UpstreamPolicies(SETTINGS));
      dojahStub.next(reset, json(200, dojah.nin));
      expect(await verify(provider)).toMatchObject({ outcome: 'found' });
      expect(dojahStub.requests).toHaveLength(2);
    });

    it('resets on every attempt, and a refused connection, fail as unreachable after the bounded retry', async () => {
      const provider = new ResilientProvider([dojahAdapter()], new UpstreamPolicies(SETTINGS));
      dojahStub.always(reset);
      expect(await verify(provider)).toMatchObject({ outcome: 'failed', reasonCode: 'provider_unreachable' });
      expect(dojahStub.requests).toHaveLength(2);
      const closed = await UpstreamStub.start();
      const url = closed.baseUrl;
      await closed.close();
      expect(await verify(new ResilientProvider([dojahAdapter(url)], new UpstreamPolicies(SETTINGS)))).toMatchObject({ outcome: 'failed', reasonCode: 'provider_unreachable' });
      dojahStub.always(json(500, {}));
    });
  });

  describe('Prembly', () => {
    it('POSTs {"number": ...} with x-api-key and app-id; "00" found, "01" not found, "03" failed', async () => {
      const provider = new ResilientProvider([premblyAdapter()], new UpstreamPolicies(SETTINGS));
      premblyStub.next(json(200, prembly.nin), json(200, prembly.notFound), json(200, prembly.walletEmpty));
      expect(await verify(provider)).toMatchObject({ outcome: 'found', result: { firstName: 'Ngozi', phoneNumber: '08031234567' } });
      expect(await verify(provider)).toEqual({ outcome: 'not_found' });
      expect(await verify(provider)).toMatchObject({ outcome: 'failed', reasonCode: 'provider_wallet_empty' });
      const [request] = premblyStub.requests;
      expect(request.method).toBe('POST');
      expect(request.url.pathname).toBe('/identitypass/verification/nin');
      expect(JSON.parse(request.body)).toEqual({ number: '12345678905' });
      expect(request.headers).toMatchObject({ 'x-api-key': 'key-prembly', 'app-id': 'app-prembly' });
    });

    it('"02" service unavailable fails over to the secondary upstream', async () => {
      const provider = new ResilientProvider([premblyAdapter(), dojahAdapter()], new UpstreamPolicies(SETTINGS));
      premblyStub.next(json(200, prembly.unavailable));
      dojahStub.next(json(200, dojah.nin));
      expect(await verify(provider)).toMatchObject({ outcome: 'found', result: { firstName: 'MOSHOOD' } });
      expect([premblyStub.requests.length, dojahStub.requests.length]).toEqual([1, 1]);
    });
  });

  describe('circuit breaker and metrics', () => {
    it('opens after consecutive health failures (fast 502s without calling the upstream), half-opens, and closes on success', async () => {
      const policies = new UpstreamPolicies(SETTINGS);
      const provider = new ResilientProvider([dojahAdapter()], policies);
      const foundBefore = await metricValue('ivl_provider_outcomes_total', { provider: 'dojah', scope: 'bvn', outcome: 'found' });
      const failedBefore = await metricValue('ivl_provider_outcomes_total', { provider: 'dojah', scope: 'bvn', outcome: 'provider_unavailable' });
      dojahStub.always(json(500, { error: 'down' }));
      for (let i = 0; i < 3; i++) expect(await verify(provider, 'bvn', { bvn: '22468537919' })).toMatchObject({ reasonCode: 'provider_unavailable' });
      expect(await metricValue('ivl_provider_breaker_state', { provider: 'dojah' })).toBe(2);
      const started = Date.now();
      expect(await verify(provider, 'bvn', { bvn: '22468537919' })).toMatchObject({ outcome: 'failed', reasonCode: 'provider_circuit_open' });
      expect(Date.now() - started).toBeLessThan(50);
      expect(dojahStub.requests).toHaveLength(3);
      expect(await metricValue('ivl_provider_outcomes_total', { provider: 'dojah', scope: 'bvn', outcome: 'provider_unavailable' })).toBe(failedBefore + 3);

      await new Promise((wake) => setTimeout(wake, SETTINGS.breakerHalfOpenMs + 50));
      dojahStub.always(json(200, dojah.bvn));
      expect(await verify(provider, 'bvn', { bvn: '22468537919' })).toMatchObject({ outcome: 'found' });
      expect(await metricValue('ivl_provider_breaker_state', { provider: 'dojah' })).toBe(0);
      expect(await metricValue('ivl_provider_outcomes_total', { provider: 'dojah', scope: 'bvn', outcome: 'found' })).toBe(foundBefore + 1);
      expect(await metricValue('ivl_provider_request_duration_seconds', { provider: 'dojah', scope: 'bvn', outcome: 'found' })).toBeGreaterThan(0);
    });

    it("an organization's own failures (bad credentials, empty upstream wallet) never open the breaker", async () => {
      const policies = new UpstreamPolicies(SETTINGS);
      const provider = new ResilientProvider([premblyAdapter()], policies);
      premblyStub.always(json(401, { detail: 'invalid api key' }));
      for (let i = 0; i < 5; i++) expect(await verify(provider)).toMatchObject({ reasonCode: 'provider_unauthorized' });
      expect(premblyStub.requests).toHaveLength(5);
      expect(policies.breaker('prembly').state).toBe(0);
    });
  });
});
