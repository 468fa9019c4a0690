import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiError, createLedgerClient, InsufficientBalanceError, type LedgerClient } from '../../clients/typescript/src/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { openApiValidator } from '../support/openapi-validator.js';

/**
 * The TypeScript client (clients/typescript) against the running service: a check, the wallet,
 * lists walked page by page, typed errors. Its fetch goes through the OpenAPI validator too.
 */

describe('The TypeScript client', () => {
  let app: TestApp;
  let client: LedgerClient;
  let organizationId: string;
  const requested: string[] = [];

  /** fetch, with every answer checked against the document and every URL noted. */
  const validatingFetch = async (input: Request): Promise<Response> => {
    const response = await fetch(input);
    const url = new URL(input.url);
    requested.push(`${input.method} ${url.pathname}${url.search}`);
    const text = await response.clone().text();
    const problems = openApiValidator().check({
      method: input.method,
      url: `${url.pathname}${url.search}`,
      status: response.status,
      contentType: response.headers.get('content-type'),
      text,
      headers: [...response.headers.keys()],
    });
    if (problems.length > 0) throw new Error(problems.join('\n'));
    return response;
  };

  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: '1000000' } });
    organizationId = (await createOrganization(app, { approved: true })).id;
    const key = (await issueKey(app, organizationId)).key;
    client = createLedgerClient({ baseUrl: app.baseUrl, apiKey: key, fetch: validatingFetch });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('runs a check and reads it back, typed by scope', async () => {
    const check = await client.verify('nin', { nin: '21440414976' });
    expect(check).toMatchObject({ scope: 'nin', status: 'found', charged: true, result: { nin: '21440414976', firstName: 'Blessing' } });
    const match = await client.verify('face_match', {
      image: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      bvn: '22126025250',
    });
    expect(typeof match.result.match).toBe('boolean');
    const read = await client.getVerification(check.reference);
    expect(read).toMatchObject({ reference: check.reference, scope: 'nin' });
    if (read.scope === 'nin') expect(read.result.lastName).toBe(check.result.lastName);
  });

  it('reads the wallet, and walks every page of the verifications and of the ledger', async () => {
    for (const nin of ['57092406569', '34743670838', '12345678901']) await client.verify('nin', { nin });
    // The credit less four NIN checks and a face match; the balance is a read model, so it may take a moment.
    const expected = 1_000_000 - 4 * 10_000 - 20_000;
    const settled = { environment: 'test', balanceKobo: expected, reservedKobo: 0, availableKobo: expected };
    let wallet = await client.wallet();
    for (const deadline = Date.now() + 5_000; JSON.stringify(wallet) !== JSON.stringify(settled) && Date.now() < deadline; wallet = await client.wallet())
      await new Promise((wake) => setTimeout(wake, 50));
    expect(wallet).toEqual(settled);

    requested.length = 0;
    const summaries = [];
    for await (const summary of client.verifications({ scope: 'nin' }, 2)) summaries.push(summary);
    expect(summaries.map((summary) => summary.scope)).toEqual(Array(4).fill('nin'));
    expect(new Set(summaries.map((summary) => summary.reference)).size).toBe(4);
    expect(requested).toEqual(['GET /v1/verifications?scope=nin&page=1&pageSize=2', 'GET /v1/verifications?scope=nin&page=2&pageSize=2']);

    // The ledger is a read model of its own: read it again until it holds the last debit.
    const ledger = async () => {
      const all = [];
      for await (const transaction of client.walletTransactions(3)) all.push(transaction);
      return all;
    };
    let transactions = await ledger();
    for (const deadline = Date.now() + 5_000; transactions.filter((item) => item.type === 'debit').length < 5 && Date.now() < deadline; transactions = await ledger())
      await new Promise((wake) => setTimeout(wake, 50));
    // The sandbox credit, and a reservation and a debit per charged check (five).
    expect(transactions.filter((transaction) => transaction.type === 'funding')).toHaveLength(1);
    expect(transactions.filter((transaction) => transaction.type === 'debit')).toHaveLength(5);
  });

  it('walks the verifications without duplicates while checks arrive mid-walk', async () => {
    // An organization of its own, so that only this test's checks are in its list.
    const own = createLedgerClient({ baseUrl: app.baseUrl, apiKey: (await issueKey(app, (await createOrganization(app, { approved: true })).id)).key, fetch: validatingFetch });
    const before: string[] = [];
    for (const nin of ['57092406569', '34743670838', '12345678901']) before.unshift((await own.verify('nin', { nin })).reference);

    requested.length = 0;
    const walked: string[] = [];
    for await (const summary of own.verifications({}, 2)) {
      walked.push(summary.reference);
      // After the first page: two more checks go to the front of the list, pushing the walked ones down onto page 2.
      if (walked.length === 2) for (const nin of ['21440414976', '57092406569']) await own.verify('nin', { nin });
    }
    expect(walked).toEqual(before);
    expect(requested.filter((request) => request.startsWith('GET /v1/verifications'))).toEqual([
      'GET /v1/verifications?page=1&pageSize=2',
      'GET /v1/verifications?page=2&pageSize=2',
      'GET /v1/verifications?page=3&pageSize=2',
    ]);
  });

  it("walks the wallet's ledger without duplicates while transactions arrive mid-walk", async () => {
    const own = createLedgerClient({ baseUrl: app.baseUrl, apiKey: (await issueKey(app, (await createOrganization(app, { approved: true })).id)).key, fetch: validatingFetch });
    for (const nin of ['57092406569', '34743670838']) await own.verify('nin', { nin });
    // The sandbox credit, and a reservation and a debit per check: five, once the ledger's read model has them.
    const key = (transaction: { type: string; reference: string }) => `${transaction.type} ${transaction.reference}`;
    let before: string[] = [];
    for (const deadline = Date.now() + 5_000; before.length < 5 && Date.now() < deadline;) {
      before = [];
      for await (const transaction of own.walletTransactions()) before.push(key(transaction));
      if (before.length < 5) await new Promise((wake) => setTimeout(wake, 50));
    }
    expect(before).toHaveLength(5);

    const walked: string[] = [];
    for await (const transaction of own.walletTransactions(2)) {
      walked.push(key(transaction));
      // After the first page: two checks put four transactions at the front, more than a page, pushing the walked ones down past page 2.
      if (walked.length === 2) for (const nin of ['21440414976', '57092406569']) await own.verify('nin', { nin });
    }
    expect(walked).toEqual(before);
  });

  it('manages verification flows and sessions: a flow and its next version, a session on it, listed, cancelled', async () => {
    const flow = await client.verificationFlows.create({ name: 'Client flow', steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }] });
    expect(flow).toMatchObject({ version: 1, name: 'Client flow' });
    expect((await client.verificationFlows.publish(flow.id, { name: 'Client flow v2', steps: flow.steps })).version).toBe(2);
    expect((await client.verificationFlows.get(flow.id)).name).toBe('Client flow v2');
    expect((await client.verificationFlows.list()).map((listed) => listed.id)).toContain(flow.id);
    const session = await client.verificationSessions.create({ flowId: flow.id, customerId: 'cus_client' });
    expect(session).toMatchObject({ status: 'created', flowVersion: 2, clientSecret: expect.stringMatching(/^vcs_/) });
    expect((await client.verificationSessions.list({ flowId: flow.id })).map((listed) => listed.id)).toEqual([session.id]);
    expect((await client.verificationSessions.cancel(session.id)).status).toBe('cancelled');
    expect((await client.verificationSessions.get(session.id)).status).toBe('cancelled');
  });

  it('manages webhook endpoints through webhookEndpoints: create, list, get, update, rotate the secret, delete', async () => {
    const own = createLedgerClient({ baseUrl: app.baseUrl, apiKey: (await issueKey(app, (await createOrganization(app, { approved: true })).id)).key, fetch: validatingFetch });
    const hooks = own.webhookEndpoints;
    expect(await hooks.list()).toEqual([]);
    // A private address: the service refuses to deliver there, so no request leaves this machine.
    const created = await hooks.create({ url: 'https://127.0.0.1/hooks', eventTypes: ['verification.completed'], description: 'first receiver' });
    expect(created).toMatchObject({
      id: expect.any(String),
      url: 'https://127.0.0.1/hooks',
      eventTypes: ['verification.completed'],
      description: 'first receiver',
      enabled: true,
      environment: 'test',
      secret: expect.stringMatching(/^whsec_/),
    });
    const { secret, ...shown } = created;
    expect(await hooks.list()).toEqual([shown]);
    expect(await hooks.get(created.id)).toEqual(shown);
    expect(JSON.stringify(await hooks.list())).not.toContain(secret);

    const updated = await hooks.update(created.id, { description: 'renamed receiver', enabled: false, eventTypes: [] });
    expect(updated).toEqual({ ...shown, description: 'renamed receiver', enabled: false, eventTypes: [] });
    expect(await hooks.get(created.id)).toEqual(updated);

    const rotated = await hooks.rotateSecret(created.id, { overlapSeconds: 60 });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(secret);
    expect(await hooks.deliveries(created.id)).toEqual([]);

    await hooks.delete(created.id);
    expect(await hooks.list()).toEqual([]);
    const gone = (await hooks.get(created.id).catch((error: unknown) => error)) as ApiError;
    expect(gone).toBeInstanceOf(ApiError);
    expect({ status: gone.status, code: gone.code }).toEqual({ status: 404, code: 'not_found' });
    expect(requested.filter((line) => line.includes('/v1/webhook_endpoints')).map((line) => line.split(' ')[0])).toEqual(
      expect.arrayContaining(['POST', 'GET', 'PATCH', 'DELETE']),
    );
  });

  it('throws typed errors: the 402 with its details, and any other code', async () => {
    const admin = createLedgerClient({ baseUrl: app.baseUrl, adminToken: app.adminToken, fetch: validatingFetch });
    const prices = await admin.raw.PUT('/admin/v1/organizations/{id}/prices', { params: { path: { id: organizationId } }, body: { bvn: 100_000_000 } });
    expect(prices.response.status).toBe(200);
    const balance = await client.wallet();
    const refused = await client.verify('bvn', { bvn: '22126025250' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(InsufficientBalanceError);
    const insufficient = refused as InsufficientBalanceError;
    expect({ status: insufficient.status, code: insufficient.code, priceKobo: insufficient.priceKobo, balanceKobo: insufficient.balanceKobo }).toEqual({
      status: 402,
      code: 'insufficient_balance',
      priceKobo: 100_000_000,
      balanceKobo: balance.availableKobo,
    });
    expect(insufficient.reference).toMatch(/^vrf_/);
    expect(insufficient.shortfallKobo).toBe(100_000_000 - balance.availableKobo);

    const missing = await client.getVerification('vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ApiError);
    expect({ status: (missing as ApiError).status, code: (missing as ApiError).code }).toEqual({ status: 404, code: 'not_found' });
    expect((missing as ApiError).requestId).toEqual(expect.any(String));

    const invalid = (await client.verify('nin', { nin: '123' }).catch((error: unknown) => error)) as ApiError;
    expect(invalid.is('validation_failed') && invalid.details.fields).toEqual([{ field: 'nin', message: 'must be the 11-digit NIN' }]);
  });
});
