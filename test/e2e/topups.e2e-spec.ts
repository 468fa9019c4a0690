import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { reconcilePayments } from '../../src/payments/payment-reconciliation.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { testEventStoreEnv } from '../support/event-store.js';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { TopUpRecoverySweep } from '../../src/payments/topup-recovery.js';
import { TopUps } from '../../src/payments/topups.service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { streamEvents } from '../support/event-store.js';

const run = promisify(execFile);
import { createOrganization, issueKey } from '../support/fixtures.js';
import { walletStatement } from '../../src/audit/wallet-statement.js';
import { PaystackStub } from '../support/paystack-stub.js';
import pg from 'pg';
import { topUpsProjection } from '../../projections/topups/topups.projection.js';
import { rebuildProjection } from '../../projections/rebuild/rebuild.js';
import { ProjectionWaiter } from '../../src/read-models/projection-waiter.js';
import { PAYMENT_ACCOUNT_CATEGORY, TOPUP_CATEGORY } from '../../src/payments/topup.events.js';
import { TOPUPS_PROJECTION } from '../../src/payments/topup.read-model.js';
import { allEvents } from '../support/event-store.js';

const SECRET = 'sk_test_0123456789abcdef0123456789abcdef';
const context = { correlationId: 'topups-e2e', actor: SYSTEM_ACTOR };

/**
 * Top-ups end to end: the service against a Paystack stub that speaks its API and signs its
 * webhooks, on two instances over one database; and the sandbox rail's checkout, with no outside
 * network. Every case counts the wallet's fundings in the log: a top-up credits once or not at all.
 */
