import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EVENT_STORE, type EventStore } from '../../src/event-store/event-store.port.js';
import { signPortraitLink } from '../../src/portraits/portrait-links.js';
import { PortraitStore } from '../../src/portraits/portrait.store.js';
import { sandboxPortrait } from '../../src/providers/sandbox.provider.js';
import { SCOPES, type Scope } from '../../src/scopes/scopes.js';
import { scopeBody } from '../support/scope-bodies.js';
import { WalletLedger } from '../../src/wallets/wallet-ledger.port.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { allEvents } from '../support/event-store.js';
import { OPENAPI_FILE } from '../support/openapi-validator.js';
import { readFile } from 'node:fs/promises';
import { PG_POOL } from '../../src/database/pool.js';
import { IdGenerator } from '../../src/common/ids.js';
import { describeOnProject } from '../support/store-independent.js';

const PICKED: Record<string, (digit: string) => Record<string, string>> = {
  nin: (d) => ({ nin: `1234567890${d}` }),
  pnv: (d) => ({ phone: `0803123456${d}` }),
  vnin: (d) => ({ vnin: `AB12CD34EF56GH7${d}` }),
  bvn: (d) => ({ bvn: `2234567890${d}` }),
  pvc: (d) => ({ vin: `90F5B0407E29559388${d}` }),
  passport: (d) => ({ passport_number: `A1234567${d}` }),
  bank_account: (d) => ({ bank: '058', account_number: `012345678${d}` }),
  premium_bank_account: (d) => ({ account_number: `012345678${d}` }),
  phone: (d) => ({ phone: `+234803123456${d}` }),
  face_match: (d) => ({ image: sandboxPortrait('probe').toString('base64'), nin: `1234567890${d}` }),
};
/** The hand-picked bodies; a scope without them runs on its example (test/support/scope-bodies.ts). */
const VALID = (scope: string): ((digit: string) => Record<string, string>) => PICKED[scope] ?? ((digit) => scopeBody(scope as Scope, digit));
const FULL_FIELDS = [
  'reference',
  'scope',
  'category',
  'countryCode',
  'status',
  'request',
  'result',
  'errorMessage',
  'failureReason',
  'priceKobo',
  'charged',
  'createdAt',
  'personalDataErasedAt',
].sort();
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((wake) => setTimeout(wake, 20));
  }
}

/** A verification as read, without its portrait link (signed afresh on every read). */
const withoutLink = (data: { result: Record<string, unknown> }) => ({ ...data, result: { ...data.result, portraitUrl: undefined, portraitUrlExpiresAt: undefined } });

