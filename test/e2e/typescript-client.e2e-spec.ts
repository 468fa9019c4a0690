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
    const problems = openApiValidator().check({ method: input.method, url: `${url.pathname}${url.search}`, status: response.status, contentType: response.headers.get('content-type'), text });
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
    const match = await client.verify('face_match', { image: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', bvn: '22126025250' });
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
    for (const deadline = Date.now() + 5_000; JSON.stringify(wallet) !== JSON.stringify(settled) && Date.now() < deadline; wallet = await client.wallet()) await new Promise((wake) => setTimeout(wake, 50));
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
    for (const deadline = Date.now() + 5_000; transactions.filter((item) => item.type === 'debit').length < 5 && Date.now() < deadline; transactions = await ledger()) await new Promise((wake) => setTimeout(wake, 50));
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
