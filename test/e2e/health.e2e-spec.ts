import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';

describe('Health', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { SERVICE_NAME: 'ledger-under-test' } });
  });
  afterAll(async () => app?.close());

  it('GET /v1/health answers exactly as the spec, with no key', async () => {
    const response = await app.request('GET', '/v1/health');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: true, data: { service: 'ledger-under-test', status: 'ok' } });
    expect(response.headers.get('x-request-id')).toMatch(/\S{8,}/);
  });

  it('GET /health/ready checks PostgreSQL and the event store', async () => {
    const response = await app.request('GET', '/health/ready');
    expect(response.status).toBe(200);
    expect(response.body.data.checks).toMatchObject({ postgres: 'ok', eventStore: 'ok' });
  });

  it('echoes a caller X-Request-Id', async () => {
    const response = await app.request('GET', '/v1/health', { headers: { 'x-request-id': 'caller-req-12345' } });
    expect(response.headers.get('x-request-id')).toBe('caller-req-12345');
  });

  it('answers unknown routes and malformed JSON in the error envelope', async () => {
    const unknown = await app.request('GET', '/v1/nothing-here/at/all');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ status: false, error: { code: 'not_found' } });
  });
});

describe('Readiness when the database is gone', () => {
  it('answers 503 when PostgreSQL is unreachable', async () => {
    const app = await startTestApp();
    try {
      // Terminate every connection of the app's database and forbid new ones.
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`alter database ${app.database.name} with allow_connections false`);
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [app.database.name]);
      const response = await app.request('GET', '/health/ready');
      expect(response.status).toBe(503);
      expect(response.body).toMatchObject({ status: false, error: { code: 'service_unavailable' } });
      await admin.query(`alter database ${app.database.name} with allow_connections true`);
      await admin.end();
      // And it recovers on its own once the database is back.
      let recovered = 0;
      for (let i = 0; i < 50 && recovered !== 200; i++) {
        recovered = (await app.request('GET', '/health/ready')).status;
        if (recovered !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(recovered).toBe(200);
    } finally {
      await app.close();
    }
  });
});
