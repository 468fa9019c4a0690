import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdmin } from '../../src/admin/cli/run.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { PaymentRailFailure } from '../../src/payments/payment-rail.port.js';
import { PAYSTACK_KEY_STREAM } from '../../src/payments/paystack-key.js';
import { PaystackRail } from '../../src/payments/paystack.rail.js';
import { TopUps } from '../../src/payments/topups.service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { allEvents, streamEvents, testEventStoreEnv } from '../support/event-store.js';
import { createOrganization } from '../support/fixtures.js';
import { PaystackStub } from '../support/paystack-stub.js';
import { postPaystackWebhook } from '../support/topups.js';

const FIRST_KEY = `sk_test_${randomBytes(20).toString('hex')}`;
const SECOND_KEY = `sk_live_${randomBytes(20).toString('hex')}`;
const THIRD_KEY = `sk_live_${randomBytes(20).toString('hex')}`;
const AUDITOR_TOKEN = `auditor_${randomBytes(20).toString('hex')}`;
const CREDENTIALS_KEY = randomBytes(32).toString('base64');
const context = { correlationId: 'paystack-key-e2e', actor: SYSTEM_ACTOR };

/**
 * The deployment's Paystack secret key set by an operator through the admin API: sealed in the
 * log (never in clear), in force on every instance, rotated; the service starts with none.
 */
describe('The Paystack key', () => {
  let paystack: PaystackStub;
  let first: TestApp;
  let second: TestApp;
  let organizationId: string;

  beforeAll(async () => {
    paystack = await PaystackStub.start(FIRST_KEY);
    // Both instances seal and open with one credentials key, as a deployment's instances do.
    const env = {
      PAYSTACK_BASE_URL: paystack.baseUrl,
      PAYSTACK_TIMEOUT_MS: '2000',
      TOPUP_RECOVERY_INTERVAL_MS: '3600000',
      PROVIDER_CREDENTIALS_KEY: CREDENTIALS_KEY,
      AUDITOR_TOKEN,
    };
    first = await startTestApp({ env });
    second = await startTestApp({ env, database: first.database });
    organizationId = (await createOrganization(first, { approved: true })).id;
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await paystack?.close();
  });

  const startLive = (app: TestApp) =>
    app.app.get(TopUps).initiate({ organizationId, environment: 'live' }, { amountKobo: 250_000, channel: 'card', email: 'finance@example.test' }, context);
  const webhook = postPaystackWebhook;
  const fundings = async () =>
    (await streamEvents(first.eventStore, `wallet-${organizationId}.live`)).filter((event) => event.type === 'WalletFunded').map((event) => event.data.amountKobo);

  it('with none set, live top-ups are off and Paystack webhooks find no rail', async () => {
    expect((await first.admin('GET', '/admin/v1/payment_rails/paystack')).body.data).toEqual({ configured: false, source: null, mode: null, last4: null, setAt: null });
    await expect(startLive(first)).rejects.toMatchObject({ code: 'top_up_unavailable' });
    expect((await webhook(second, { rawBody: '{"event":"charge.success"}', signature: paystack.sign('{"event":"charge.success"}') })).status).toBe(404);
  });

  it('refuses what is not a Paystack secret key without echoing it, and the auditor token', async () => {
    const refused = await first.admin('PUT', '/admin/v1/payment_rails/paystack', { secretKey: 'pk_test_notasecretkey0123456789', extra: true });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.fields.map((field: { field: string }) => field.field).sort()).toEqual(['extra', 'secretKey']);
    expect(JSON.stringify(refused.body)).not.toContain('notasecretkey');
    const auditor = await first.request('PUT', '/admin/v1/payment_rails/paystack', { body: { secretKey: FIRST_KEY }, headers: { authorization: `Bearer ${AUDITOR_TOKEN}` } });
    expect(auditor.status).toBe(403);
    expect((await first.request('GET', '/admin/v1/payment_rails/paystack', { headers: { authorization: `Bearer ${AUDITOR_TOKEN}` } })).body.data.configured).toBe(false);
  });

  it('is sealed in the log, shown by its last four characters only, and in force on every instance', async () => {
    const set = await first.admin('PUT', '/admin/v1/payment_rails/paystack', { secretKey: FIRST_KEY });
    expect(set.status).toBe(200);
    expect(set.body.data).toEqual({ configured: true, source: 'sealed', mode: 'test', last4: FIRST_KEY.slice(-4), setAt: expect.any(String) });
    const recorded = await streamEvents(first.eventStore, PAYSTACK_KEY_STREAM);
    expect(recorded.map((event) => event.type)).toEqual(['PaystackKeySet']);
    expect(recorded[0].data.sealedKey).toMatch(/^v1\./);
    // Not in clear, nor any part of it beyond the last four characters, anywhere in the log.
    expect(JSON.stringify((await allEvents(first.eventStore)).map((event) => [event.data, event.metadata]))).not.toContain(FIRST_KEY.slice(8, -4));

    // The second instance read "none" a moment ago; a webhook signed under the new key is checked against the log at once.
    const { reference } = await startLive(first);
    expect(paystack.requests.find((request) => request.path === '/transaction/initialize' && request.body.includes(reference))?.authorization).toBe(`Bearer ${FIRST_KEY}`);
    paystack.pay(reference);
    const delivered = await webhook(second, paystack.webhook(reference));
    expect(delivered.status).toBe(200);
    expect(await fundings()).toEqual([250_000]);
  });

  it('is rotated through the API and the CLI: the new key signs and calls at once, the old one is refused', async () => {
    paystack.secretKey = SECOND_KEY;
    const rotated = await first.admin('PUT', '/admin/v1/payment_rails/paystack', { secretKey: SECOND_KEY });
    expect(rotated.body.data).toMatchObject({ source: 'sealed', mode: 'live', last4: SECOND_KEY.slice(-4) });
    const { reference } = await startLive(first);
    paystack.pay(reference);
    const genuine = paystack.webhook(reference);
    paystack.secretKey = FIRST_KEY;
    const underOldKey = paystack.webhook(reference);
    paystack.secretKey = SECOND_KEY;
    expect((await webhook(first, underOldKey)).status).toBe(401);
    expect((await webhook(second, genuine)).status).toBe(200);
    expect(await fundings()).toEqual([250_000, 250_000]);
    // The CLI sets the next key from a file (never from its arguments); a restarted instance opens it from the log.
    const directory = await mkdtemp(join(tmpdir(), 'paystack-key-'));
    await writeFile(join(directory, 'key'), `${THIRD_KEY}\n`, { mode: 0o600 });
    const env = {
      PATH: process.env.PATH,
      ...(await testEventStoreEnv(first.database)),
      DATABASE_URL: first.database.url,
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: join(directory, '.data'),
      PROVIDER_CREDENTIALS_KEY: CREDENTIALS_KEY,
      LOG_LEVEL: 'silent',
    };
    let stdout = '';
    const cli = (args: string[]) =>
      runAdmin(['node', 'admin', '--json', 'wallet', 'paystack-key', ...args], { env, stdout: (text) => void (stdout += text), stderr: () => undefined });
    expect(await cli(['--key', THIRD_KEY])).toBe(2);
    expect(await cli(['--key', `@${join(directory, 'key')}`])).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ configured: true, source: 'sealed', mode: 'live', last4: THIRD_KEY.slice(-4) });
    expect(stdout).not.toContain(THIRD_KEY.slice(8, -4));
    paystack.secretKey = THIRD_KEY;
    const third = await startTestApp({ env: { PAYSTACK_BASE_URL: paystack.baseUrl, PROVIDER_CREDENTIALS_KEY: CREDENTIALS_KEY }, database: first.database });
    try {
      expect((await third.admin('GET', '/admin/v1/payment_rails/paystack')).body.data).toMatchObject({ configured: true, last4: THIRD_KEY.slice(-4) });
      const { reference: next } = await startLive(third);
      paystack.pay(next);
      expect((await webhook(third, paystack.webhook(next))).status).toBe(200);
      expect((await webhook(third, genuine)).status).toBe(401);
      expect(await fundings()).toEqual([250_000, 250_000, 250_000]);
    } finally {
      await third.close();
    }
  });
});