describe('Wallet top-ups', () => {
  let paystack: PaystackStub;
  let first: TestApp;
  let second: TestApp;
  let organizationId: string;

  beforeAll(async () => {
    paystack = await PaystackStub.start(SECRET);
    const env = { PAYSTACK_SECRET_KEY: SECRET, PAYSTACK_BASE_URL: paystack.baseUrl, PAYSTACK_TIMEOUT_MS: '2000', TOPUP_RECOVERY_INTERVAL_MS: '3600000' };
    first = await startTestApp({ env });
    second = await startTestApp({ env, database: first.database });
    organizationId = (await createOrganization(first, { approved: true })).id;
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await paystack?.close();
  });

  const topUps = (app: TestApp) => app.app.get(TopUps);
  async function start(environment: 'test' | 'live', amountKobo: number): Promise<{ reference: string; authorizationUrl: string }> {
    return topUps(first).initiate({ organizationId, environment }, { amountKobo, channel: 'card', email: 'finance@example.test' }, context);
  }
  async function fundings(reference: string, environment: 'test' | 'live' = 'live'): Promise<number[]> {
    const events = await streamEvents(first.eventStore, `wallet-${organizationId}.${environment}`);
    return events
      .filter((event) => event.type === 'WalletFunded' && String(event.data.fundingReference).startsWith(`topup:${reference}`))
      .map((event) => event.data.amountKobo as number);
  }
  const post = (app: TestApp, webhook: { rawBody: string; signature: string }) =>
    app.request('POST', '/payments/paystack/webhook', { rawBody: webhook.rawBody, headers: { 'content-type': 'application/json', 'x-paystack-signature': webhook.signature } });
  const status = async (reference: string) => (await topUps(first).state(reference)).status;

  it('initializes the transaction on Paystack with the amount in kobo, our reference and the return address', async () => {
    const { reference, authorizationUrl } = await start('live', 500_000);
    expect(authorizationUrl).toBe(`https://checkout.paystack.com/${reference}`);
    const initialize = paystack.requests.find((request) => request.path === '/transaction/initialize' && request.body.includes(reference));
    expect(initialize?.authorization).toBe(`Bearer ${SECRET}`);
    expect(JSON.parse(initialize?.body ?? '{}')).toEqual({
      email: 'finance@example.test',
      amount: 500_000,
      currency: 'NGN',
      reference,
      callback_url: `${first.baseUrl}/payments/return`,
    });
  });

  it('refuses a forged signature, a body altered after signing and an unknown reference, crediting nothing', async () => {
    const { reference } = await start('live', 200_000);
    paystack.pay(reference);
    const genuine = paystack.webhook(reference);
    const forged = await post(first, { rawBody: genuine.rawBody, signature: paystack.sign(genuine.rawBody).replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) });
    expect(forged.status).toBe(401);
    expect(forged.body.error.code).toBe('invalid_signature');
    const altered = await post(first, { rawBody: genuine.rawBody.replace('"amount":200000', '"amount":900000'), signature: genuine.signature });
    expect(altered.status).toBe(401);
    const unsigned = await first.request('POST', '/payments/paystack/webhook', { rawBody: genuine.rawBody, headers: { 'content-type': 'application/json' } });
    expect(unsigned.status).toBe(401);
    const unknown = await post(first, paystack.webhook('top_01JD3Q9ZK8W6V2C4X7N5B0M1TR', { amount: 200_000 }));
    expect(unknown.status).toBe(404);
    expect(await fundings(reference)).toEqual([]);
    expect(await status(reference)).toBe('initiated');
    expect(paystack.requests.filter((request) => request.path === `/transaction/verify/${reference}`)).toHaveLength(0);
  });

  it('credits once when the webhook is replayed 5 times at once on two instances', async () => {
    const { reference } = await start('live', 300_000);
    paystack.pay(reference);
    const webhook = paystack.webhook(reference);
    const answers = await Promise.all([first, second, first, second, first].map((app) => post(app, webhook)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await fundings(reference)).toEqual([300_000]);
    expect(await status(reference)).toBe('credited');
    const paid = (await streamEvents(first.eventStore, `topUp-${reference}`)).find((event) => event.type === 'TopUpPaid');
    expect(paid?.data).toEqual(expect.objectContaining({ amountKobo: 300_000, feesKobo: 4_500, currency: 'NGN' }));
  });

  it("credits once whether the payer's return comes before, after or without the webhook", async () => {
    const back = (app: TestApp, reference: string) => fetch(`${app.baseUrl}/payments/return?trxref=${reference}&reference=${reference}`, { redirect: 'manual' });
    // Before: the return finds it unpaid, then the payment, the webhook and a late return.
    const before = await start('live', 110_000);
    expect((await back(first, before.reference)).status).toBe(303);
    expect(await fundings(before.reference)).toEqual([]);
    paystack.pay(before.reference);
    await Promise.all([post(second, paystack.webhook(before.reference)), back(first, before.reference)]);
    expect((await back(second, before.reference)).headers.get('location')).toBe(`/console/wallet?topup=${before.reference}`);
    // After the webhook.
    const after = await start('live', 120_000);
    paystack.pay(after.reference);
    expect((await post(first, paystack.webhook(after.reference))).body.data.outcome).toBe('credited');
    await back(second, after.reference);
    // Without any webhook.
    const without = await start('live', 130_000);
    paystack.pay(without.reference);
    await back(second, without.reference);
    expect([await fundings(before.reference), await fundings(after.reference), await fundings(without.reference)]).toEqual([[110_000], [120_000], [130_000]]);
  });

  it('credits nothing and flags the top-up when the webhook names another amount than the verified one', async () => {
    const { reference } = await start('live', 250_000);
    paystack.pay(reference);
    const answer = await post(first, paystack.webhook(reference, { amount: 2_500_000 }));
    expect(answer.status).toBe(200);
    expect(answer.body.data.outcome).toBe('flagged');
    expect(await status(reference)).toBe('flagged');
    // The genuine webhook after it changes nothing: an operator looks first.
    await post(first, paystack.webhook(reference));
    expect(await fundings(reference)).toEqual([]);
  });

  it('answers 503 while Paystack is down during verify, and credits once later (its retry, and the recovery sweep)', async () => {
    const { reference } = await start('live', 140_000);
    paystack.pay(reference);
    paystack.down(2);
    const webhook = paystack.webhook(reference);
    expect((await post(first, webhook)).status).toBe(503);
    expect(await fundings(reference)).toEqual([]);
    expect(await status(reference)).toBe('initiated');
    // Paystack's next delivery meets a verify still failing, then the sweep and the next delivery race.
    expect((await post(second, webhook)).status).toBe(503);
    const sweep = first.app.get(TopUpRecoverySweep);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [report] = await Promise.all([sweep.runOnce(new Date(Date.now() + 60_000)), post(second, webhook)]);
    expect(report.failed).toBe(0);
    expect(await fundings(reference)).toEqual([140_000]);
    expect(await status(reference)).toBe('credited');
  });

  it('pays on the sandbox checkout with no outside network: the page, a click, the signed webhook, the return, credited once', async () => {
    const { reference, authorizationUrl } = await start('test', 75_000);
    expect(authorizationUrl).toBe(`/payments/sandbox/checkout/${reference}`);
    const page = await fetch(`${first.baseUrl}${authorizationUrl}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('₦750.00');
    const click = await fetch(`${first.baseUrl}${authorizationUrl}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(click.status).toBe(303);
    expect(click.headers.get('location')).toBe(`${first.baseUrl}/payments/return?trxref=${reference}&reference=${reference}`);
    // The webhook credited it before the payer is back.
    expect(await fundings(reference, 'test')).toEqual([75_000]);
    const returned = await fetch(click.headers.get('location') as string, { redirect: 'manual' });
    expect(returned.headers.get('location')).toBe(`/console/wallet?topup=${reference}`);
    // A second click changes nothing.
    await fetch(`${second.baseUrl}${authorizationUrl}/pay`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '', redirect: 'manual' });
    expect(await fundings(reference, 'test')).toEqual([75_000]);
    const paid = (await streamEvents(first.eventStore, `topUp-${reference}`)).find((event) => event.type === 'TopUpPaid');
    expect(paid?.data).toEqual(expect.objectContaining({ amountKobo: 75_000, feesKobo: 1_125 }));
  });

  it('records a declined sandbox payment as failed and credits nothing', async () => {
    const { reference, authorizationUrl } = await start('test', 60_000);
    const click = await fetch(`${first.baseUrl}${authorizationUrl}/decline`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    await fetch(click.headers.get('location') as string, { redirect: 'manual' });
    expect(await status(reference)).toBe('failed');
    expect(await fundings(reference, 'test')).toEqual([]);
  });

  it('assigns a dedicated account once, and a transfer to it (replayed 3 times on two instances) credits once; an unknown customer credits nothing', async () => {
    const owner = { organizationId, environment: 'live' as const };
    expect(await topUps(first).dedicatedAccount(owner)).toBeNull();
    const [account, again] = [
      await topUps(first).assignDedicatedAccount(owner, 'finance@example.test', context),
      await topUps(second).assignDedicatedAccount(owner, 'finance@example.test', context),
    ];
    expect(account).toEqual({
      organizationId,
      environment: 'live',
      status: 'assigned',
      accountNumber: expect.stringMatching(/^99\d{8}$/),
      accountName: 'KORAPAY / IVL',
      bankName: 'Wema Bank',
    });
    expect(again).toEqual(account);
    expect(paystack.requests.filter((request) => request.path === '/dedicated_account')).toHaveLength(1);
    const customer = JSON.parse(paystack.requests.find((request) => request.path === '/dedicated_account')?.body ?? '{}').customer as string;

    const reference = 'T684019483215';
    paystack.transfer(reference, 220_000);
    const webhook = paystack.webhook(reference, { channel: 'dedicated_nuban', customer: { customer_code: customer } });
    const answers = await Promise.all([first, second, first].map((app) => post(app, webhook)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(await fundings(reference)).toEqual([220_000]);
    expect((await topUps(first).state(reference)).status).toBe('credited');

    const stranger = 'T684019483216';
    paystack.transfer(stranger, 5_000);
    expect((await post(first, paystack.webhook(stranger, { channel: 'dedicated_nuban', customer: { customer_code: 'CUS_nobody' } }))).status).toBe(404);
    expect(await fundings(stranger)).toEqual([]);
  });

  it('records an account Paystack assigns later from its signed assignment webhooks: refused unsigned, a failure first, then the account, replayed once', async () => {
    const { id } = await createOrganization(first, { approved: true });
    const owner = { organizationId: id, environment: 'live' as const };
    paystack.assignLater = true;
    try {
      const requested = await topUps(first).assignDedicatedAccount(owner, 'finance@example.test', context);
      expect(requested).toEqual({ organizationId: id, environment: 'live', status: 'requested', accountNumber: null, accountName: null, bankName: null });
      const customer = JSON.parse(paystack.requests.filter((request) => request.path === '/dedicated_account').at(-1)?.body ?? '{}').customer as string;
      // Signature first: forged or absent, nothing is recorded.
      const failed = paystack.assignmentWebhook(customer, 'failed');
      expect((await post(first, { rawBody: failed.rawBody, signature: paystack.sign(`${failed.rawBody} `) })).status).toBe(401);
      expect((await first.request('POST', '/payments/paystack/webhook', { rawBody: failed.rawBody, headers: { 'content-type': 'application/json' } })).status).toBe(401);
      expect((await topUps(second).dedicatedAccount(owner))?.status).toBe('requested');
      expect((await post(second, failed)).body.data.outcome).toBe('failed');
      expect((await topUps(first).dedicatedAccount(owner))?.status).toBe('failed');
      // Asked again, then assigned; the webhook replayed on both instances records it once.
      expect((await topUps(first).assignDedicatedAccount(owner, 'finance@example.test', context)).status).toBe('requested');
      const again = JSON.parse(paystack.requests.filter((request) => request.path === '/dedicated_account').at(-1)?.body ?? '{}').customer as string;
      const assigned = paystack.assignmentWebhook(again, 'success');
      const answers = await Promise.all([first, second, first].map((app) => post(app, assigned)));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
      expect(answers.map((answer) => answer.body.data.outcome).sort()).toEqual(['already_done', 'already_done', 'assigned']);
      expect(await topUps(second).dedicatedAccount(owner)).toEqual({
        organizationId: id,
        environment: 'live',
        status: 'assigned',
        accountNumber: assigned.accountNumber,
        accountName: 'KORAPAY / IVL',
        bankName: 'Wema Bank',
      });
      const recorded = await streamEvents(first.eventStore, `paymentAccount-${id}.live`);
      expect(recorded.map((event) => event.type)).toEqual([
        'DedicatedAccountRequested',
        'DedicatedAccountAssignmentFailed',
        'DedicatedAccountRequested',
        'DedicatedAccountAssigned',
      ]);
      // The customer's names, email and phone in the webhook are not kept.
      expect(JSON.stringify(recorded.map((event) => [event.data, event.metadata]))).not.toMatch(/Ada|Obi|finance@example|2348100000000/);
      // A transfer to it credits the organization's wallet.
      paystack.transfer('T684019483301', 40_000);
      expect((await post(first, paystack.webhook('T684019483301', { channel: 'dedicated_nuban', customer: { customer_code: again } }))).body.data.outcome).toBe('credited');
      // An assignment for a customer nobody asked for: 404, nothing recorded.
      expect((await post(first, paystack.assignmentWebhook('CUS_nobody', 'success'))).status).toBe(404);
    } finally {
      paystack.assignLater = false;
    }
  });

  it('keeps to the limits per top-up', async () => {
    await expect(start('live', 50)).rejects.toThrow(/amountKobo|invalid/i);
    await expect(start('live', 500_000_001)).rejects.toThrow(/amountKobo|invalid/i);
  });

  // Last: it reconciles everything the tests above did, then breaks two things on purpose.
  it("audit:payments finds no difference, then reports a funding with no top-up and a provider's other amount, exiting 1 with a CSV", async () => {
    const railOf = (rail: 'paystack' | 'sandbox') => topUps(first).rail(rail);
    const clean = await reconcilePayments(first.eventStore, railOf);
    expect(clean.findings).toEqual([]);
    expect(clean.credited).toBeGreaterThanOrEqual(7);

    const credited = await start('live', 170_000);
    paystack.pay(credited.reference);
    expect((await post(first, paystack.webhook(credited.reference))).body.data.outcome).toBe('credited');
    // The provider now reports another amount for it; and an operator's funding borrows a top-up's reference.
    paystack.transactions.get(credited.reference)!.amount = 160_000;
    const stray = await start('live', 180_000);
    expect(
      (await first.admin('POST', `/admin/v1/organizations/${organizationId}/wallets/live/fundings`, { amountKobo: 180_000, reference: `topup:${stray.reference}` })).status,
    ).toBe(201);

    const directory = await mkdtemp(join(tmpdir(), 'payments-audit-'));
    try {
      const env = {
        PATH: process.env.PATH,
        ...(await testEventStoreEnv(first.database)),
        DATABASE_URL: first.database.url,
        DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
        DATA_DIR: join(directory, '.data'),
        PAYSTACK_SECRET_KEY: SECRET,
        PAYSTACK_BASE_URL: paystack.baseUrl,
        LOG_LEVEL: 'silent',
      };
      const csv = join(directory, 'findings.csv');
      const outcome = await run(process.execPath, ['dist/src/audit/payments-audit-cli.js', '--csv', csv], { env }).then(
        (result) => ({ code: 0, stdout: result.stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
      expect(outcome.code).toBe(1);
      expect(outcome.stdout).toContain('differences: 1 mismatched, 1 funding_without_top_up');
      const lines = (await readFile(csv, 'utf8')).trim().split('\n');
      expect(lines[0]).toBe('kind,reference,organizationId,environment,rail,creditedKobo,fundedKobo,providerKobo,providerStatus');
      expect(lines.slice(1).sort()).toEqual(
        [
          `"funding_without_top_up","${stray.reference}","${organizationId}","live","paystack","","180000","",""`,
          `"mismatched","${credited.reference}","${organizationId}","live","paystack","170000","170000","160000","success"`,
        ].sort(),
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("the month's statement closes at the wallet's balance and the auditor's replay, with fundings and checks by scope", async () => {
    const { key } = await issueKey(first, organizationId, { environment: 'test', scopes: ['nin'] });
    expect((await first.request('POST', '/v1/nin', { body: { nin: '21440414976' }, headers: { 'x-service-key': key } })).status).toBe(201);
    const lagos = new Date(Date.now() + 3_600_000);
    const month = `${lagos.getUTCFullYear()}-${String(lagos.getUTCMonth() + 1).padStart(2, '0')}`;
    for (const environment of ['test', 'live'] as const) {
      const statement = await walletStatement(first.eventStore, { organizationId, environment }, month);
      // The wallet as the API answers it (its read model), once it has applied the check's capture.
      let wallet = await first.admin('GET', `/admin/v1/organizations/${organizationId}/wallets/${environment}`);
      for (let attempt = 0; attempt < 50 && wallet.body.data.balanceKobo !== statement.closingKobo; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        wallet = await first.admin('GET', `/admin/v1/organizations/${organizationId}/wallets/${environment}`);
      }
      const history = await first.admin(
        'GET',
        `/admin/v1/organizations/${organizationId}/wallets/${environment}/history?asOf=${encodeURIComponent(statement.to.replace('Z', '+00:00'))}`,
      );
      expect(statement.closingKobo).toBe(wallet.body.data.balanceKobo);
      expect(statement.closingKobo).toBe(history.body.meta.balance.balanceKobo);
      const charged = statement.charged.reduce((sum, scope) => sum + scope.amountKobo, 0);
      expect(statement.openingKobo + statement.fundings.amountKobo - charged).toBe(statement.closingKobo);
      expect(statement.chainVerified).toBe(true);
    }
    const test = await walletStatement(first.eventStore, { organizationId, environment: 'test' }, month);
    expect(test.charged).toEqual([{ scope: 'nin', count: 1, amountKobo: 10_000 }]);
    expect(test.fundings).toEqual({ count: 2, amountKobo: 1_000_000 + 75_000 });
    // The month before: nothing yet.
    const before = await walletStatement(first.eventStore, { organizationId, environment: 'live' }, '2026-01');
    expect(before).toMatchObject({ openingKobo: 0, closingKobo: 0, fundings: { count: 0, amountKobo: 0 } });
  });

  it('the top-ups read model rebuilt from the log has the same rows as the live one, every state and account above included', async () => {
    const events = await allEvents(first.eventStore, { streamCategories: [TOPUP_CATEGORY, PAYMENT_ACCOUNT_CATEGORY] });
    expect(await first.app.get(ProjectionWaiter).waitFor([TOPUPS_PROJECTION], events.at(-1)!.position, 10_000)).toBe(true);
    const pool = new pg.Pool({ connectionString: first.database.url, max: 2 });
    try {
      const rows = async () => ({
        topUps: (await pool.query('select * from payment_topups order by reference')).rows,
        accounts: (await pool.query('select * from payment_accounts order by customer_code')).rows,
      });
      const live = await rows();
      expect(new Set(live.topUps.map((row) => row.status))).toEqual(new Set(['initiated', 'credited', 'failed', 'flagged']));
      expect(new Set(live.accounts.map((row) => row.status))).toEqual(new Set(['assigned']));
      expect(live.accounts.length).toBeGreaterThanOrEqual(2);
      const result = await rebuildProjection(pool, first.eventStore, first.database.url, topUpsProjection, { verify: true, strict: true });
      expect(result.outcome).toBe('swapped');
      expect(await rows()).toEqual(live);
    } finally {
      await pool.end();
    }
  });
});
