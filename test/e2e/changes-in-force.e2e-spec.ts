import { describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../src/database/embedded-postgres.js';
import { KEY_CACHE_TTL_MS } from '../../src/auth/key-cache.js';
import { startTestApp } from '../support/app.js';
import { processTestBed } from '../support/process-test-bed.js';
import { streamEvents } from '../support/event-store.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { DIST, exited, healthy, type Run, runNode, startNodeProcess } from '../support/processes.js';
import { runAdmin } from '../../src/admin/cli/run.js';

// Blessing Ebube Ibrahim, the first ready-made sandbox identity (docs/sandbox.md).
const NIN_CHECK = { path: '/v1/nin', body: { nin: '21440414976' } };
const BVN_CHECK = { path: '/v1/bvn', body: { bvn: '22126025250' } };

let service: ChildProcess | undefined;
let baseUrl = '';
const adminToken = `admin_${randomBytes(24).toString('base64url')}`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const init = body === undefined ? { method, headers } : { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
  const response = await fetch(`${baseUrl}${path}`, init);
  return { status: response.status, body: await response.json() };
}
const admin = (method: string, path: string, body?: unknown) => call(method, path, { authorization: `Bearer ${adminToken}` }, body);
const check = (key: string, what: { path: string; body: unknown }) => call('POST', what.path, { 'x-service-key': key }, what.body);

const cliEnv = () => ({ PATH: process.env.PATH, ...bed.events.env, DATABASE_URL: bed.database.url, DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY, DATA_DIR: bed.dir });
/** The built admin CLI in a process of its own, as an operator runs it. */
function spawnedCli(...args: string[]): Promise<Run> {
  return runNode(DIST.admin, args, { env: cliEnv(), timeoutMs: 30_000 });
}
/**
 * The admin CLI's entry point (src/admin/cli/run.ts) in this process: the same command, settlement
 * and output as the built CLI without a Node start-up each. The service it waits for still runs
 * in a process of its own.
 */
async function cli(...args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(['node', 'admin', ...args], { env: cliEnv(), stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}

/** The wallet stream's length: a check that is refused by the guard adds nothing to it, a charged one a reservation and a debit. */
const walletEvents = async (organizationId: string) => (await streamEvents(bed.events.store, `wallet-${organizationId}.test`)).length;

async function startService(): Promise<void> {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  const started = await startNodeProcess(DIST.main, {
    env: {
      PATH: process.env.PATH,
      ...bed.events.env,
      DATABASE_URL: bed.database.url,
      CONSOLE_MAIL_LOG_ONLY: 'true',
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: bed.dir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_TOKEN: adminToken,
      RUN_PROJECTIONS: 'true',
      SANDBOX_CREDIT_KOBO: '1000000',
      LOG_LEVEL: 'warn',
    },
    ready: healthy(baseUrl),
  });
  service = started.child;
}

/** A new approved organization with nin and bvn active and a test key, the key's authorisation cached by a charged check. */
async function warmedKey(): Promise<{ organizationId: string; keyId: string; key: string }> {
  const created = await admin('POST', '/admin/v1/organizations', { name: 'In Force Ltd', email: 'ops@in-force.example' });
  expect(created.status).toBe(201);
  const organizationId: string = created.body.data.id;
  expect((await admin('POST', `/admin/v1/organizations/${organizationId}/approve`)).status).toBe(200);
  expect((await admin('PUT', `/admin/v1/organizations/${organizationId}/scopes`, { scopes: ['nin', 'bvn', 'phone'] })).status).toBe(200);
  const issued = await admin('POST', `/admin/v1/organizations/${organizationId}/keys`, { environment: 'test' });
  expect(issued.status).toBe(201);
  const key: string = issued.body.data.key;
  const charged = await check(key, BVN_CHECK);
  expect(charged.status).toBe(201);
  expect(charged.body.data.charged).toBe(true);
  return { organizationId, keyId: issued.body.data.id, key };
}

const bed = processTestBed('ledger-in-force-', {
  poolMax: 2,
  beforeTeardown: async () => {
    if (service !== undefined && service.exitCode === null && service.signalCode === null) service.kill('SIGTERM');
    if (service !== undefined) await exited(service);
  },
});

describe("Operators' changes are in force when the command returns", () => {
  it('with no projection worker running, the CLI says the change is recorded and applies once one runs', async () => {
    const created = await spawnedCli('--json', 'org', 'create', '--name', 'Before Start Ltd', '--email', 'ops@before.example');
    expect(created.code).toBe(0);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const scoped = await spawnedCli('org', 'scopes', id, 'nin');
    expect(scoped.code).toBe(0);
    expect(scoped.stdout).toContain('activeScopes');
    expect(scoped.stdout).toMatch(/Recorded \(position \d+\)\. No projection worker is running/);
    expect(scoped.stdout).not.toContain('In force');
  });

  describe('with the service running in another process', () => {
    beforeAll(startService);

    it('org scopes through the CLI: the next check of a scope taken away is refused and not charged', async () => {
      const { organizationId, key } = await warmedKey();
      const before = await walletEvents(organizationId);
      // Through the built CLI, as an operator runs it; the tests below call its entry point in this process.
      const scoped = await spawnedCli('org', 'scopes', organizationId, 'nin', 'phone');
      const refused = await check(key, BVN_CHECK);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('scope_not_active');
      expect(scoped.code).toBe(0);
      expect(scoped.stdout).toMatch(
        /In force on every instance of the service \(read models at position \d+; an instance trusts what it read about a key for at most \d+ ms, waited out here\)/,
      );
      expect(await walletEvents(organizationId)).toBe(before);
      expect((await check(key, NIN_CHECK)).status).toBe(201);
    });

    it('org suspend through the CLI: the next check is refused as suspended and not charged; reinstate lets it through at once', async () => {
      const { organizationId, key } = await warmedKey();
      expect((await check(key, NIN_CHECK)).status).toBe(201);
      const before = await walletEvents(organizationId);
      const suspended = await cli('org', 'suspend', organizationId, '--reason', 'chargeback review');
      const refused = await check(key, NIN_CHECK);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('organization_suspended');
      expect(suspended.code).toBe(0);
      expect(suspended.stdout).toContain('status: suspended');
      expect(suspended.stdout).toContain('In force on every instance');
      expect(await walletEvents(organizationId)).toBe(before);

      const reinstated = await cli('--json', 'org', 'reinstate', organizationId);
      expect(reinstated.code).toBe(0);
      expect(JSON.parse(reinstated.stdout).status).toBe('approved');
      // In JSON mode stdout is the answer alone; the settlement goes to stderr.
      expect(reinstated.stderr).toContain('In force on every instance');
      expect((await check(key, NIN_CHECK)).status).toBe(201);
    });

    it('key revoke through the CLI: the next check with the key is refused as unauthenticated and not charged', async () => {
      const { organizationId, keyId, key } = await warmedKey();
      const before = await walletEvents(organizationId);
      const revoked = await cli('key', 'revoke', keyId);
      const refused = await check(key, NIN_CHECK);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('unauthenticated');
      expect(revoked.code).toBe(0);
      expect(revoked.stdout).toContain('In force on every instance');
      expect(await walletEvents(organizationId)).toBe(before);
    });

    it('org prices and org rate-limit through the CLI: the next check is priced and counted by the new figures', async () => {
      const { organizationId, key } = await warmedKey();
      const priced = await cli('org', 'prices', organizationId, 'nin=4321');
      expect(priced.code).toBe(0);
      expect(priced.stdout).toContain('In force on every instance');
      const charged = await check(key, NIN_CHECK);
      expect(charged.status).toBe(201);
      expect(charged.body.data.priceKobo).toBe(4_321);

      const limited = await cli('org', 'rate-limit', organizationId, '777');
      expect(limited.code).toBe(0);
      expect(limited.stdout).toContain('In force on every instance');
      const counted = await fetch(`${baseUrl}/v1/wallet`, { headers: { 'x-service-key': key } });
      expect(counted.status).toBe(200);
      expect(counted.headers.get('x-ratelimit-limit')).toBe('777');
    });

    it('through the admin API, the instance that took the change refuses the next check at once', async () => {
      const { organizationId, keyId, key } = await warmedKey();
      const before = await walletEvents(organizationId);
      expect((await admin('PUT', `/admin/v1/organizations/${organizationId}/scopes`, { scopes: ['nin'] })).status).toBe(200);
      expect((await check(key, BVN_CHECK)).status).toBe(403);
      expect((await admin('POST', `/admin/v1/organizations/${organizationId}/suspend`, { reason: 'review' })).status).toBe(200);
      expect((await check(key, NIN_CHECK)).body.error.code).toBe('organization_suspended');
      expect((await admin('POST', `/admin/v1/organizations/${organizationId}/reinstate`)).status).toBe(200);
      expect((await admin('DELETE', `/admin/v1/keys/${keyId}`)).status).toBe(200);
      expect((await check(key, NIN_CHECK)).status).toBe(401);
      expect(await walletEvents(organizationId)).toBe(before);
    });
  });

  it(`through the admin API on one instance, another on the same database acts on the change for every request it receives ${KEY_CACHE_TTL_MS} ms after the answer`, async () => {
    const a = await startTestApp();
    const b = await startTestApp({ database: a.database });
    try {
      const { id } = await createOrganization(a, { approved: true, scopes: ['nin', 'bvn'] });
      const headers = { 'x-service-key': (await issueKey(a, id)).key };
      const nin = () => b.request('POST', NIN_CHECK.path, { headers, body: NIN_CHECK.body });
      /** Fills B's cache with what it reads of the key now, makes the change on A, and lets the bound pass. */
      async function onA(method: string, path: string, body?: unknown): Promise<void> {
        expect((await b.request('GET', '/v1/wallet', { headers })).status).toBe(200);
        expect((await a.admin(method, `/admin/v1/organizations/${id}${path}`, body)).status).toBe(200);
        await new Promise((wake) => setTimeout(wake, KEY_CACHE_TTL_MS));
      }

      await onA('PUT', '/prices', { nin: 4_321 });
      expect((await nin()).body.data.priceKobo).toBe(4_321);
      await onA('PUT', '/rate-limit', { requestsPerMinute: 777 });
      expect((await b.request('GET', '/v1/wallet', { headers })).headers.get('x-ratelimit-limit')).toBe('777');
      await onA('PUT', '/scopes', { scopes: ['nin'] });
      expect((await b.request('POST', BVN_CHECK.path, { headers, body: BVN_CHECK.body })).body.error.code).toBe('scope_not_active');
      await onA('POST', '/suspend', { reason: 'review' });
      expect((await nin()).body.error.code).toBe('organization_suspended');
      await onA('POST', '/reinstate');
      expect((await nin()).status).toBe(201);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('through the admin API with no projection worker, a change the read models do not apply in time answers 503 change_not_in_force, recorded', async () => {
    // A short wait keeps the test short; the default is 10 s.
    const app = await startTestApp({ env: { RUN_PROJECTIONS: 'false', OPERATOR_CHANGE_WAIT_MS: '500' } });
    try {
      const created = await app.admin('POST', '/admin/v1/organizations', { name: 'Stalled Ltd', email: 'ops@stalled.example' });
      expect(created.status).toBe(201);
      const organizationId: string = created.body.data.id;
      // A new key takes nothing away: it is answered (shown this once) even though it works only once applied.
      const issued = await app.admin('POST', `/admin/v1/organizations/${organizationId}/keys`, { environment: 'test' });
      expect(issued.status).toBe(201);
      expect(issued.body.data.key).toMatch(/^service_test_/);
      const suspended = await app.admin('POST', `/admin/v1/organizations/${organizationId}/suspend`, { reason: 'review' });
      expect(suspended.status).toBe(503);
      expect(suspended.body.error).toMatchObject({ code: 'change_not_in_force', details: { position: expect.stringMatching(/^\d+$/) } });
      const types = (await streamEvents(app.eventStore, `organization-${organizationId}`)).map((event) => event.type);
      expect(types).toContain('OrganizationSuspended');
    } finally {
      await app.close();
    }
  });
});
