import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { TopUps } from '../../src/payments/topups.service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ConsoleClient, uniqueEmail } from '../support/console-client.js';
import { streamEvents } from '../support/event-store.js';
import { PaystackStub } from '../support/paystack-stub.js';

const SECRET = 'sk_test_0123456789abcdef0123456789abcdef';
const PASSWORD = 'correct horse battery';
const context = { correlationId: 'topup-operations-e2e', actor: SYSTEM_ACTOR };

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
      env: { PAYSTACK_SECRET_KEY: SECRET, PAYSTACK_BASE_URL: paystack.baseUrl, PAYSTACK_TIMEOUT_MS: '2000', TOPUP_RECOVERY_INTERVAL_MS: '3600000' },
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
  const post = (webhook: { rawBody: string; signature: string }) =>
    app.request('POST', '/payments/paystack/webhook', { rawBody: webhook.rawBody, headers: { 'content-type': 'application/json', 'x-paystack-signature': webhook.signature } });
  const pdf = async (path: string, headers: Record<string, string>) => {
    const response = await fetch(`${app.baseUrl}${path}`, { headers });
    return { status: response.status, type: response.headers.get('content-type'), body: Buffer.from(await response.arrayBuffer()) };
  };
  const consoleHeaders = (client: ConsoleClient) => ({ cookie: [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ') });

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
    expect(await eventually(async () => (await integrator.call('GET', '/console/api/wallet/topups?environment=live')).body.data.find((row: { reference: string }) => row.reference === reference)?.status, 'credited')).toBe('credited');
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
    void topUps;
    void context;
  });
});
