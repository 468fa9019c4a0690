import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { reconcilePayments } from '../../src/payments/payment-reconciliation.js';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { TopUpRecoverySweep } from '../../src/payments/topup-recovery.js';
import { TopUps } from '../../src/payments/topups.service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { streamEvents } from '../support/event-store.js';
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
import { Clock } from '../../src/common/clock.js';
import { IdGenerator } from '../../src/common/ids.js';
import { EventSourcedHandler } from '../../src/event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../../src/event-sourcing/retry.js';
import { CHECKOUT_LIFETIME_MS, topUpDecider } from '../../src/payments/topup.decider.js';
import { topUpFundingReference } from '../../src/payments/topup.events.js';
import { WalletLedger } from '../../src/wallets/wallet-ledger.port.js';
import { postPaystackWebhook } from '../support/topups.js';

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
  const post = postPaystackWebhook;
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
    // A body that is not JSON is judged by its signature first: unsigned 401, signed 422.
    const notJson = '{"event": "charge.success", "data": {"reference": ';
    const unsignedNotJson = await post(first, { rawBody: notJson, signature: paystack.sign(`${notJson}x`) });
    expect(unsignedNotJson.status).toBe(401);
    expect((await post(first, { rawBody: '', signature: paystack.sign('x') })).status).toBe(401);
    const signedNotJson = await post(first, { rawBody: notJson, signature: paystack.sign(notJson) });
    expect(signedNotJson.status).toBe(422);
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

  it("holds the daily limit when the payer pays after the sweep saw Paystack's 'abandoned' (checkout not finished yet)", async () => {
    const { id } = await createOrganization(first, { approved: true });
    await topUps(first).setLimits(id, { maxTopUpKobo: null, dailyLimitKobo: 300_000 }, context);
    const begin = (amountKobo: number) =>
      topUps(first).initiate({ organizationId: id, environment: 'live' }, { amountKobo, channel: 'card', email: 'finance@example.test' }, context);
    const credited = async () =>
      (await streamEvents(first.eventStore, `wallet-${id}.live`))
        .filter((event) => event.type === 'WalletFunded')
        .reduce((sum, event) => sum + (event.data.amountKobo as number), 0);
    const a = await begin(200_000);
    // The payer is still on Paystack's checkout: verify answers `abandoned`, which is not final yet.
    expect((await topUps(first).rail('paystack')!.verify(a.reference))?.status).toBe('abandoned');
    await first.app.get(TopUpRecoverySweep).runOnce(new Date(Date.now() + 60_000));
    expect(await status(a.reference)).toBe('initiated');
    // Its allowance still counts: a second top-up over what is left is refused.
    const b = await begin(200_000).catch(() => undefined);
    expect(b).toBeUndefined();
    // The payer pays: credited once, and the day's credits stay within the limit.
    paystack.pay(a.reference);
    expect((await post(first, paystack.webhook(a.reference))).body.data.outcome).toBe('credited');
    expect(await credited()).toBe(200_000);
  });

  it("a payment after its top-up failed (checkout lifetime over) is credited with its allowance counted again, or held for an operator when the day's limit is spent", async () => {
    const { id } = await createOrganization(first, { approved: true });
    await topUps(first).setLimits(id, { maxTopUpKobo: null, dailyLimitKobo: 300_000 }, context);
    const begin = (amountKobo: number) =>
      topUps(first).initiate({ organizationId: id, environment: 'live' }, { amountKobo, channel: 'card', email: 'finance@example.test' }, context);
    const credited = async () =>
      (await streamEvents(first.eventStore, `wallet-${id}.live`)).filter((event) => event.type === 'WalletFunded').map((event) => event.data.amountKobo as number);
    const late = new Date(Date.now() + CHECKOUT_LIFETIME_MS + 60_000);
    // Abandoned past the checkout's lifetime: failed, its allowance given back.
    const a = await begin(200_000);
    expect((await topUps(first).confirm(a.reference, null, context, late)).status).toBe('failed');
    expect(await topUps(first).countedToday({ organizationId: id, environment: 'live' })).toBe(0);
    // Then paid after all, the day still having room: counted again and credited.
    paystack.pay(a.reference);
    expect((await post(first, paystack.webhook(a.reference))).body.data.outcome).toBe('credited');
    expect(await topUps(first).countedToday({ organizationId: id, environment: 'live' })).toBe(200_000);
    // A second one fails the same way, the payer starts a third meanwhile, then pays the second late: over the limit, held.
    const b = await begin(100_000);
    expect((await topUps(first).confirm(b.reference, null, context, late)).status).toBe('failed');
    const c = await begin(100_000);
    paystack.pay(c.reference);
    expect((await post(first, paystack.webhook(c.reference))).body.data.outcome).toBe('credited');
    paystack.pay(b.reference);
    expect((await post(second, paystack.webhook(b.reference))).body.data.outcome).toBe('flagged');
    const flagged = (await streamEvents(first.eventStore, `topUp-${b.reference}`)).find((event) => event.type === 'TopUpFlagged');
    expect(flagged?.data).toEqual(expect.objectContaining({ reason: 'over_daily_limit', verifiedKobo: 100_000 }));
    expect(await credited()).toEqual([200_000, 100_000]);
    expect(await topUps(first).countedToday({ organizationId: id, environment: 'live' })).toBe(300_000);
  });

  it('finishes a top-up recorded paid whose credit a crash cut short, with or without its wallet funding written: credited once', async () => {
    const handler = new EventSourcedHandler({
      store: first.eventStore,
      clock: first.app.get(Clock),
      ids: first.app.get(IdGenerator),
      retry: linearJitter(10, 5),
      paging: { pageSize: 100, maxPages: 10 },
    });
    const paidOnly = await start('live', 150_000);
    const funded = await start('live', 160_000);
    for (const { reference } of [paidOnly, funded]) {
      paystack.pay(reference);
      const verified = await topUps(first).rail('paystack')!.verify(reference);
      // The crash: the verification is recorded, the process dies before (or after) the wallet funding.
      await handler.handle({ id: `topUp-${reference}`, decider: topUpDecider }, { type: 'RecordVerification', verified: verified!, reportedKobo: null, at: new Date() }, context);
    }
    await first.app.get(WalletLedger).fund({ organizationId, environment: 'live' }, { fundingReference: topUpFundingReference(funded.reference), amountKobo: 160_000 }, context);
    expect([await status(paidOnly.reference), await status(funded.reference)]).toEqual(['paid', 'paid']);
    await first.app.get(ProjectionWaiter).waitFor([TOPUPS_PROJECTION], (await allEvents(first.eventStore, { streamCategories: [TOPUP_CATEGORY] })).at(-1)!.position, 10_000);
    const sweep = first.app.get(TopUpRecoverySweep);
    await Promise.all([sweep.runOnce(new Date(Date.now() + 60_000)), second.app.get(TopUpRecoverySweep).runOnce(new Date(Date.now() + 60_000))]);
    expect([await status(paidOnly.reference), await status(funded.reference)]).toEqual(['credited', 'credited']);
    expect([await fundings(paidOnly.reference), await fundings(funded.reference)]).toEqual([[150_000], [160_000]]);
  });

  it('the recovery sweep reaches a newer top-up behind more than a pass of never-paid checkouts', async () => {
    const { id } = await createOrganization(first, { approved: true });
    const begin = () => topUps(first).initiate({ organizationId: id, environment: 'test' }, { amountKobo: 10_000, channel: 'card', email: 'finance@example.test' }, context);
    for (let index = 0; index < 55; index++) await begin();
    const newer = await begin();
    // Paid on the sandbox, its webhook lost: only the sweep can credit it.
    await topUps(first).sandbox.settle(newer.reference, 'pay');
    await first.app.get(ProjectionWaiter).waitFor([TOPUPS_PROJECTION], (await allEvents(first.eventStore, { streamCategories: [TOPUP_CATEGORY] })).at(-1)!.position, 10_000);
    const sweep = first.app.get(TopUpRecoverySweep);
    let passes = 0;
    let outcome = 'initiated';
    while (outcome !== 'credited' && passes < 4) {
      await sweep.runOnce(new Date(Date.now() + 60_000));
      passes++;
      outcome = await status(newer.reference);
    }
    expect({ outcome, passes: passes <= 3 }).toEqual({ outcome: 'credited', passes: true });
  });

  it("refuses an operator's funding under a top-up's reference namespace (topup:), crediting nothing", async () => {
    const { reference } = await start('live', 190_000);
    for (const funding of [`topup:${reference}`, 'topup:anything']) {
      const answer = await first.admin('POST', `/admin/v1/organizations/${organizationId}/wallets/live/fundings`, { amountKobo: 190_000, reference: funding });
      expect(answer.status).toBe(422);
      expect(answer.body.error.details.fields).toEqual([{ field: 'reference', message: expect.stringContaining('topup:') }]);
    }
    expect(await fundings(reference)).toEqual([]);
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

  // Last: it reconciles everything the tests above did (the CLI itself runs in payments-audit.e2e-spec.ts).
  it('the payments reconciliation finds nothing but the top-ups held for an operator, each reported', async () => {
    const railOf = (rail: 'paystack' | 'sandbox') => topUps(first).rail(rail);
    const result = await reconcilePayments(first.eventStore, railOf);
    expect(result.credited).toBeGreaterThanOrEqual(10);
    // The webhook naming another amount, and the payment after its failure over the day's limit.
    expect(result.findings.map((finding) => finding.kind)).toEqual(['flagged', 'flagged']);
    for (const finding of result.findings) expect(await status(finding.reference)).toBe('flagged');
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