describe('Verifications API', () => {
  let app: TestApp;
  let store: EventStore;
  let org: { id: string };
  let key: string;

  const post = (scope: string, body: unknown, k: string = key): Promise<TestResponse> => app.request('POST', `/v1/${scope}`, { body, headers: { 'x-service-key': k } });
  const get = (path: string, k: string = key): Promise<TestResponse> => app.request('GET', path, { headers: { 'x-service-key': k } });
  /** The authoritative balance, from the wallet stream (the /v1/wallet read model may lag a moment). */
  const wallet = (organizationId: string = org.id) => app.app.get(WalletLedger).balance({ organizationId, environment: 'test' });
  const verificationEvents = async () => allEvents(store, { streamCategories: ['verification'] });
  const streamTypes = async (reference: string) => (await store.readStream(`verification-${reference}`, { maxCount: 10 })).map((event) => event.type);
  const walletTypesFor = async (reference: string, organizationId: string = org.id) =>
    (await store.readStream(`wallet-${organizationId}.test`, { maxCount: 10_000 })).filter((event) => event.data.reference === reference).map((event) => event.type);

  beforeAll(async () => {
    app = await startTestApp({ env: { PROVIDER_TIMEOUT_MS: '300' } });
    store = app.app.get<EventStore>(EVENT_STORE);
    org = await createOrganization(app);
    key = (await issueKey(app, org.id)).key;
  });
  afterAll(async () => app?.close());

  describe('Keys', () => {
    it('401 without a key, with an unknown key, and with a malformed one', async () => {
      const variants: Record<string, string>[] = [{}, { 'x-service-key': 'service_test_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ' }, { 'x-service-key': 'nonsense' }];
      for (const headers of variants) {
        const response = await app.request('POST', '/v1/nin', { body: VALID('nin')('5'), headers });
        expect(response.status).toBe(401);
        expect(response.body).toMatchObject({ status: false, error: { code: 'unauthenticated' } });
        expect((await app.request('GET', '/v1/verifications', { headers })).status).toBe(401);
      }
    });

    it('401 for a revoked key', async () => {
      const revoked = await issueKey(app, org.id);
      expect((await post('nin', VALID('nin')('1'), revoked.key)).status).toBe(201);
      expect((await app.admin('DELETE', `/admin/v1/keys/${revoked.id}`)).status).toBe(200);
      expect((await post('nin', VALID('nin')('1'), revoked.key)).status).toBe(401);
    });

    it('live keys need an approved organization; test keys work right after sign-up', async () => {
      const pending = await createOrganization(app);
      const live = await issueKey(app, pending.id, { environment: 'live' });
      const test = await issueKey(app, pending.id);
      const refused = await post('nin', VALID('nin')('5'), live.key);
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('organization_not_approved');
      expect((await post('nin', VALID('nin')('5'), test.key)).status).toBe(201);
    });

    it('a suspended organization gets 403 on checks on both environments, and still reads its verifications and wallet, and erases', async () => {
      const approved = await createOrganization(app, { approved: true });
      const live = await issueKey(app, approved.id, { environment: 'live' });
      const test = await issueKey(app, approved.id);
      const before = await post('nin', VALID('nin')('5'), test.key);
      expect(before.status).toBe(201);
      expect((await app.admin('POST', `/admin/v1/organizations/${approved.id}/suspend`, { reason: 'review' })).status).toBe(200);
      for (const k of [live.key, test.key]) {
        const response = await post('nin', VALID('nin')('5'), k);
        expect(response.status).toBe(403);
        expect(response.body.error.code).toBe('organization_suspended');
        expect((await app.request('POST', '/v1', { body: {}, headers: { 'x-service-key': k } })).body.error?.code).toBe('organization_suspended');
        for (const path of ['/v1/wallet', '/v1/wallet/transactions', '/v1/verifications']) {
          const read = await get(path, k);
          expect({ path, status: read.status, ok: read.body.status }).toEqual({ path, status: 200, ok: true });
        }
        const search = await app.request('POST', '/v1/data-subjects/search', { body: { nin: VALID('nin')('5').nin }, headers: { 'x-service-key': k } });
        expect(search.status).toBe(200);
      }
      const shown = await get(`/v1/verifications/${before.body.data.reference}`, test.key);
      expect(shown.status).toBe(200);
      expect(shown.body.data).toMatchObject({ reference: before.body.data.reference, status: 'found' });
      expect((await get('/v1/verifications', test.key)).body.data.map((item: { reference: string }) => item.reference)).toContain(before.body.data.reference);
      expect((await get('/v1/wallet', test.key)).body.data.balanceKobo).toBeGreaterThan(0);
      const erased = await app.request('POST', `/v1/verifications/${before.body.data.reference}/erasure`, { headers: { 'x-service-key': test.key } });
      expect(erased.status).toBe(200);
      // Reinstated, it runs checks again.
      expect((await app.admin('POST', `/admin/v1/organizations/${approved.id}/reinstate`)).status).toBe(200);
      expect((await post('nin', VALID('nin')('5'), test.key)).status).toBe(201);
    });

    it('a live key of an organization not yet approved reads its live wallet and list, and runs no check', async () => {
      const pending = await createOrganization(app);
      const live = await issueKey(app, pending.id, { environment: 'live' });
      expect((await get('/v1/wallet', live.key)).body).toMatchObject({ status: true, data: { environment: 'live', balanceKobo: 0 } });
      expect((await get('/v1/verifications', live.key)).body).toMatchObject({ status: true, data: [], meta: { total: 0 } });
      expect((await post('nin', VALID('nin')('5'), live.key)).body.error.code).toBe('organization_not_approved');
    });

    it('records the last use of a key', async () => {
      const used = await issueKey(app, org.id);
      await get('/v1/verifications', used.key);
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: app.database.url });
      await client.connect();
      try {
        const rows = await eventually(
          async () => (await client.query('select last_used_at from api_key_usage where key_id = $1', [used.id])).rows,
          (r) => r.length === 1,
        );
        expect(rows).toHaveLength(1);
      } finally {
        await client.end();
      }
    });
  });

  describe('Scopes and inputs (nothing is written for a rejected request)', () => {
    it('422 for no scope and for an unknown scope', async () => {
      const before = (await verificationEvents()).length;
      for (const path of ['/v1', '/v1/', '/v1/credit_score']) {
        const response = await app.request('POST', path, { body: {}, headers: { 'x-service-key': key } });
        expect(response.status).toBe(422);
        expect(response.body.error).toMatchObject({ code: 'validation_failed', details: { fields: [expect.objectContaining({ field: 'scope' })] } });
      }
      expect((await verificationEvents()).length).toBe(before);
    });

    it.each(SCOPES.map((scope) => [scope]))('%s: 422 listing every field error for an empty, wrong-typed or unknown-field body', async (scope) => {
      const before = (await verificationEvents()).length;
      const empty = await post(scope, {});
      expect(empty.status).toBe(422);
      expect(empty.body.error.details.fields.length).toBeGreaterThan(0);
      const wrong = await post(scope, { ...Object.fromEntries(Object.keys(VALID(scope)('5')).map((field) => [field, 12345])), surprise: 'x' });
      expect(wrong.status).toBe(422);
      const fields = wrong.body.error.details.fields.map((error: { field: string }) => error.field);
      expect(fields).toEqual(expect.arrayContaining(['surprise', ...Object.keys(VALID(scope)('5'))]));
      expect((await verificationEvents()).length).toBe(before);
    });

    it('403 for a scope not active for the organization or not allowed by the key, before anything is written', async () => {
      const narrow = await createOrganization(app, { scopes: ['bvn'] });
      const k = (await issueKey(app, narrow.id)).key;
      const keyLimited = (await issueKey(app, org.id, { scopes: ['bvn'] })).key;
      const before = (await verificationEvents()).length;
      const inactive = await post('nin', VALID('nin')('5'), k);
      expect(inactive.status).toBe(403);
      expect(inactive.body.error.code).toBe('scope_not_active');
      const notAllowed = await post('nin', VALID('nin')('5'), keyLimited);
      expect(notAllowed.status).toBe(403);
      expect(notAllowed.body.error.code).toBe('scope_not_allowed');
      expect((await post('bvn', VALID('bvn')('5'), keyLimited)).status).toBe(201);
      expect((await verificationEvents()).length).toBe(before + 2);
    });

    it('new organizations start with every scope active (the configured default)', async () => {
      const fresh = await createOrganization(app);
      const k = (await issueKey(app, fresh.id)).key;
      for (const scope of SCOPES) expect((await post(scope, VALID(scope)('1'), k)).status).toBe(201);
    });
  });

  describe('Running checks', () => {
    it.each(SCOPES.map((scope) => [scope]))('%s found: 201, the full verification, charged at its price', async (scope) => {
      const before = await wallet();
      const response = await post(scope, VALID(scope)('5'));
      expect(response.status).toBe(201);
      const data = response.body.data;
      expect(Object.keys(data).sort()).toEqual(FULL_FIELDS);
      expect(data).toMatchObject({ scope, category: 'kyc', countryCode: 'NG', status: 'found', errorMessage: null, failureReason: null, charged: true });
      expect(data.reference).toMatch(/^vrf_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(data.createdAt).toMatch(ISO_WITH_OFFSET);
      expect(Object.keys(data.result).length).toBeGreaterThan(0);
      expect(JSON.stringify(response.body)).not.toMatch(/iVBORw0KGgo/); // no PNG bytes, base64 or otherwise
      expect(await streamTypes(data.reference)).toEqual(['VerificationRequested', 'VerificationCompleted']);
      expect(await walletTypesFor(data.reference)).toEqual(['WalletFundsReserved', 'WalletDebited']);
      const after = await wallet();
      expect(after.balanceKobo).toBe(before.balanceKobo - data.priceKobo);
      expect(after.reservedKobo).toBe(0);
    });

    it('not_found: 201, charged, empty result', async () => {
      const response = await post('bvn', VALID('bvn')('1'));
      expect(response.status).toBe(201);
      expect(response.body.data).toMatchObject({ status: 'not_found', charged: true, result: {}, errorMessage: null, priceKobo: 10_000 });
      expect(await walletTypesFor(response.body.data.reference)).toEqual(['WalletFundsReserved', 'WalletDebited']);
    });

    it('echoes the request; face_match echoes a digest of the image, never the image', async () => {
      expect((await post('bank_account', VALID('bank_account')('5'))).body.data.request).toEqual(VALID('bank_account')('5'));
      const face = await post('face_match', VALID('face_match')('4'));
      expect(face.status).toBe(201);
      expect(face.body.data.result).toMatchObject({ match: false, confidence: expect.any(Number) });
      expect(face.body.data.request.image).toEqual({ contentType: 'image/png', sizeBytes: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const events = await store.readStream(`verification-${face.body.data.reference}`, { maxCount: 10 });
      expect(JSON.stringify(events.map((event) => event.data))).not.toContain(VALID('face_match')('4').image.slice(0, 50));
    });

    it.each([
      ['2', 'provider_error'],
      ['3', 'provider_timeout'],
    ])('digit %s: 502 with the reference and the reason (%s), failed and uncharged, reservation released; the verification keeps the reason', async (digit, reason) => {
      const before = await wallet();
      const response = await post('nin', VALID('nin')(digit));
      expect(response.status).toBe(502);
      expect(response.body).toMatchObject({ status: false, error: { code: 'provider_failed', details: { reference: expect.stringMatching(/^vrf_/), failureReason: reason } } });
      const reference = response.body.error.details.reference;
      expect(await streamTypes(reference)).toEqual(['VerificationRequested', 'VerificationFailed']);
      expect(await walletTypesFor(reference)).toEqual(['WalletFundsReserved', 'WalletReservationReleased']);
      const got = await get(`/v1/verifications/${reference}`);
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({ status: 'failed', charged: false, result: {}, errorMessage: expect.any(String), failureReason: reason });
      // From the read model once it has the row, and from the stream for a row projected before it kept reasons.
      const pool = app.app.get<symbol, import('pg').Pool>((await import('../../src/database/pool.js')).PG_POOL);
      const row = await eventually(
        async () => (await pool.query('select status, reason_code from verifications where reference = $1', [reference])).rows[0],
        (found) => found?.status === 'failed',
      );
      expect(row).toEqual({ status: 'failed', reason_code: reason });
      expect((await get(`/v1/verifications/${reference}`)).body.data.failureReason).toBe(reason);
      await pool.query('update verifications set reason_code = null where reference = $1', [reference]);
      expect((await get(`/v1/verifications/${reference}`)).body.data.failureReason).toBe(reason);
      const after = await wallet();
      expect(after).toEqual(before);
    });

    it('every call is a new check with a new reference, each charged', async () => {
      const a = await post('nin', VALID('nin')('5'));
      const b = await post('nin', VALID('nin')('5'));
      expect(a.body.data.reference).not.toBe(b.body.data.reference);
      // Same record; each check stores its own copy of the portrait, so only the links differ.
      const withoutLinks = (result: Record<string, unknown>) => ({ ...result, portraitUrl: undefined, portraitUrlExpiresAt: undefined });
      expect(withoutLinks(a.body.data.result)).toEqual(withoutLinks(b.body.data.result));
      expect(a.body.data.result.portraitUrl).not.toBe(b.body.data.result.portraitUrl);
      expect([a.body.data.charged, b.body.data.charged]).toEqual([true, true]);
    });

    it('402 when the balance is short: no provider call, recorded as failed and uncharged, details carry reference, price and balance', async () => {
      const poor = await createOrganization(app);
      const k = (await issueKey(app, poor.id)).key;
      const balance = (await wallet(poor.id)).availableKobo;
      // Spend everything but 500 kobo with a per-organization price.
      expect((await app.admin('PUT', `/admin/v1/organizations/${poor.id}/prices`, { nin: balance - 500, bvn: 1_000 })).status).toBe(200);
      const spend = await post('nin', VALID('nin')('5'), k);
      expect(spend.status).toBe(201);
      expect(spend.body.data.priceKobo).toBe(balance - 500);
      const refused = await post('bvn', VALID('bvn')('5'), k);
      expect(refused.status).toBe(402);
      expect(refused.body).toEqual({
        status: false,
        error: { code: 'insufficient_balance', message: expect.any(String), details: { reference: expect.stringMatching(/^vrf_/), priceKobo: 1_000, balanceKobo: 500 } },
      });
      const reference = refused.body.error.details.reference;
      expect(await streamTypes(reference)).toEqual(['VerificationRequested', 'VerificationRejected']);
      expect(await walletTypesFor(reference, poor.id)).toEqual([]);
      const got = await get(`/v1/verifications/${reference}`, k);
      expect(got.body.data).toMatchObject({
        status: 'failed',
        charged: false,
        priceKobo: 1_000,
        errorMessage: expect.stringContaining('balance'),
        failureReason: 'insufficient_balance',
      });
      expect(await wallet(poor.id)).toEqual({ balanceKobo: 500, reservedKobo: 0, availableKobo: 500 });
    });
  });

  it('a check given a reference already taken: 409, no key of its own stored or kept, the first verification reads as before', async () => {
    const pool = app.app.get<symbol, import('pg').Pool>(PG_POOL);
    const first = await post('nin', VALID('nin')('5'));
    expect(first.status).toBe(201);
    const { reference } = first.body.data;
    const keyRow = async () => (await pool.query('select wrapped_key, xmin::text from verification_keys where reference = $1', [reference])).rows;
    const keyBefore = await keyRow();
    const ids = app.app.get(IdGenerator);
    const original = ids.reference.bind(ids);
    ids.reference = () => reference;
    let again: Response;
    try {
      // Not through app.request: a reference taken twice cannot happen with generated references, so the API document has no 409 for it.
      again = await fetch(`${app.baseUrl}/v1/nin`, {
        method: 'POST',
        headers: { 'x-service-key': key, 'content-type': 'application/json' },
        body: JSON.stringify(VALID('nin')('4')),
      });
    } finally {
      ids.reference = original;
    }
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('verification_exists');
    expect(await keyRow()).toEqual(keyBefore);
    // Read under the first key, not one made for the refused check (this process would have cached it).
    const read = await get(`/v1/verifications/${reference}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ personalDataErasedAt: null, request: { nin: VALID('nin')('5').nin } });
  });

  describeOnProject('postgres', 'The transactions of a check in the event log', 'EventStoreDB has no transaction across streams: each write is an append of its own', () => {
    /**
     * Every row a check wrote, grouped by the transaction that wrote it, in log order: its events on
     * its verification stream and its wallet (by type), its data key (`key`) and its blind-index
     * tokens (`tokens`, once per transaction).
     */
    async function transactions(reference: string, organizationId: string = org.id): Promise<string[][]> {
      const pool = app.app.get<symbol, import('pg').Pool>(PG_POOL);
      const { rows } = await pool.query<{ type: string; xmin: string }>(
        `select type, xmin::text from events where stream_id = $1 or (stream_id = $2 and data->>'reference' = $3) order by position`,
        [`verification-${reference}`, `wallet-${organizationId}.test`, reference],
      );
      const byTransaction = new Map<string, string[]>();
      for (const row of rows) byTransaction.set(row.xmin, [...(byTransaction.get(row.xmin) ?? []), row.type]);
      const { rows: keyRows } = await pool.query<{ kind: string; xmin: string }>(
        `select 'key' as kind, xmin::text from verification_keys where reference = $1
         union all select distinct 'tokens', xmin::text from verification_subjects where reference = $1`,
        [reference],
      );
      // A key or token row written in a transaction of no event of the check is a transaction of its own.
      for (const row of keyRows) byTransaction.set(row.xmin, [...(byTransaction.get(row.xmin) ?? []), row.kind]);
      return [...byTransaction.values()];
    }

    it('a charged check: the request with its reservation, key and tokens, then the completion with its capture and the tokens of its result', async () => {
      const response = await post('nin', VALID('nin')('5'));
      expect(response.status).toBe(201);
      expect(await transactions(response.body.data.reference)).toEqual([
        ['VerificationRequested', 'WalletFundsReserved', 'key', 'tokens'],
        ['VerificationCompleted', 'WalletDebited', 'tokens'],
      ]);
    });

    it('a failed check: the request with its reservation, key and tokens, then the failure with the release', async () => {
      const response = await post('nin', VALID('nin')('2'));
      expect(response.status).toBe(502);
      expect(await transactions(response.body.error.details.reference)).toEqual([
        ['VerificationRequested', 'WalletFundsReserved', 'key', 'tokens'],
        ['VerificationFailed', 'WalletReservationReleased'],
      ]);
    });

    it('a check commits twice on an idle database: no other transaction writes a row of the event log or the key tables', async () => {
      const pool = app.app.get<symbol, import('pg').Pool>(PG_POOL);
      // xids are the cluster's (other databases share them): count this database's writing transactions by their rows instead.
      const written = async () =>
        (await pool.query<{ xmin: string }>(`select xmin::text from events union select xmin::text from verification_keys union select xmin::text from verification_subjects`)).rows
          .length;
      const before = await written();
      const response = await post('nin', VALID('nin')('5'));
      expect(response.status).toBe(201);
      expect((await written()) - before).toBe(2);
    });

    it('a check refused for its balance: the request with its rejection, one transaction, nothing on the wallet', async () => {
      const poor = await createOrganization(app);
      const k = (await issueKey(app, poor.id)).key;
      const balance = (await wallet(poor.id)).availableKobo;
      expect((await app.admin('PUT', `/admin/v1/organizations/${poor.id}/prices`, { nin: balance + 1 })).status).toBe(200);
      const refused = await post('nin', VALID('nin')('5'), k);
      expect(refused.status).toBe(402);
      expect(await transactions(refused.body.error.details.reference, poor.id)).toEqual([['VerificationRequested', 'VerificationRejected', 'key', 'tokens']]);
    });
  });

  describe('Portraits', () => {
    it('nin, pnv and bvn results carry a signed, expiring link that serves the image to its holder only', async () => {
      for (const scope of ['nin', 'pnv', 'bvn']) {
        const response = await post(scope, VALID(scope)('7'));
        const { portraitUrl, portraitUrlExpiresAt } = response.body.data.result;
        expect(portraitUrl).toMatch(/\/v1\/portraits\/prt_[0-9a-f]{16}_[0-9a-f]+_[0-9a-f]+\?expires=\d+&signature=/);
        expect(portraitUrlExpiresAt).toMatch(/\+00:00$/);
        expect(response.body.data.result.portraitId).toBeUndefined();
        const url = new URL(portraitUrl);
        const image = await fetch(`${app.baseUrl}${url.pathname}${url.search}`);
        expect(image.status).toBe(200);
        expect(image.headers.get('content-type')).toBe('image/png');
        expect(
          Buffer.from(await image.arrayBuffer())
            .subarray(1, 4)
            .toString(),
        ).toBe('PNG');
        const tampered = await fetch(`${app.baseUrl}${url.pathname}?expires=${Number(url.searchParams.get('expires')) + 60}&signature=${url.searchParams.get('signature')}`);
        expect(tampered.status).toBe(403);
      }
      expect((await post('vnin', VALID('vnin')('7'))).body.data.result.portraitUrl).toBeUndefined();
    });

    it('an expired link is refused; one whose expiry was altered is invalid', async () => {
      const response = await post('nin', VALID('nin')('8'));
      const url = new URL(response.body.data.result.portraitUrl);
      // The link the service signed an hour ago, valid for 15 minutes.
      const old = signPortraitLink(app.app.get(PortraitStore).linkSecret, url.pathname.split('/').pop() ?? '', new Date(Date.now() - 3_600_000), 900);
      const expired = await fetch(`${app.baseUrl}${old.path}`);
      expect(expired.status).toBe(403);
      expect(((await expired.json()) as { error: { code: string } }).error.code).toBe('portrait_link_expired');
      const altered = await fetch(`${app.baseUrl}${url.pathname}?expires=1000&signature=${url.searchParams.get('signature')}`);
      expect(altered.status).toBe(403);
      expect(((await altered.json()) as { error: { code: string } }).error.code).toBe('portrait_link_invalid');
    });

    it('stores the portrait encrypted: the file does not contain the image', async () => {
      const { readdir, readFile } = await import('node:fs/promises');
      const files = await readdir(app.runtime.config.portraits.directory);
      expect(files.length).toBeGreaterThan(0);
      const content = await readFile(`${app.runtime.config.portraits.directory}/${files[0]}`);
      expect(content.includes(Buffer.from('IHDR'))).toBe(false);
    });
  });

  describe('Reading verifications', () => {
    it('GET by reference right after the POST: identical fields, never charged', async () => {
      const run = await post('bvn', VALID('bvn')('6'));
      const before = await wallet();
      const got = await get(`/v1/verifications/${run.body.data.reference}`);
      expect(got.status).toBe(200);
      const { result: runResult, ...runRest } = run.body.data;
      const { result: gotResult, ...gotRest } = got.body.data;
      expect(gotRest).toEqual(runRest);
      // Portrait links are signed afresh on every read; the rest of the result is identical.
      expect({ ...gotResult, portraitUrl: undefined, portraitUrlExpiresAt: undefined }).toEqual({ ...runResult, portraitUrl: undefined, portraitUrlExpiresAt: undefined });
      expect((await wallet()).balanceKobo).toBe(before.balanceKobo);
      // And the same again once the read model has caught up (served from the row, not the stream).
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: app.database.url });
      await client.connect();
      try {
        const rows = await eventually(
          async () => (await client.query('select status from verifications where reference = $1', [run.body.data.reference])).rows,
          (r) => r[0]?.status === 'found',
        );
        expect(rows[0].status).toBe('found');
      } finally {
        await client.end();
      }
      const later = await get(`/v1/verifications/${run.body.data.reference}`);
      const { result: laterResult, ...laterRest } = later.body.data;
      expect(laterRest).toEqual(runRest);
      expect(laterResult.portraitUrl).toMatch(/\/v1\/portraits\//);
    });

    it("404 for an unknown reference and for another organization's", async () => {
      const run = await post('nin', VALID('nin')('5'));
      const other = await createOrganization(app);
      const otherKey = (await issueKey(app, other.id)).key;
      for (const path of [`/v1/verifications/${run.body.data.reference}`, '/v1/verifications/vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR', '/v1/verifications/nonsense']) {
        const response = await get(path, otherKey);
        expect(response.status).toBe(404);
        expect(response.body.error.code).toBe('not_found');
      }
    });

    it("reads arriving together (sharing statements under load) each get their own verification, and another organization's reads get 404", async () => {
      const runs = await Promise.all(['5', '6', '7', '8'].map((digit) => post('nin', VALID('nin')(digit))));
      for (const run of runs) expect(run.status).toBe(201);
      const references: string[] = runs.map((run) => run.body.data.reference);
      const other = await createOrganization(app);
      const otherKey = (await issueKey(app, other.id)).key;
      const alone = new Map<string, unknown>();
      for (const reference of references) alone.set(reference, withoutLink((await get(`/v1/verifications/${reference}`)).body.data));
      const reads = Array.from({ length: 60 }, (_, i) => ({ reference: references[i % references.length], own: i % 3 !== 0 }));
      const answers = await Promise.all(reads.map(({ reference, own }) => get(`/v1/verifications/${reference}`, own ? key : otherKey)));
      answers.forEach((answer, i) => {
        if (reads[i].own) {
          expect(answer.status).toBe(200);
          expect(withoutLink(answer.body.data)).toEqual(alone.get(reads[i].reference));
        } else {
          expect(answer.status).toBe(404);
        }
      });
    });

    describe('the list', () => {
      let listKey: string;
      let liveKey: string;
      const references: string[] = [];

      beforeAll(async () => {
        const listed = await createOrganization(app, { approved: true });
        listKey = (await issueKey(app, listed.id)).key;
        liveKey = (await issueKey(app, listed.id, { environment: 'live' })).key;
        for (const [scope, digit] of [
          ['nin', '5'],
          ['nin', '1'],
          ['bvn', '5'],
          ['nin', '2'],
          ['phone', '5'],
        ] as const) {
          const response = await post(scope, VALID(scope)(digit), listKey);
          references.push(response.body.data?.reference ?? response.body.error.details.reference);
        }
        await eventually(
          () => get('/v1/verifications', listKey),
          (r) => r.body.meta?.total === 5 && r.body.data.every((item: { status: string }) => item.status !== 'pending'),
        );
      });

      it('most recent first, with the summary fields and default paging meta', async () => {
        const response = await get('/v1/verifications', listKey);
        expect(response.status).toBe(200);
        expect(response.body.meta).toEqual({ total: 5, page: 1, pageSize: 20, totalPages: 1 });
        expect(response.body.data.map((item: { reference: string }) => item.reference)).toEqual([...references].reverse());
        expect(Object.keys(response.body.data[0]).sort()).toEqual(['charged', 'createdAt', 'priceKobo', 'reference', 'scope', 'status']);
        expect(response.body.data[0].createdAt).toMatch(ISO_WITH_OFFSET);
      });

      it('pages, caps pageSize at 100 and refuses bad paging with 422', async () => {
        const page2 = await get('/v1/verifications?page=2&pageSize=2', listKey);
        expect(page2.body.meta).toEqual({ total: 5, page: 2, pageSize: 2, totalPages: 3 });
        expect(page2.body.data.map((item: { reference: string }) => item.reference)).toEqual([references[2], references[1]]);
        expect((await get('/v1/verifications?pageSize=500', listKey)).body.meta.pageSize).toBe(100);
        // Past the last page: no rows, the total still there.
        const beyond = await get('/v1/verifications?page=9&pageSize=2', listKey);
        expect(beyond.body).toEqual({ status: true, data: [], meta: { total: 5, page: 9, pageSize: 2, totalPages: 3 } });
        for (const query of ['page=0', 'page=-1', 'page=1.5', 'page=abc', 'pageSize=0', 'pageSize=x', 'status=done', 'scope=credit']) {
          const response = await get(`/v1/verifications?${query}`, listKey);
          expect(response.status).toBe(422);
        }
      });

      it('filters by scope and status', async () => {
        const nin = await get('/v1/verifications?scope=nin', listKey);
        expect(nin.body.meta.total).toBe(3);
        const failed = await get('/v1/verifications?status=failed', listKey);
        expect(failed.body.data.map((item: { reference: string }) => item.reference)).toEqual([references[3]]);
        const notFoundNin = await get('/v1/verifications?status=not_found&scope=nin', listKey);
        expect(notFoundNin.body.meta).toMatchObject({ total: 1, totalPages: 1 });
      });

      it('pages asked for together (sharing statements under load) each get the answer they get alone, across organizations, environments, filters and pages', async () => {
        const keys = [listKey, liveKey];
        for (const digits of [
          ['5', '6', '1', '7', '2', '8'],
          ['7', '5', '4'],
        ]) {
          const other = await createOrganization(app);
          const otherKey = (await issueKey(app, other.id)).key;
          for (const [n, digit] of digits.entries()) await post(n % 2 === 0 ? 'nin' : 'bvn', VALID(n % 2 === 0 ? 'nin' : 'bvn')(digit), otherKey);
          await eventually(
            () => get('/v1/verifications', otherKey),
            (r) => r.body.meta?.total === digits.length && r.body.data.every((item: { status: string }) => item.status !== 'pending'),
          );
          keys.push(otherKey);
        }
        const queries = [
          '',
          '?page=2&pageSize=2',
          '?scope=nin',
          '?status=found',
          '?status=not_found&scope=nin',
          '?pageSize=1&page=3',
          '?page=9&pageSize=2',
          '?scope=bvn&pageSize=1&page=2',
          '?status=failed&pageSize=100',
        ];
        const asks = keys.flatMap((k) => queries.map((query) => ({ k, path: `/v1/verifications${query}` })));
        const alone = new Map<string, unknown>();
        for (const { k, path } of asks) {
          const response = await get(path, k);
          expect(response.status).toBe(200);
          alone.set(`${k} ${path}`, response.body);
        }
        // Most answers have rows: the comparison below is not between empty pages.
        expect([...alone.values()].filter((body) => (body as { data: unknown[] }).data.length > 0).length).toBeGreaterThan(asks.length / 2);

        // The pages of each shared statement, counted as the service sends them (the pool itself is untouched).
        const pool = app.app.get<{ query: (...args: unknown[]) => unknown }>(PG_POOL);
        const query = pool.query;
        const sharedPages: number[] = [];
        pool.query = function (this: unknown, ...args: unknown[]) {
          const statement = args[0] as { name?: unknown; values?: unknown[][] } | undefined;
          if (typeof statement?.name === 'string' && statement.name.startsWith('list_verifications_shared')) sharedPages.push(statement.values?.[0]?.length ?? 0);
          return query.apply(this, args);
        };
        // The totals' table locked meanwhile, as a slow statement would hold it: the first pages of each
        // filter combination wait for it in PostgreSQL, and the pages asked for meanwhile gather behind them.
        const { default: pg } = await import('pg');
        const locker = new pg.Client({ connectionString: app.database.url });
        await locker.connect();
        try {
          await locker.query('begin');
          await locker.query('lock table verification_counts in access exclusive mode');
          const together = [...asks, ...asks, ...asks].reverse();
          const answering = Promise.all(together.map(({ k, path }) => get(path, k)));
          await eventually(
            async () =>
              (await locker.query<{ waiting: number }>(`select count(*)::int as waiting from pg_locks where not granted and relation = 'verification_counts'::regclass`)).rows[0]
                .waiting,
            (waiting) => waiting >= 2,
          );
          await new Promise((wake) => setTimeout(wake, 500));
          await locker.query('commit');
          const answers = await answering;
          answers.forEach((answer, n) => {
            expect(answer.status).toBe(200);
            expect(answer.body).toEqual(alone.get(`${together[n].k} ${together[n].path}`));
          });
          expect(sharedPages.reduce((sum, pages) => sum + pages, 0)).toBeGreaterThan(together.length / 2);
        } finally {
          pool.query = query;
          await locker.end();
        }
      });

      it('a live key sees no test verifications, by list or by reference', async () => {
        expect((await get('/v1/verifications', liveKey)).body.meta).toEqual({ total: 0, page: 1, pageSize: 20, totalPages: 0 });
        expect((await get(`/v1/verifications/${references[0]}`, liveKey)).status).toBe(404);
      });

      it('off the embedded default, a live key with no upstream configured gets 403 naming the missing configuration, and nothing is written', async () => {
        const before = (await verificationEvents()).length;
        const live = await post('nin', VALID('nin')('5'), liveKey);
        expect(live.status).toBe(403);
        expect(live.body.error).toMatchObject({ code: 'provider_not_configured', details: { missing: 'providers.live' } });
        expect((await verificationEvents()).length).toBe(before);
      });
    });
  });

  describe('OpenAPI', () => {
    it('serves the document at /docs/json, as committed in openapi/openapi.json, with an operation per scope, and a UI at /docs', async () => {
      const response = await app.request('GET', '/docs/json');
      expect(response.status).toBe(200);
      expect(response.body).toEqual(JSON.parse(await readFile(OPENAPI_FILE, 'utf8')));
      const paths = response.body.paths;
      expect(Object.keys(paths)).toEqual(
        expect.arrayContaining([...SCOPES.map((scope) => `/v1/${scope}`), '/v1/verifications', '/v1/verifications/{reference}', '/v1/portraits/{id}']),
      );
      expect(Object.keys(paths['/v1/nin'].post.responses)).toEqual(expect.arrayContaining(['201', '401', '402', '403', '422', '429', '502', '503']));
      const ui = await app.request('GET', '/docs');
      expect(ui.status).toBe(200);
    });
  });
});