/** The adapter's own resilience against the stub: each call under a timeout, a breaker that only the rail's health trips. */
describe('The Paystack adapter', () => {
  let paystack: PaystackStub;
  let key = FIRST_KEY;
  let rail: PaystackRail;
  const reference = 'top_01JD3Q9ZK8W6V2C4X7N5B0M1TR';

  beforeAll(async () => {
    paystack = await PaystackStub.start(FIRST_KEY);
    rail = new PaystackRail({ baseUrl: paystack.baseUrl, keys: { current: async () => key }, timeoutMs: 300, breakerFailures: 3, breakerHalfOpenMs: 500 });
  });
  afterAll(async () => {
    await paystack?.close();
  });

  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => 'answered',
      (error: unknown) => (error instanceof PaymentRailFailure ? error.reasonCode : String(error)),
    );

  it('gives up on an unanswered call at its timeout', async () => {
    paystack.hang(1);
    const started = Date.now();
    expect(await failure(rail.verify(reference))).toBe('payment_timeout');
    expect(Date.now() - started).toBeLessThan(2_000);
    // Answered again: unknown reference is null, not a failure.
    expect(await rail.verify(reference)).toBeNull();
  });

  it('opens its breaker after consecutive 5xx answers, sends nothing while open, and closes after a successful trial', async () => {
    paystack.down(3);
    for (let attempt = 0; attempt < 3; attempt++) expect(await failure(rail.verify(reference))).toBe('payment_unavailable');
    const sent = paystack.requests.length;
    expect(await failure(rail.verify(reference))).toBe('payment_circuit_open');
    expect(await failure(rail.initialize({ reference, amountKobo: 10_000, email: 'finance@example.test', callbackUrl: 'https://ledger.example/payments/return' }))).toBe(
      'payment_circuit_open',
    );
    expect(paystack.requests.length).toBe(sent);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await rail.verify(reference)).toBeNull();
    expect(await rail.verify(reference)).toBeNull();
    expect(paystack.requests.length).toBe(sent + 2);
  });

  it('is not opened by answers about the request (a wrong key), which fail alone', async () => {
    key = `sk_test_${'0'.repeat(40)}`;
    for (let attempt = 0; attempt < 5; attempt++) expect(await failure(rail.verify(reference))).toBe('payment_unauthorized');
    key = FIRST_KEY;
    expect(await rail.verify(reference)).toBeNull();
  });
});
