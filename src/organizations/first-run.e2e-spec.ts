import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { hashApiKey } from '../auth/api-key.js';
import { READY_MADE_PEOPLE, sandboxPerson } from '../scopes/sandbox-world.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { streamEvents } from '../../test/support/event-store.js';

describe('first run', () => {
  let written: string[];
  const originalWrite = process.stdout.write.bind(process.stdout);
  let app: TestApp | undefined;

  const originalIsTTY = Object.getOwnPropertyDescriptor(process.stdout, 'isTTY');
  /** The banner is for a person at a terminal; off one, a log line without the key (test/e2e/start-up-output.e2e-spec.ts). */
  const onTerminal = () => Object.defineProperty(process.stdout, 'isTTY', { value: true, configurable: true });

  beforeEach(() => {
    written = [];
    process.stdout.write = (chunk: unknown, ...rest: unknown[]) => {
      written.push(String(chunk));
      return (originalWrite as (...args: unknown[]) => boolean)(chunk, ...rest);
    };
  });
  afterEach(async () => {
    process.stdout.write = originalWrite;
    if (originalIsTTY === undefined) delete (process.stdout as { isTTY?: boolean }).isTTY;
    else Object.defineProperty(process.stdout, 'isTTY', originalIsTTY);
    await app?.close();
    app = undefined;
  });

  const READY_MADE_NIN = sandboxPerson(READY_MADE_PEOPLE[0]).nin;

  it('on the embedded default with an empty log: a demo organization and a test key printed once on the terminal with a curl that answers 201', async () => {
    onTerminal();
    app = await startTestApp({ embedded: true });
    for (let waitedMs = 0; !written.join('').includes('curl') && waitedMs < 10_000; waitedMs += 20) await new Promise((resolveWait) => setTimeout(resolveWait, 20));
    const output = written.join('');
    const key = /X-Service-Key: (service_test_[A-Za-z0-9_-]{43})'/.exec(output)?.[1];
    expect(key).toBeDefined();
    const port = new URL(app.baseUrl).port;
    expect(output).toContain(`curl -s -X POST http://localhost:${port}/v1/nin -H 'X-Service-Key: ${key}' -H 'Content-Type: application/json' -d '{"nin":"${READY_MADE_NIN}"}'`);
    expect(output.split(key as string)).toHaveLength(3); // the key line and the curl, nothing else

    const listed = await app.admin('GET', '/admin/v1/organizations');
    expect(listed.body.data).toEqual([
      expect.objectContaining({ name: 'Demo organization', status: 'approved', activeScopes: expect.arrayContaining(['nin', 'bvn', 'face_match']) }),
    ]);
    expect(listed.body.data[0].activeScopes).toHaveLength(10);
    const pool = new pg.Pool({ connectionString: app.database.url, max: 1 });
    try {
      const organizationId = listed.body.data[0].id as string;
      const wallet = await streamEvents(app.eventStore, `wallet-${organizationId}.test`);
      expect(wallet).toEqual([expect.objectContaining({ type: 'WalletFunded', data: expect.objectContaining({ fundingReference: 'sandbox-credit' }) })]);
      const stored = await pool.query('select environment, revoked_at from api_keys where key_hash = $1', [hashApiKey(key as string)]);
      expect(stored.rows).toEqual([{ environment: 'test', revoked_at: null }]);
    } finally {
      await pool.end();
    }

    const run = await app.request('POST', '/v1/nin', { headers: { 'x-service-key': key as string }, body: { nin: READY_MADE_NIN } });
    expect(run.status).toBe(201);
    expect(run.body.data).toMatchObject({
      scope: 'nin',
      status: 'found',
      charged: true,
      result: { nin: READY_MADE_NIN, firstName: sandboxPerson(READY_MADE_PEOPLE[0]).firstName },
    });
  });

  it('does nothing outside the embedded default, and nothing when the log is not empty', async () => {
    app = await startTestApp({ embedded: false });
    expect(written.join('')).not.toContain('service_test_');
    expect((await app.admin('GET', '/admin/v1/organizations')).body.data).toEqual([]);
    const created = await app.admin('POST', '/admin/v1/organizations', { name: 'Real Co', email: 'ops@real.test' });
    expect(created.status).toBe(201);
    const database = app.database;
    const second = await startTestApp({ embedded: true, database });
    try {
      expect(written.join('')).not.toContain('service_test_');
      expect((await second.admin('GET', '/admin/v1/organizations')).body.data.map((org: { name: string }) => org.name)).toEqual(['Real Co']);
    } finally {
      await second.close();
    }
  });
});
