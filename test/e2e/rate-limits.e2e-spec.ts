import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createConnection } from 'node:net';
import { freePort } from '../../src/database/embedded-postgres.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { describeOnPostgresProjectOnly } from '../support/store-independent.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function expectRateLimited(response: TestResponse, limitPerMinute: number): void {
  expect(response.status).toBe(429);
  expect(response.body).toMatchObject({ status: false, error: { code: 'rate_limited', details: { limitPerMinute } } });
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  expect(response.body.error.details.retryAfterSeconds).toBe(retryAfter);
  expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
}

async function keyOf(app: TestApp): Promise<{ organizationId: string; headers: Record<string, string> }> {
  const organization = await createOrganization(app);
  const { key } = await issueKey(app, organization.id);
  return { organizationId: organization.id, headers: { 'x-service-key': key } };
}

async function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolveReachable) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    socket.setTimeout(1_000, () => socket.destroy());
    socket.once('connect', () => {
      socket.end();
      resolveReachable(true);
    });
    socket.once('error', () => resolveReachable(false));
    socket.once('close', () => resolveReachable(false));
  });
}

// The limiter sits in front of every store: what it decides does not depend on the event store.
const reason = 'the rate limiter does not depend on the event store';

describeOnPostgresProjectOnly('Rate limits per API key (in memory)', reason, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(async () => app?.close());

  it('answers 429 with Retry-After past the limit, writes nothing for the refused check, and counts each key on its own', async () => {
    const caller = await keyOf(app);
    for (let i = 0; i < 3; i++) {
      const response = await app.request('GET', '/v1/wallet', { headers: caller.headers });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBe('3');
      expect(response.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
    }
    const before = await app.eventStore.headPosition();
    expectRateLimited(await app.request('POST', '/v1/nin', { headers: caller.headers, body: { nin: '12345678905' } }), 3);
    expectRateLimited(await app.request('GET', '/v1/verifications', { headers: caller.headers }), 3);
    expect(await app.eventStore.headPosition()).toBe(before);

    const { key: second } = await issueKey(app, caller.organizationId);
    expect((await app.request('POST', '/v1/nin', { headers: { 'x-service-key': second }, body: { nin: '12345678905' } })).status).toBe(201);
    // Health, docs and the admin API are not counted against any key.
    for (let i = 0; i < 5; i++) expect((await app.request('GET', '/v1/health', { headers: caller.headers })).status).toBe(200);
  });

  it("applies the operators' per-organization limit, and null returns to the default", async () => {
    const caller = await keyOf(app);
    const set = await app.admin('PUT', `/admin/v1/organizations/${caller.organizationId}/rate-limit`, { requestsPerMinute: 5 });
    expect(set.status).toBe(200);
    expect(set.body.data.rateLimitPerMinute).toBe(5);
    expect((await app.admin('GET', `/admin/v1/organizations/${caller.organizationId}`)).body.data.rateLimitPerMinute).toBe(5);
    for (let i = 0; i < 5; i++) expect((await app.request('GET', '/v1/wallet', { headers: caller.headers })).status).toBe(200);
    expectRateLimited(await app.request('GET', '/v1/wallet', { headers: caller.headers }), 5);

    for (const requestsPerMinute of [0, 1.5, '60', 2_000_000]) {
      const refused = await app.admin('PUT', `/admin/v1/organizations/${caller.organizationId}/rate-limit`, { requestsPerMinute });
      expect(refused.status).toBe(422);
      expect(refused.body.error.details.fields[0].field).toBe('requestsPerMinute');
    }
    const cleared = await app.admin('PUT', `/admin/v1/organizations/${caller.organizationId}/rate-limit`, { requestsPerMinute: null });
    expect(cleared.body.data.rateLimitPerMinute).toBeNull();
    // Back to the default of 3, in the window already running (6 counted so far).
    expectRateLimited(await app.request('GET', '/v1/wallet', { headers: caller.headers }), 3);
  });
});

describeOnPostgresProjectOnly('Rate limits shared by two instances through PostgreSQL', reason, () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    first = await startTestApp({ env: { RATE_LIMIT_STORE: 'postgres', RATE_LIMIT_PER_MINUTE: '4' } });
    second = await startTestApp({ database: first.database, env: { RATE_LIMIT_STORE: 'postgres', RATE_LIMIT_PER_MINUTE: '4' } });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('spends one budget per key across both instances', async () => {
    const caller = await keyOf(first);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await (i % 2 === 0 ? first : second).request('GET', '/v1/wallet', { headers: caller.headers })).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    expectRateLimited(await first.request('GET', '/v1/wallet', { headers: caller.headers }), 4);
    expectRateLimited(await second.request('GET', '/v1/wallet', { headers: caller.headers }), 4);
  });
});

const redisUp = await reachable(REDIS_URL);
if (!redisUp) process.stderr.write(`\n[rate-limits] Redis at ${REDIS_URL} is unreachable: the shared-Redis test is skipped (set TEST_REDIS_URL)\n`);

describeOnPostgresProjectOnly('Rate limits through Redis', reason, () => {
  (redisUp ? it : it.skip)(`shares one budget across two instances${redisUp ? '' : ` [skipped: no Redis at ${REDIS_URL}]`}`, async () => {
    const first = await startTestApp({ env: { REDIS_URL, RATE_LIMIT_PER_MINUTE: '3' } });
    const second = await startTestApp({ database: first.database, env: { REDIS_URL, RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const caller = await keyOf(first);
      expect((await first.request('GET', '/v1/wallet', { headers: caller.headers })).status).toBe(200);
      expect((await second.request('GET', '/v1/wallet', { headers: caller.headers })).status).toBe(200);
      expect((await first.request('GET', '/v1/wallet', { headers: caller.headers })).status).toBe(200);
      expectRateLimited(await second.request('GET', '/v1/wallet', { headers: caller.headers }), 3);
    } finally {
      await second.close();
      await first.close();
    }
  });

  it('fails open to a per-instance count in memory when Redis is unreachable', async () => {
    const app = await startTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}`, RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const caller = await keyOf(app);
      expect((await app.request('GET', '/v1/wallet', { headers: caller.headers })).status).toBe(200);
      expect((await app.request('POST', '/v1/nin', { headers: caller.headers, body: { nin: '12345678905' } })).status).toBe(201);
      expectRateLimited(await app.request('GET', '/v1/wallet', { headers: caller.headers }), 2);
    } finally {
      await app.close();
    }
  });
});
