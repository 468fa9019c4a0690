import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import { reconcilePayments } from '../../src/payments/payment-reconciliation.js';
import { TopUps } from '../../src/payments/topups.service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { streamEvents } from '../support/event-store.js';
import { createOrganization } from '../support/fixtures.js';
import { PaystackStub } from '../support/paystack-stub.js';
import { postPaystackWebhook } from '../support/topups.js';

const SECRET = 'sk_test_0123456789abcdef0123456789abcdef';
const PASSWORD = 'correct horse battery';
const AUDITOR = `auditor_${'a'.repeat(32)}`;

/** The text pdfkit wrote (uncompressed): its hex strings, decoded and joined. */
const pdfText = (pdf: Buffer) => [...pdf.toString('latin1').matchAll(/<([0-9a-f]+)>/g)].map((match) => Buffer.from(match[1], 'hex').toString('latin1')).join('');

/** The value `read` answers once it is `wanted` (or the last after 5 s): read models follow the log. */
async function eventually<T>(read: () => Promise<T>, wanted: T): Promise<T> {
  let value = await read();
  for (let attempt = 0; attempt < 50 && value !== wanted; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

/**
 * What integrators, operators and auditors do with top-ups once they exist: receipts (card and
 * bank transfer), statements, over the console and the admin API, on one app on the embedded
 * default with a Paystack stub for the live wallet.
 */
describe('Top-ups: receipts, statements and operators', () => {
  let paystack: PaystackStub;
  let app: TestApp;
  let integrator: ConsoleClient;
  let organizationId: string;

  beforeAll(async () => {
    paystack = await PaystackStub.start(SECRET);
    app = await startTestApp({
      embedded: true,
      env: { AUDITOR_TOKEN: AUDITOR, PAYSTACK_SECRET_KEY: SECRET, PAYSTACK_BASE_URL: paystack.baseUrl, PAYSTACK_TIMEOUT_MS: '2000', TOPUP_RECOVERY_INTERVAL_MS: '3600000' },
    });
    integrator = new ConsoleClient(app);
    const signedIn = await integrator.signUpAndSignIn({ organizationName: 'Acme receipts', email: uniqueEmail('owner'), password: PASSWORD });
    expect(signedIn.status).toBe(200);
    organizationId = signedIn.body.data.organization.id as string;
  });
  afterAll(async () => {
    await app?.close();
    await paystack?.close();
  });

  const topUps = () => app.app.get(TopUps);
  const post = (webhook: { rawBody: string; signature: string }) => postPaystackWebhook(app, webhook);
  const pdf = async (path: string, headers: Record<string, string>) => {
    const response = await fetch(`${app.baseUrl}${path}`, { headers });
    return { status: response.status, type: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()) };
  };
  const consoleHeaders = (client: ConsoleClient) => ({ cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ') });

  /** The first operator (created with the admin token, its second factor set up), signed in once and kept. */
  let operator: Promise<ConsoleClient> | undefined;
  const operatorClient = (): Promise<ConsoleClient> =>
    (operator ??= (async () => {
      const client = new ConsoleClient(app);
      await client.session();
      const created = await client.call('POST', '/console/api/operator/bootstrap', { adminToken: app.adminToken, email: uniqueEmail('operator'), password: PASSWORD });
      expect(created.status).toBe(201);
      const setup = await client.call('POST', '/console/api/operator/totp/setup');
      expect((await client.call('POST', '/console/api/operator/totp/confirm', { code: await generate({ secret: setup.body.data.secret }) })).status).toBe(200);
      return client;
    })());

  /** A transfer of `amountKobo` to the organization's live dedicated account, credited through Paystack's webhook: its reference. */
  async function creditedTransfer(reference: string, amountKobo: number): Promise<string> {
    const account = await integrator.call('POST', '/console/api/wallet/dedicated_account?environment=live');
    expect(account.status).toBe(201);
    const customer = JSON.parse(paystack.requests.filter((request) => request.path === '/dedicated_account').at(-1)?.body ?? '{}').customer as string;
    paystack.transfer(reference, amountKobo);
    const answer = await post(paystack.webhook(reference, { channel: 'dedicated_nuban', customer: { customer_code: customer } }));
    expect(answer.body.data.outcome).toBe('credited');
    return reference;
  }

  it("serves the receipt of a credited bank-transfer top-up (Paystack's own reference) to the organization's finance users, and to no other organization", async () => {
    const reference = await creditedTransfer('T684019483299', 330_000);
    // The read model behind the list and the receipt follows the log: the row, once credited.
    expect(
      await eventually(
        async () =>
          (await integrator.call('GET', '/console/api/wallet/topups?environment=live')).body.data.find((row: { reference: string }) => row.reference === reference)?.status,
        'credited',
      ),
    ).toBe('credited');
    const receipt = await pdf(`/console/api/wallet/topups/${reference}/receipt.pdf`, consoleHeaders(integrator));
    expect(receipt.status).toBe(200);
    expect(receipt.type).toBe('application/pdf');
    expect(pdfText(receipt.body)).toContain(`Top-up reference${reference}`);
    expect(pdfText(receipt.body)).toContain('Credited to the walletNGN 3,300.00');

    const stranger = new ConsoleClient(app);
    expect((await stranger.signUpAndSignIn({ organizationName: 'Other', email: uniqueEmail('other'), password: PASSWORD })).status).toBe(200);
    expect((await pdf(`/console/api/wallet/topups/${reference}/receipt.pdf`, consoleHeaders(stranger))).status).toBe(404);
    expect((await pdf(`/console/api/wallet/topups/${encodeURIComponent('../x')}/receipt.pdf`, consoleHeaders(integrator))).status).toBe(404);
    expect((await streamEvents(app.eventStore, `topUp-${reference}`)).map((event) => event.type)).toEqual(['TopUpInitiated', 'TopUpPaid', 'TopUpCredited']);
  });

  it("lets operators list an organization's top-ups and download its receipts and statements (admin API: admin and auditor tokens; operators' console)", async () => {
    const reference = await creditedTransfer('T684019483300', 120_000);
    await eventually(
      async () =>
        (await app.admin('GET', `/admin/v1/organizations/${organizationId}/wallets/live/topups`)).body.data.find((row: { reference: string }) => row.reference === reference)
          ?.status,
      'credited',
    );
    const listed = await app.admin('GET', `/admin/v1/organizations/${organizationId}/wallets/live/topups`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.find((row: { reference: string }) => row.reference === reference)).toMatchObject({
      channel: 'bank_transfer',
      status: 'credited',
      creditedKobo: 120_000,
    });
    for (const token of [app.adminToken, AUDITOR]) {
      const receipt = await pdf(`/admin/v1/organizations/${organizationId}/topups/${reference}/receipt.pdf`, { authorization: `Bearer ${token}` });
      expect(receipt.status).toBe(200);
      expect(receipt.type).toBe('application/pdf');
      expect(pdfText(receipt.body)).toContain('Credited to the walletNGN 1,200.00');
    }
    const other = (await createOrganization(app)).id;
    expect((await pdf(`/admin/v1/organizations/${other}/topups/${reference}/receipt.pdf`, { authorization: `Bearer ${app.adminToken}` })).status).toBe(404);
    expect((await pdf(`/admin/v1/organizations/${organizationId}/topups/${reference}/receipt.pdf`, {})).status).toBe(401);

    const operator = await operatorClient();
    const topUpsPage = await operator.call('GET', `/console/api/operator/organizations/${organizationId}/wallets/live/topups`);
    expect(topUpsPage.status).toBe(200);
    expect(topUpsPage.body.data.map((row: { reference: string }) => row.reference)).toContain(reference);
    const receipt = await pdf(`/console/api/operator/organizations/${organizationId}/topups/${reference}/receipt.pdf`, consoleHeaders(operator));
    expect(receipt.status).toBe(200);
    expect(pdfText(receipt.body)).toContain(`Top-up reference${reference}`);
    // An integrator is no operator.
    expect((await pdf(`/console/api/operator/organizations/${organizationId}/topups/${reference}/receipt.pdf`, consoleHeaders(integrator))).status).toBe(403);

    // The month's statement, for operators: its figures (JSON) and its PDF.
    const month = new Date(Date.now() + 3_600_000).toISOString().slice(0, 7);
    const statementPath = `/console/api/operator/organizations/${organizationId}/wallets/live/statement?month=${month}`;
    const figures = await operator.call('GET', `${statementPath}&format=json`);
    expect(figures.status).toBe(200);
    expect(figures.body.data).toMatchObject({ organizationId, environment: 'live', month, chainVerified: true });
    expect(figures.body.data.fundings.amountKobo).toBeGreaterThanOrEqual(450_000);
    expect(figures.body.data.closingKobo).toBe(
      figures.body.data.openingKobo +
        figures.body.data.fundings.amountKobo -
        figures.body.data.charged.reduce((sum: number, row: { amountKobo: number }) => sum + row.amountKobo, 0),
    );
    const statement = await pdf(statementPath, consoleHeaders(operator));
    expect(statement.status).toBe(200);
    expect(statement.type).toBe('application/pdf');
    expect(pdfText(statement.body)).toContain(`Wallet statement, ${month}`);
    expect((await operator.call('GET', `/console/api/operator/organizations/org_01JD3Q9ZK8W6V2C4X7N5B0M1TR/wallets/live/statement?month=${month}&format=json`)).status).toBe(404);
    expect((await operator.call('GET', `/console/api/operator/organizations/${organizationId}/wallets/live/statement?month=2026-13&format=json`)).status).toBe(422);
  });

  describe("the operators' payments reconciliation", () => {
    const auditor = (method: string, path: string, body?: unknown) => app.request(method, path, { body, headers: { authorization: `Bearer ${AUDITOR}` } });
    async function fundings(reference: string): Promise<number[]> {
      return (await streamEvents(app.eventStore, `wallet-${organizationId}.live`))
        .filter((event) => event.type === 'WalletFunded' && event.data.fundingReference === `topup:${reference}`)
        .map((event) => event.data.amountKobo as number);
    }
    /** A card top-up of the live wallet the payer paid on Paystack, whose webhook (if any) named `reportedKobo`: flagged when it is not the amount paid. */
    async function paid(amountKobo: number, reportedKobo: number | undefined): Promise<string> {
      const started = await integrator.call('POST', '/console/api/wallet/topups?environment=live', { amountKobo });
      expect(started.status).toBe(201);
      const reference = started.body.data.reference as string;
      paystack.pay(reference);
      if (reportedKobo !== undefined)
        expect((await post(paystack.webhook(reference, { amount: reportedKobo }))).body.data.outcome).toBe(reportedKobo === amountKobo ? 'credited' : 'flagged');
      return reference;
    }
    const row = (rows: { reference: string }[], reference: string) => rows.find((candidate) => candidate.reference === reference);

    it("lists flagged and settled-but-uncredited top-ups across organizations with the provider's figures; the auditor reads and resolves nothing", async () => {
      const flagged = await paid(250_000, 2_500_000);
      const uncredited = await paid(90_000, undefined);
      const fine = await paid(80_000, 80_000);
      // The list reads the top-ups' read model: until it has the credit, the provider's settled payment looks uncredited.
      let listed = await auditor('GET', '/admin/v1/payments/attention');
      for (const deadline = Date.now() + 10_000; row(listed.body.data, fine) !== undefined && Date.now() < deadline;) {
        await new Promise((wake) => setTimeout(wake, 100));
        listed = await auditor('GET', '/admin/v1/payments/attention');
      }
      expect(listed.status).toBe(200);
      expect(row(listed.body.data, flagged)).toEqual(
        expect.objectContaining({ organizationId, environment: 'live', rail: 'paystack', channel: 'card', status: 'flagged', attention: 'flagged', flagReason: 'amount_mismatch' }),
      );
      expect(row(listed.body.data, flagged)).toMatchObject({
        initiatedKobo: 250_000,
        providerStatus: 'success',
        providerKobo: 250_000,
        providerFeesKobo: 3_750,
        providerCurrency: 'NGN',
      });
      expect(row(listed.body.data, uncredited)).toMatchObject({
        status: 'initiated',
        attention: 'uncredited',
        initiatedKobo: 90_000,
        providerStatus: 'success',
        providerKobo: 90_000,
      });
      expect(row(listed.body.data, fine)).toBeUndefined();

      const refused = await auditor('POST', `/admin/v1/payments/topups/${flagged}/resolution`, { action: 'credit' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('read_only');
      const operator = await operatorClient();
      const page = await operator.call('GET', '/console/api/operator/payments');
      expect(page.status).toBe(200);
      expect(row(page.body.data, flagged)).toMatchObject({ attention: 'flagged', providerKobo: 250_000 });
      expect(await fundings(flagged)).toEqual([]);
      expect((await streamEvents(app.eventStore, `topUp-${flagged}`)).map((event) => event.type)).toEqual(['TopUpInitiated', 'TopUpFlagged']);
    });

    it("credits a flagged top-up with the provider's settled amount once (two operators at once, then again), as a TopUpResolved event", async () => {
      const flagged = await paid(260_000, 26_000);
      const answers = await Promise.all([
        app.admin('POST', `/admin/v1/payments/topups/${flagged}/resolution`, { action: 'credit' }),
        app.admin('POST', `/admin/v1/payments/topups/${flagged}/resolution`, { action: 'credit' }),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      const done = answers.find((answer) => answer.status === 200);
      expect(done?.body.data).toEqual({ reference: flagged, organizationId, environment: 'live', status: 'credited', creditedKobo: 260_000 });
      expect(answers.find((answer) => answer.status === 409)?.body.error.code).toBe('top_up_not_resolvable');
      expect((await app.admin('POST', `/admin/v1/payments/topups/${flagged}/resolution`, { action: 'credit' })).status).toBe(409);
      expect(await fundings(flagged)).toEqual([260_000]);
      const events = await streamEvents(app.eventStore, `topUp-${flagged}`);
      expect(events.map((event) => event.type)).toEqual(['TopUpInitiated', 'TopUpFlagged', 'TopUpResolved', 'TopUpCredited']);
      expect(events[2].data).toMatchObject({ resolution: 'credit', amountKobo: 260_000, feesKobo: 3_900 });
      expect(events[2].metadata.actor).toEqual({ type: 'operator', id: 'admin' });
      expect(row((await app.admin('GET', '/admin/v1/payments/attention')).body.data, flagged)).toBeUndefined();
      // Its receipt, as any credited top-up's.
      await eventually(
        async () =>
          (await app.admin('GET', `/admin/v1/organizations/${organizationId}/wallets/live/topups`)).body.data.find(
            (candidate: { reference: string }) => candidate.reference === flagged,
          )?.status,
        'credited',
      );
      expect((await pdf(`/admin/v1/organizations/${organizationId}/topups/${flagged}/receipt.pdf`, { authorization: `Bearer ${app.adminToken}` })).status).toBe(200);
    });

    it('credits a settled top-up left uncredited here, and dismisses a flagged one for a reason of the list only (from the console)', async () => {
      const uncredited = await paid(70_000, undefined);
      const flagged = await paid(50_000, 5_000);
      const operator = await operatorClient();
      const credited = await operator.call('POST', `/console/api/operator/payments/${uncredited}/resolution`, { action: 'credit' });
      expect(credited.status).toBe(200);
      expect(credited.body.data).toMatchObject({ status: 'credited', creditedKobo: 70_000 });
      expect(await fundings(uncredited)).toEqual([70_000]);
      // An uncredited one is credited, not dismissed; a dismissal names a reason of the list.
      expect((await operator.call('POST', `/console/api/operator/payments/${uncredited}/resolution`, { action: 'dismiss', reason: 'refunded_to_payer' })).status).toBe(409);
      const badReason = await operator.call('POST', `/console/api/operator/payments/${flagged}/resolution`, { action: 'dismiss', reason: 'because' });
      expect(badReason.status).toBe(422);
      expect(badReason.body.error.details.fields).toEqual([{ field: 'reason', message: expect.stringContaining('refunded_to_payer') }]);
      const dismissed = await operator.call('POST', `/console/api/operator/payments/${flagged}/resolution`, { action: 'dismiss', reason: 'refunded_to_payer' });
      expect(dismissed.status).toBe(200);
      expect(dismissed.body.data).toMatchObject({ status: 'dismissed', creditedKobo: null });
      // Dismissed stays dismissed: neither a credit nor the provider's webhook credits it after.
      expect((await operator.call('POST', `/console/api/operator/payments/${flagged}/resolution`, { action: 'credit' })).status).toBe(409);
      await post(paystack.webhook(flagged));
      expect(await fundings(flagged)).toEqual([]);
      const resolved = (await streamEvents(app.eventStore, `topUp-${flagged}`)).find((event) => event.type === 'TopUpResolved');
      expect(resolved?.data).toMatchObject({ resolution: 'dismiss', reason: 'refunded_to_payer' });
      expect(resolved?.metadata.actor).toEqual({ type: 'operator', id: expect.not.stringMatching(/^admin$/) });
      const listed = (await operator.call('GET', '/console/api/operator/payments')).body.data;
      expect([row(listed, uncredited), row(listed, flagged)]).toEqual([undefined, undefined]);
      // The auditor's reconciliation (audit:payments, the Payments audit page) takes the dismissal as settled by the operator: no difference.
      const reconciled = await reconcilePayments(app.eventStore, (rail) => topUps().rail(rail));
      expect(reconciled.findings.filter((finding) => finding.reference === flagged || finding.reference === uncredited)).toEqual([]);
    });
  });

  describe('the sandbox transfer', () => {
    it("simulates a transfer into the test wallet's dedicated account through the rail's webhook, credited once (replayed 3 times); test wallets only", async () => {
      const testFundings = async (reference: string) =>
        (await streamEvents(app.eventStore, `wallet-${organizationId}.test`))
          .filter((event) => event.type === 'WalletFunded' && event.data.fundingReference === `topup:${reference}`)
          .map((event) => event.data.amountKobo as number);
      // No account yet: nothing to transfer to.
      expect((await integrator.call('POST', '/console/api/wallet/dedicated_account/transfers?environment=test', { amountKobo: 150_000 })).status).toBe(404);
      const account = await integrator.call('POST', '/console/api/wallet/dedicated_account?environment=test');
      expect(account.body.data).toMatchObject({ status: 'assigned', bankName: 'Sandbox Bank' });
      const simulated = await integrator.call('POST', '/console/api/wallet/dedicated_account/transfers?environment=test', { amountKobo: 150_000 });
      expect(simulated.status).toBe(201);
      expect(simulated.body.data).toEqual({ reference: expect.stringMatching(/^SBX[0-9A-F]{16}$/), outcome: 'credited' });
      const reference = simulated.body.data.reference as string;
      expect(await testFundings(reference)).toEqual([150_000]);
      const events = await streamEvents(app.eventStore, `topUp-${reference}`);
      expect(events.map((event) => event.type)).toEqual(['TopUpInitiated', 'TopUpPaid', 'TopUpCredited']);
      expect(events[0].data).toMatchObject({ organizationId, environment: 'test', rail: 'sandbox', channel: 'bank_transfer', amountKobo: 150_000 });

      // The same webhook path as Paystack's: a transfer's webhook replayed credits once.
      const transfer = await topUps().sandbox.simulateTransfer(organizationId, 40_000);
      const outcomes = await Promise.all([1, 2, 3].map(() => topUps().receiveWebhook('sandbox', transfer.rawBody, transfer.signature)));
      expect(outcomes.every((outcome) => outcome === 'credited' || outcome === 'already_done')).toBe(true);
      expect(await testFundings(transfer.reference)).toEqual([40_000]);
      expect(JSON.parse(transfer.rawBody)).toMatchObject({
        event: 'charge.success',
        data: { channel: 'dedicated_nuban', customer: { customer_code: expect.stringMatching(/^CUS_sandbox_/) } },
      });

      // Live wallets' transfers are real money; amounts are whole kobo within bounds.
      const live = await integrator.call('POST', '/console/api/wallet/dedicated_account/transfers?environment=live', { amountKobo: 150_000 });
      expect(live.status).toBe(422);
      expect(live.body.error.details.fields).toEqual([{ field: 'environment', message: 'transfers are simulated in the test environment only' }]);
      expect((await integrator.call('POST', '/console/api/wallet/dedicated_account/transfers?environment=test', { amountKobo: 1.5 })).status).toBe(422);
      // Its receipt, once the read model has it.
      await eventually(
        async () =>
          (await integrator.call('GET', '/console/api/wallet/topups?environment=test')).body.data.find((row: { reference: string }) => row.reference === reference)?.status,
        'credited',
      );
      const receipt = await pdf(`/console/api/wallet/topups/${reference}/receipt.pdf`, consoleHeaders(integrator));
      expect(receipt.status).toBe(200);
      expect(pdfText(receipt.body)).toContain('Paid throughsandbox (no real money)');
    });
  });
});
