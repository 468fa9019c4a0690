import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDraining } from '../../src/lifecycle/graceful-shutdown.js';
import { parseMetrics, sumOfSamples } from '../../src/metrics/prometheus-text.testing.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

describe('Operations: /metrics, security headers, CORS and the production switches', () => {
  let app: TestApp;
  let key: string;

  beforeAll(async () => {
    app = await startTestApp();
    const org = await createOrganization(app, { approved: true });
    key = (await issueKey(app, org.id)).key;
  });

  afterAll(async () => {
    await app?.close();
  });

  const scrape = async () => {
    const response = await fetch(`${app.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await response.text());
  };

  it('counts checks by scope and outcome, kobo charged, requests by route template, appends, wallet batches and lag, with no input in any label', async () => {
    const before = await scrape();
    const inputs = { found: '80417352965', notFound: '80417352961', failing: '70417352962' };
    const post = (scope: string, body: Record<string, string>) => app.request('POST', `/v1/${scope}`, { body, headers: { 'x-service-key': key } });
    const found = await post('nin', { nin: inputs.found });
    expect(found.status).toBe(201);
    expect((await post('nin', { nin: inputs.notFound })).status).toBe(201);
    expect((await post('bvn', { bvn: inputs.failing })).status).toBe(502);
    const reference: string = found.body.data.reference;
    expect((await app.request('GET', `/v1/verifications/${reference}`, { headers: { 'x-service-key': key } })).status).toBe(200);
    const after = await scrape();

    const moved = (name: string, labels: Record<string, string>) => sumOfSamples(after, name, labels) - sumOfSamples(before, name, labels);
    expect(moved('ivl_verifications_total', { scope: 'nin', environment: 'test', outcome: 'found' })).toBe(1);
    expect(moved('ivl_verifications_total', { scope: 'nin', environment: 'test', outcome: 'not_found' })).toBe(1);
    expect(moved('ivl_verifications_total', { scope: 'bvn', environment: 'test', outcome: 'failed' })).toBe(1);
    expect(moved('ivl_charged_kobo_total', { scope: 'nin', environment: 'test' })).toBe(20_000);
    expect(moved('ivl_charged_kobo_total', { scope: 'bvn', environment: 'test' })).toBe(0);
    expect(moved('ivl_http_requests_total', { method: 'POST', route: '/v1/:scope', status: '201' })).toBe(2);
    expect(moved('ivl_http_requests_total', { method: 'POST', route: '/v1/:scope', status: '502' })).toBe(1);
    expect(moved('ivl_http_request_duration_seconds_count', { method: 'GET', route: '/v1/verifications/:reference', status: '200' })).toBe(1);
    expect(moved('ivl_verification_provider_duration_seconds_count', { scope: 'bvn', outcome: 'failed' })).toBe(1);
    // Each check appends its request, its end and two wallet events: four appends on EventStoreDB, two write-sets on PostgreSQL.
    expect(moved('ivl_event_store_append_duration_seconds_count', { store: app.eventStoreKind, outcome: 'ok' })).toBeGreaterThanOrEqual(
      3 * (app.eventStoreKind === 'postgres' ? 2 : 4),
    );
    // Six wallet commands, each check's reservation and then its capture (found, not found) or release (failed), in one batch or several, every batch appended.
    expect(moved('ivl_wallet_command_wait_seconds_count', {})).toBe(6);
    expect(moved('ivl_wallet_batch_commands_sum', {})).toBe(6);
    const batches = moved('ivl_wallet_batch_commands_count', {});
    expect(batches).toBeGreaterThanOrEqual(2);
    expect(moved('ivl_wallet_batch_duration_seconds_count', { outcome: 'appended' })).toBe(batches);
    expect(moved('ivl_wallet_batch_duration_seconds_count', {})).toBe(batches);
    expect(after.filter((entry) => entry.name === 'ivl_projection_lag_seconds').map((entry) => entry.labels.projection)).toEqual(
      expect.arrayContaining(['verifications', 'wallets', 'api-keys']),
    );
    expect(after.some((entry) => entry.name === 'ivl_process_resident_memory_bytes' || entry.name === 'ivl_nodejs_heap_size_used_bytes')).toBe(true);

    const labelValues = after.flatMap((entry) => Object.values(entry.labels));
    for (const secret of [...Object.values(inputs), reference, key]) {
      expect(labelValues.filter((value) => value.includes(secret))).toEqual([]);
    }
    expect(labelValues.filter((value) => value.includes('vrf_'))).toEqual([]);
  });

  it('sends security headers and, with no CORS_ORIGINS, no CORS headers to any origin', async () => {
    const response = await fetch(`${app.baseUrl}/v1/health`, { headers: { origin: 'https://evil.example' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('strict-transport-security')).toContain('max-age=');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${app.baseUrl}/v1/nin`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-service-key' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    // The docs page loads its own script file: no inline script for the policy to allow.
    const docs = await fetch(`${app.baseUrl}/docs`);
    expect(docs.status).toBe(200);
    const directives = (docs.headers.get('content-security-policy') ?? '').split(';').map((directive) => directive.trim());
    expect(directives).toContain("script-src 'self'");
    expect(await docs.text()).not.toMatch(/<script>/);
  });

  it('in production, /docs and /metrics answer 404 in the envelope; CORS_ORIGINS opens the API to the listed origins only', async () => {
    const production = await startTestApp({
      database: app.database,
      env: { NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com', CORS_ORIGINS: 'https://dashboard.example.com' },
    });
    try {
      for (const path of ['/docs', '/docs/json', '/metrics']) {
        const response = await production.request('GET', path);
        expect({ path, status: response.status, body: response.body }).toEqual({
          path,
          status: 404,
          body: { status: false, error: expect.objectContaining({ code: 'not_found' }) },
        });
      }
      const allowed = await fetch(`${production.baseUrl}/v1/nin`, {
        method: 'OPTIONS',
        headers: { origin: 'https://dashboard.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-service-key,content-type' },
      });
      expect(allowed.status).toBeLessThan(300);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://dashboard.example.com');
      expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-service-key');
      const other = await fetch(`${production.baseUrl}/v1/health`, { headers: { origin: 'https://evil.example' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await production.close();
    }
  });

  // Last: a draining app stays draining.
  it('once draining, refuses requests on open connections with 503 in the envelope and closes each connection', async () => {
    startDraining(app.app);
    const response = await app.request('POST', '/v1/nin', { body: { nin: '80417352965' }, headers: { 'x-service-key': key } });
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ status: false, error: { code: 'service_unavailable', message: expect.any(String), details: {} } });
    expect(response.headers.get('connection')).toBe('close');
    expect(response.headers.get('retry-after')).toBe('1');
  });
});
