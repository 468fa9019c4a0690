import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PROJECTIONS } from '../../projections/index.js';
import { waitUntil } from '../../projections/runner/counting.projection.testing.js';
import { startTestApp, type TestApp } from '../support/app.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app.close();
});

describe('GET /admin/v1/projections', () => {
  it('needs the admin token', async () => {
    const response = await app.request('GET', '/admin/v1/projections');
    expect(response.status).toBe(401);
  });

  it('lists every projection with its position, head, lag, rate and the in-process worker holding it', async () => {
    await waitUntil(
      async () => {
        const response = await app.admin('GET', '/admin/v1/projections');
        return response.body.data.every((entry: { worker: unknown }) => entry.worker !== null);
      },
      10_000,
      'the in-process workers to take their locks',
    );
    const response = await app.admin('GET', '/admin/v1/projections');
    expect(response.status).toBe(200);
    expect(response.body.data.map((entry: { name: string }) => entry.name)).toEqual(PROJECTIONS.map((projection) => projection.name));
    for (const entry of response.body.data) {
      expect(entry).toMatchObject({ state: expect.stringMatching(/^(running|catching_up)$/), worker: { pid: process.pid }, error: null, rebuild: null });
      expect(typeof entry.position).toBe('string');
      expect(typeof entry.headPosition).toBe('string');
      expect(typeof entry.lagSeconds).toBe('number');
    }
  });
});
