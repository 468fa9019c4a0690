import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { toAppend } from '../../src/common/event.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { allEvents, streamEvents } from '../support/event-store.js';
import { createOrganization, issueKey } from '../support/fixtures.js';

const AUDITOR_TOKEN = `auditor_${randomUUID()}`;
const PRICE_KOBO = 10_000;

describe('Wallet audit over HTTP', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: '0', AUDITOR_TOKEN } });
  });
  afterAll(async () => app?.close());

  const auditor = (method: string, path: string, body?: unknown) => app.request(method, path, { body, headers: { authorization: `Bearer ${AUDITOR_TOKEN}` } });
  const history = (organizationId: string, query = '', environment = 'test') => `/admin/v1/organizations/${organizationId}/wallets/${environment}/history${query}`;
  const fund = (organizationId: string, amountKobo: number, reference: string, environment = 'test') =>
    app.admin('POST', `/admin/v1/organizations/${organizationId}/wallets/${environment}/fundings`, { amountKobo, reference });

  describe('GET /admin/v1/organizations/{id}/wallets/{environment}/history', () => {
    it('replays the wallet from the log, oldest first, with the running figures, the balance and the verified chain, to admin and auditor alike', async () => {
      const { id } = await createOrganization(app, { scopes: ['nin'] });
      const { key } = await issueKey(app, id);
      await fund(id, 2 * PRICE_KOBO, 'INV-1');
      const found = await app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: { 'x-service-key': key } });
      expect(found.status).toBe(201);
      expect((await app.request('POST', '/v1/nin', { body: { nin: '12345678902' }, headers: { 'x-service-key': key } })).status).toBe(502);

      const response = await app.admin('GET', history(id));
      expect(response.status).toBe(200);
      expect(
        response.body.data.map((entry: Record<string, unknown>) => [entry.entryType, entry.amountKobo, entry.balanceKobo, entry.reservedKobo, entry.availableKobo, entry.chain]),
      ).toEqual([
        ['funding', 20_000, 20_000, 0, 20_000, 'hashed'],
        ['reservation', 10_000, 20_000, 10_000, 10_000, 'hashed'],
        ['debit', 10_000, 10_000, 0, 10_000, 'hashed'],
        ['reservation', 10_000, 10_000, 10_000, 0, 'hashed'],
        ['release', 10_000, 10_000, 0, 10_000, 'hashed'],
      ]);
      const [, reservation, debit] = response.body.data;
      expect(reservation).toMatchObject({ reference: found.body.data.reference, scope: 'nin', revision: '1', actor: expect.stringMatching(/^api_key:key_/) });
      expect(debit).toMatchObject({
        reference: found.body.data.reference,
        scope: 'nin',
        occurredAt: expect.stringMatching(/\+00:00$/),
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      const events = await streamEvents(app.eventStore, `wallet-${id}.test`);
      expect(response.body.data.map((entry: { position: string; eventId: string }) => [entry.position, entry.eventId])).toEqual(
        events.map((event) => [event.position.toString(), event.id]),
      );

      expect(response.body.meta).toMatchObject({
        total: 5,
        page: 1,
        pageSize: 20,
        totalPages: 1,
        asOf: null,
        lastRevision: '4',
        balance: { fundedKobo: 20_000, debitedKobo: 10_000, balanceKobo: 10_000, reservedKobo: 0, availableKobo: 10_000 },
        totals: {
          funding: { count: 1, amountKobo: 20_000 },
          reservation: { count: 2, amountKobo: 20_000 },
          debit: { count: 1, amountKobo: 10_000 },
          release: { count: 1, amountKobo: 10_000 },
        },
        openReservations: 0,
        chain: { verified: true, hashedEvents: 5, unhashedEvents: 0, hashedFromRevision: '0', firstBreak: null, breaks: 0 },
        ledgerProblems: [],
      });

      const asAuditor = await auditor('GET', history(id));
      expect(asAuditor.status).toBe(200);
      expect(asAuditor.body).toEqual(response.body);

      const page = await app.admin('GET', history(id, '?page=2&pageSize=2'));
      expect(page.body.data).toEqual(response.body.data.slice(2, 4));
      expect(page.body.meta).toMatchObject({ total: 5, page: 2, pageSize: 2, totalPages: 3 });
      expect((await app.admin('GET', history(id, '?pageSize=1000'))).body.meta.pageSize).toBe(100);
      expect((await app.admin('GET', history(id, '?page=9'))).body.data).toEqual([]);
    });

    it('answers as of a moment between two events', async () => {
      const { id } = await createOrganization(app);
      await fund(id, 700, 'INV-A');
      await new Promise((resolveWait) => setTimeout(resolveWait, 30));
      await fund(id, 300, 'INV-B');
      const [first, second] = await streamEvents(app.eventStore, `wallet-${id}.test`);
      const between = new Date((Date.parse(first.metadata.occurredAt as string) + Date.parse(second.metadata.occurredAt as string)) / 2);
      // Written at UTC-05:00, to show the offset is read.
      const asOf = new Date(between.getTime() - 5 * 3_600_000).toISOString().replace('Z', '-05:00');

      const response = await app.admin('GET', history(id, `?asOf=${encodeURIComponent(asOf)}`));
      expect(response.status).toBe(200);
      expect(response.body.data.map((entry: { reference: string }) => entry.reference)).toEqual(['INV-A']);
      expect(response.body.meta).toMatchObject({ total: 1, asOf: `${between.toISOString().slice(0, -1)}+00:00`, lastRevision: '0', balance: { balanceKobo: 700 } });
      const now = await app.admin('GET', history(id));
      expect(now.body.meta).toMatchObject({ total: 2, balance: { balanceKobo: 1_000 } });
    });

    it('starts the chain at the first hashed event when older events carry no hash', async () => {
      const { id } = await createOrganization(app);
      // A funding as it was written before the chain existed: straight to the stream, no link in its metadata.
      const legacy = toAppend(
        { type: 'WalletFunded', data: { schemaVersion: 1, organizationId: id, environment: 'test', fundingReference: 'before-the-chain', amountKobo: 500 } },
        randomUUID(),
        { correlationId: 'legacy', actor: { type: 'system', id: 'ledger' } },
        new Date(),
      );
      await app.eventStore.append(`wallet-${id}.test`, [legacy], { expectedRevision: 'no_stream' });
      await fund(id, 250, 'after-the-chain');

      const response = await app.admin('GET', history(id));
      expect(response.body.data.map((entry: { chain: string; hash: string | null }) => [entry.chain, entry.hash === null])).toEqual([
        ['unhashed', true],
        ['hashed', false],
      ]);
      expect(response.body.meta.chain).toMatchObject({ verified: true, hashedEvents: 1, unhashedEvents: 1, hashedFromRevision: '1' });
      expect(response.body.meta.balance.balanceKobo).toBe(750);
    });

    it('answers 422 listing every bad parameter, 404 for an unknown organization, 401 without a token', async () => {
      const { id } = await createOrganization(app);
      const invalid = await app.admin('GET', `/admin/v1/organizations/${id}/wallets/sandbox/history?asOf=2026-03-03T14:00:00&page=0&pageSize=x`);
      expect(invalid.status).toBe(422);
      expect(invalid.body.error.details.fields.map((field: { field: string }) => field.field).sort()).toEqual(['asOf', 'environment', 'page', 'pageSize']);
      for (const query of ['?asOf=yesterday', '?asOf=2026-02-30T00:00:00Z', '?page=1.5', '?pageSize=-1']) expect((await app.admin('GET', history(id, query))).status).toBe(422);
      expect((await app.admin('GET', history('org_01JD3Q9ZK8W6V2C4X7N5B0M1TR'))).status).toBe(404);
      expect((await app.request('GET', history(id))).status).toBe(401);
    });
  });

  describe('the auditor token', () => {
    it('is refused with 403 on every admin write route, and writes nothing', async () => {
      const { id } = await createOrganization(app);
      const { id: keyId } = await issueKey(app, id);
      const before = (await allEvents(app.eventStore)).length;
      // Every write route the application serves under /admin, from its own OpenAPI document, so a new one is covered too.
      const document = (await app.request('GET', '/docs/json')).body as { paths: Record<string, Record<string, unknown>> };
      const writes = Object.entries(document.paths)
        .filter(([path]) => path.startsWith('/admin/'))
        .flatMap(([path, operations]) =>
          Object.keys(operations)
            .filter((method) => ['post', 'put', 'patch', 'delete'].includes(method))
            .map((method) => ({ method: method.toUpperCase(), path })),
        );
      // The audit routes are documented too.
      expect(Object.keys(document.paths['/admin/v1/organizations/{id}/wallets/{environment}/history'] ?? {})).toEqual(['get']);
      expect(Object.keys(document.paths['/v1/wallet/transactions'] ?? {})).toEqual(['get']);
      expect(writes).toEqual(
        expect.arrayContaining([
          { method: 'POST', path: '/admin/v1/organizations' },
          { method: 'POST', path: '/admin/v1/organizations/{id}/wallets/{environment}/fundings' },
          { method: 'DELETE', path: '/admin/v1/keys/{keyId}' },
        ]),
      );
      for (const { method, path } of writes) {
        const concrete = path.replace('{id}', id).replace('{environment}', 'test').replace('{keyId}', keyId);
        const response = await auditor(method, concrete, { amountKobo: 1, reference: 'auditor', name: 'X', email: 'x@y.test', environment: 'test', scopes: ['nin'], reason: 'r' });
        expect({ method, path, status: response.status, code: response.body?.error?.code }).toEqual({ method, path, status: 403, code: 'read_only' });
      }
      expect((await allEvents(app.eventStore)).length).toBe(before);
      expect((await auditor('GET', `/admin/v1/organizations/${id}`)).status).toBe(200);
    });
  });

  describe('GET /v1/wallet/transactions', () => {
    it("pages the key's environment's ledger, most recent first", async () => {
      const { id } = await createOrganization(app, { approved: true, scopes: ['nin'] });
      const testKey = await issueKey(app, id, { environment: 'test' });
      const liveKey = await issueKey(app, id, { environment: 'live' });
      await fund(id, PRICE_KOBO, 'TEST-1');
      await fund(id, 5, 'LIVE-1', 'live');
      const check = await app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: { 'x-service-key': testKey.key } });
      expect(check.status).toBe(201);
      const reference = check.body.data.reference as string;

      const list = (query = '', key = testKey.key) => app.request('GET', `/v1/wallet/transactions${query}`, { headers: { 'x-service-key': key } });
      // The ledger is a read model: the debit reaches it a moment after the answer.
      let response = await list();
      for (let waited = 0; response.body.meta.total < 3 && waited < 5_000; waited += 20) {
        await new Promise((resolveWait) => setTimeout(resolveWait, 20));
        response = await list();
      }
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual([
        { type: 'debit', reference, scope: 'nin', amountKobo: PRICE_KOBO, balanceKobo: 0, reservedKobo: 0, availableKobo: 0, createdAt: expect.stringMatching(/\+00:00$/) },
        {
          type: 'reservation',
          reference,
          scope: 'nin',
          amountKobo: PRICE_KOBO,
          balanceKobo: PRICE_KOBO,
          reservedKobo: PRICE_KOBO,
          availableKobo: 0,
          createdAt: expect.any(String),
        },
        {
          type: 'funding',
          reference: 'TEST-1',
          scope: null,
          amountKobo: PRICE_KOBO,
          balanceKobo: PRICE_KOBO,
          reservedKobo: 0,
          availableKobo: PRICE_KOBO,
          createdAt: expect.any(String),
        },
      ]);
      expect(response.body.meta).toEqual({ total: 3, page: 1, pageSize: 20, totalPages: 1 });

      const second = await list('?page=2&pageSize=2');
      expect(second.body.data.map((line: { type: string }) => line.type)).toEqual(['funding']);
      expect(second.body.meta).toEqual({ total: 3, page: 2, pageSize: 2, totalPages: 2 });
      expect((await list('?pageSize=101')).body.meta.pageSize).toBe(100);
      expect((await list('', liveKey.key)).body.data.map((line: { reference: string }) => line.reference)).toEqual(['LIVE-1']);

      for (const query of ['?page=0', '?pageSize=0', '?page=x', '?pageSize=2.5']) {
        const invalid = await list(query);
        expect(invalid.status).toBe(422);
        expect(invalid.body).toMatchObject({ status: false, error: { code: 'validation_failed' } });
      }
      expect((await app.request('GET', '/v1/wallet/transactions')).status).toBe(401);
    });
  });
});
