import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

const ACCOUNT = '7753968106';

/** Account numbers are unique only within a bank: a data subject's bank account is its number at its bank. */
describe('A data subject found by bank account', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('finds and erases the checks of the number at the bank asked for, never those of the same number at another bank', async () => {
    const { id } = await createOrganization(app);
    const { key } = await issueKey(app, id);
    const headers = { 'x-service-key': key };
    const run = async (body: Record<string, string>) => {
      const response = await app.request('POST', '/v1/bank_account', { body, headers });
      expect(response.status).toBe(201);
      return response.body.data.reference as string;
    };
    const atGtBank = await run({ account_number: ACCOUNT, bank: 'GTBank' });
    const atWema = await run({ account_number: ACCOUNT, bank: '035' });

    const search = async (body: Record<string, string>) => {
      const response = await app.request('POST', '/v1/data-subjects/search', { body, headers });
      expect(response.status).toBe(200);
      return response.body.data.references as string[];
    };
    expect(await search({ account_number: ACCOUNT, bank: '058' })).toEqual([atGtBank]);
    expect(await search({ account_number: ACCOUNT, bank: 'Wema Bank' })).toEqual([atWema]);
    // Both checks named their bank: the number alone is no subject of either.
    expect(await search({ account_number: ACCOUNT })).toEqual([]);
    expect((await app.request('POST', '/v1/data-subjects/search', { body: { bank: '058' }, headers })).status).toBe(422);

    const erased = await app.request('POST', '/v1/data-subjects/erasure', { body: { account_number: ACCOUNT, bank: 'guaranty trust' }, headers });
    expect(erased.status).toBe(200);
    expect(erased.body.data).toEqual({ references: [atGtBank], pending: [] });
    const other = await app.request('GET', `/v1/verifications/${atWema}`, { headers });
    expect(other.body.data.personalDataErasedAt).toBeNull();
    expect(other.body.data.request).toEqual({ account_number: ACCOUNT, bank: '035' });
  });
});
