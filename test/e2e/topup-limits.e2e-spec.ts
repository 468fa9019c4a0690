import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { TopUps } from '../../src/payments/topups.service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdmin } from '../../src/admin/cli/run.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { streamEvents, testEventStoreEnv } from '../support/event-store.js';
import { createOrganization } from '../support/fixtures.js';

const context = { correlationId: 'topup-limits-e2e', actor: SYSTEM_ACTOR };
const DAILY_LIMIT_KOBO = 1_000_000;

/** The per-top-up and per-day limits on the sandbox rail (test wallets): the deployment's, then an organization's own. */
describe('Top-up limits', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { TOPUP_DAILY_LIMIT_KOBO: String(DAILY_LIMIT_KOBO), TOPUP_RECOVERY_INTERVAL_MS: '3600000' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  const start = (organizationId: string, amountKobo: number) =>
    app.app.get(TopUps).initiate({ organizationId, environment: 'test' }, { amountKobo, channel: 'card', email: 'finance@example.test' }, context);
  const initiated = async (references: string[]) =>
    (await Promise.all(references.map((reference) => streamEvents(app.eventStore, `topUp-${reference}`)))).flat().filter((event) => event.type === 'TopUpInitiated');

  it('holds the daily limit when top-ups of one organization start at the same time', async () => {
    const { id } = await createOrganization(app, { approved: true });
    const outcomes = await Promise.allSettled(Array.from({ length: 6 }, () => start(id, 300_000)));
    const started = outcomes.filter((outcome) => outcome.status === 'fulfilled').map((outcome) => outcome.value.reference);
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(started).toHaveLength(3);
    expect(refused.map((outcome) => String(outcome.reason))).toEqual(Array.from({ length: 3 }, () => expect.stringMatching(/amountKobo|invalid/i)));
    expect((await initiated(started)).reduce((sum, event) => sum + (event.data.amountKobo as number), 0)).toBe(900_000);
    // What is left today (100,000 kobo) still starts; a failed top-up gives its amount back.
    const last = await start(id, 100_000);
    await expect(start(id, 1)).rejects.toThrow(/amountKobo|invalid/i);
    await fetch(`${app.baseUrl}/payments/sandbox/checkout/${last.reference}/decline`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    await fetch(`${app.baseUrl}/payments/return?reference=${last.reference}`, { redirect: 'manual' });
    expect((await app.app.get(TopUps).state(last.reference)).status).toBe('failed');
    await expect(start(id, 100_000)).resolves.toEqual(expect.objectContaining({ reference: expect.any(String) }));
  });

  it("keeps to an organization's own limits, set by an operator through the admin API and the CLI as events, the deployment's staying the default", async () => {
    const { id } = await createOrganization(app, { approved: true });
    const { id: other } = await createOrganization(app, { approved: true });
    const path = `/admin/v1/organizations/${id}/topup_limits`;
    const defaults = await app.admin('GET', path);
    expect(defaults.status).toBe(200);
    expect(defaults.body.data).toEqual({
      organizationId: id,
      minTopUpKobo: 10_000,
      maxTopUpKobo: 500_000_000,
      dailyLimitKobo: DAILY_LIMIT_KOBO,
      own: { maxTopUpKobo: null, dailyLimitKobo: null },
    });

    const set = await app.admin('PUT', path, { maxTopUpKobo: 50_000, dailyLimitKobo: 2_000_000 });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({
      organizationId: id,
      minTopUpKobo: 10_000,
      maxTopUpKobo: 50_000,
      dailyLimitKobo: 2_000_000,
      own: { maxTopUpKobo: 50_000, dailyLimitKobo: 2_000_000 },
    });
    expect((await streamEvents(app.eventStore, `topUpLimits-${id}`)).map((event) => [event.type, event.data, (event.metadata.actor as { type?: string } | null)?.type])).toEqual([
      ['TopUpLimitsSet', { schemaVersion: 1, organizationId: id, maxTopUpKobo: 50_000, dailyLimitKobo: 2_000_000 }, 'operator'],
    ]);
    // Over its own limit per top-up: refused, nothing started; another organization keeps the deployment's.
    await expect(start(id, 50_001)).rejects.toThrow(/amountKobo|invalid/i);
    await expect(start(other, 300_000)).resolves.toEqual(expect.objectContaining({ reference: expect.any(String) }));
    await expect(start(id, 50_000)).resolves.toEqual(expect.objectContaining({ reference: expect.any(String) }));

    const invalid = await app.admin('PUT', path, { maxTopUpKobo: 'lots', dailyLimitKobo: 5 });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.fields.map((field: { field: string }) => field.field).sort()).toEqual(['dailyLimitKobo', 'maxTopUpKobo']);
    expect((await app.admin('PUT', `/admin/v1/organizations/org_01JD3Q9ZK8W6V2C4X7N5B0M1TR/topup_limits`, { maxTopUpKobo: null, dailyLimitKobo: null })).status).toBe(404);

    // The CLI: back to the deployment's limit per top-up, the daily one kept.
    const env = {
      PATH: process.env.PATH,
      ...(await testEventStoreEnv(app.database)),
      DATABASE_URL: app.database.url,
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: join(tmpdir(), `topup-limits-cli-${process.pid}`, '.data'),
      LOG_LEVEL: 'silent',
    };
    let stdout = '';
    const code = await runAdmin(['node', 'admin', '--json', 'wallet', 'limits', id, '--max', 'default'], { env, stdout: (text) => void (stdout += text), stderr: () => undefined });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      organizationId: id,
      minTopUpKobo: 10_000,
      maxTopUpKobo: 500_000_000,
      dailyLimitKobo: 2_000_000,
      own: { maxTopUpKobo: null, dailyLimitKobo: 2_000_000 },
    });
    expect((await app.admin('GET', path)).body.data.own).toEqual({ maxTopUpKobo: null, dailyLimitKobo: 2_000_000 });
    await expect(start(id, 300_000)).resolves.toEqual(expect.objectContaining({ reference: expect.any(String) }));
  });
});
