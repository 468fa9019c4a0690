import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { EventStoreDBClient, StreamNotFoundError } from '@eventstore/db-client';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { testEventStoreEnv } from '../support/event-store.js';
import { describeOnProject } from '../support/store-independent.js';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { IdGenerator } from '../../src/common/ids.js';
import { streams } from '../../src/common/streams.js';
import { EVENT_STORE, type EventStore } from '../../src/event-store/event-store.port.js';
import { OrganizationStore } from '../../src/organizations/organization.store.js';
import { SandboxCreditSweep } from '../../src/organizations/sandbox-credit.js';
import { READY_MADE_PEOPLE, sandboxPerson } from '../../src/scopes/sandbox-world.js';
import { SANDBOX_CREDIT_REFERENCE } from '../../src/wallets/wallet.events.js';

const SANDBOX_CREDIT_KOBO = 250_000;

describe('Wallets: admin funding and balances', () => {
  let app: TestApp;
  let organizationId: string;
  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: String(SANDBOX_CREDIT_KOBO) } });
    organizationId = (await createOrganization(app)).id;
  });
  afterAll(async () => app?.close());

  const wallet = (environment: string, id = organizationId) => `/admin/v1/organizations/${id}/wallets/${environment}`;

  it('a test wallet starts with the sandbox credit, a live wallet at zero', async () => {
    const test = await app.admin('GET', wallet('test'));
    expect(test.status).toBe(200);
    expect(test.body).toEqual({
      status: true,
      data: { organizationId, environment: 'test', balanceKobo: SANDBOX_CREDIT_KOBO, reservedKobo: 0, availableKobo: SANDBOX_CREDIT_KOBO },
    });
    const live = await app.admin('GET', wallet('live'));
    expect(live.body.data).toEqual({ organizationId, environment: 'live', balanceKobo: 0, reservedKobo: 0, availableKobo: 0 });
  });

  it('funds once per reference: 201 with the wallet, then 200 with it unchanged, and 409 for the reference with another amount', async () => {
    const first = await app.admin('POST', `${wallet('live')}/fundings`, { amountKobo: 5_000_000, reference: 'bank:TRX-2026.11-0001' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ status: true, data: { organizationId, environment: 'live', balanceKobo: 5_000_000, reservedKobo: 0, availableKobo: 5_000_000 } });

    const again = await app.admin('POST', `${wallet('live')}/fundings`, { amountKobo: 5_000_000, reference: 'bank:TRX-2026.11-0001' });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);

    const reused = await app.admin('POST', `${wallet('live')}/fundings`, { amountKobo: 7_000_000, reference: 'bank:TRX-2026.11-0001' });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toMatchObject({
      code: 'funding_reference_conflict',
      details: { reference: 'bank:TRX-2026.11-0001', existingAmountKobo: 5_000_000, requestedAmountKobo: 7_000_000 },
    });

    // The read model has caught up by the time the funding answered.
    expect((await app.admin('GET', wallet('live'))).body.data).toEqual(first.body.data);

    const second = await app.admin('POST', `${wallet('live')}/fundings`, { amountKobo: 1, reference: 'bank:TRX-2026.11-0002' });
    expect(second.status).toBe(201);
    expect(second.body.data.balanceKobo).toBe(5_000_001);
    expect((await app.admin('GET', wallet('live'))).body.data.availableKobo).toBe(5_000_001);
  });

  it('writes one ledger line per funding, with the running balance', async () => {
    const organization = (await createOrganization(app)).id;
    await app.admin('POST', `${wallet('test', organization)}/fundings`, { amountKobo: 100, reference: 'a' });
    await app.admin('POST', `${wallet('test', organization)}/fundings`, { amountKobo: 100, reference: 'a' });
    await app.admin('POST', `${wallet('test', organization)}/fundings`, { amountKobo: 40, reference: 'b' });
    const pool = app.app.get<symbol, import('pg').Pool>((await import('../../src/database/pool.js')).PG_POOL);
    const { rows } = await pool.query('select entry_type, reference, balance_kobo from wallet_ledger where organization_id = $1 order by event_position', [organization]);
    expect(rows).toEqual([
      { entry_type: 'funding', reference: 'sandbox-credit', balance_kobo: String(SANDBOX_CREDIT_KOBO) },
      { entry_type: 'funding', reference: 'a', balance_kobo: String(SANDBOX_CREDIT_KOBO + 100) },
      { entry_type: 'funding', reference: 'b', balance_kobo: String(SANDBOX_CREDIT_KOBO + 140) },
    ]);
  });

  it('answers 404 for an unknown organization, funding nothing', async () => {
    const unknown = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1ZZ';
    const funding = await app.admin('POST', `${wallet('test', unknown)}/fundings`, { amountKobo: 100, reference: 'r1' });
    expect(funding.status).toBe(404);
    expect(funding.body).toMatchObject({ status: false, error: { code: 'not_found' } });
    expect((await app.admin('GET', wallet('test', unknown))).status).toBe(404);
    expect((await app.admin('GET', wallet('test', 'x'.repeat(101)))).status).toBe(404);
  });

  it('answers 422 listing every field error', async () => {
    const response = await app.admin('POST', `${wallet('sandbox')}/fundings`, { amountKobo: 1.5, reference: 'has spaces' });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('validation_failed');
    const fields = (response.body.error.details.fields as { field: string }[]).map((error) => error.field);
    expect(new Set(fields)).toEqual(new Set(['environment', 'amountKobo', 'reference']));

    for (const body of [
      { amountKobo: 0, reference: 'r' },
      { amountKobo: -1, reference: 'r' },
      { amountKobo: 10_000_000_001, reference: 'r' },
      { amountKobo: '100', reference: 'r' },
    ]) {
      const invalid = await app.admin('POST', `${wallet('test')}/fundings`, body);
      expect(invalid.status).toBe(422);
      expect(new Set(invalid.body.error.details.fields.map((error: { field: string }) => error.field))).toEqual(new Set(['amountKobo']));
    }
    for (const reference of ['', 'r'.repeat(101), 'é', 'a/b', 42]) {
      const invalid = await app.admin('POST', `${wallet('test')}/fundings`, { amountKobo: 1, reference });
      expect(invalid.status).toBe(422);
      expect(invalid.body.error.details.fields.map((error: { field: string }) => error.field)).toContain('reference');
    }
    const missing = await app.admin('POST', `${wallet('test')}/fundings`, {});
    expect(new Set(missing.body.error.details.fields.map((error: { field: string }) => error.field))).toEqual(new Set(['amountKobo', 'reference']));

    expect((await app.admin('GET', wallet('sandbox'))).status).toBe(422);
    // Nothing was credited by any of them.
    expect((await app.admin('GET', wallet('test'))).body.data.balanceKobo).toBe(SANDBOX_CREDIT_KOBO);
  });

  it('credits the sandbox later when registration stopped between the organization and its credit, once', async () => {
    // The state a registration leaves when the process dies (or the store fails) after writing the
    // organization and before its credit: the organization stream alone.
    const organizations = app.app.get(OrganizationStore);
    const id = app.app.get(IdGenerator).organizationId();
    const context = { correlationId: 'test-interrupted-registration', actor: SYSTEM_ACTOR };
    const command = {
      type: 'RegisterOrganization',
      organizationId: id,
      name: 'Interrupted',
      email: 'ops@interrupted.test',
      activeScopes: ['nin'],
      sandboxCreditKobo: SANDBOX_CREDIT_KOBO,
    } as const;
    await organizations.execute(id, command, context, { projectionWaitMs: 10_000 });
    expect((await app.admin('GET', wallet('test', id))).body.data.balanceKobo).toBe(0);

    const sweep = app.app.get(SandboxCreditSweep);
    // Not before the recovery deadline: the registration may still be writing it.
    expect(await sweep.runOnce(new Date())).toMatchObject({ credited: 0 });
    const later = () => new Date(Date.now() + 3_600_000);
    expect(await sweep.runOnce(later())).toMatchObject({ credited: 1 });
    await new Promise((resolveWait) => setTimeout(resolveWait, 500));
    expect(await sweep.runOnce(later())).toMatchObject({ credited: 0 });
    expect(await sweep.credit(id, context)).toMatchObject({ outcome: 'already_credited' });

    expect((await app.admin('GET', wallet('test', id))).body.data).toMatchObject({ balanceKobo: SANDBOX_CREDIT_KOBO, availableKobo: SANDBOX_CREDIT_KOBO });
    const events = await app.app.get<symbol, EventStore>(EVENT_STORE).readStream(streams.wallet(id, 'test'), { maxCount: 10 });
    expect(events.map((event) => [event.type, (event.data as { fundingReference?: string }).fundingReference])).toEqual([['WalletFunded', 'sandbox-credit']]);
  });

  it('answers 401 without the admin token, funding nothing', async () => {
    const funding = await app.request('POST', `${wallet('test')}/fundings`, { body: { amountKobo: 100, reference: 'no-token' } });
    expect(funding.status).toBe(401);
    expect(funding.body).toMatchObject({ status: false, error: { code: 'unauthenticated' } });
    expect((await app.request('GET', wallet('test'))).status).toBe(401);
    const wrong = await app.request('GET', wallet('test'), { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    expect((await app.admin('GET', wallet('test'))).body.data.balanceKobo).toBe(SANDBOX_CREDIT_KOBO);
  });
});

describe('Wallets: the integrator balance', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: String(SANDBOX_CREDIT_KOBO) } });
  });
  afterAll(async () => app?.close());

  it("GET /v1/wallet answers the key's environment's wallet", async () => {
    const organization = (await createOrganization(app, { approved: true })).id;
    const testKey = await issueKey(app, organization, { environment: 'test' });
    const liveKey = await issueKey(app, organization, { environment: 'live' });
    await app.admin('POST', `/admin/v1/organizations/${organization}/wallets/live/fundings`, { amountKobo: 700, reference: 'live-1' });

    const test = await app.request('GET', '/v1/wallet', { headers: { 'x-service-key': testKey.key } });
    expect(test.status).toBe(200);
    expect(test.body).toEqual({ status: true, data: { environment: 'test', balanceKobo: SANDBOX_CREDIT_KOBO, reservedKobo: 0, availableKobo: SANDBOX_CREDIT_KOBO } });
    const live = await app.request('GET', '/v1/wallet', { headers: { 'x-service-key': liveKey.key } });
    expect(live.body.data).toEqual({ environment: 'live', balanceKobo: 700, reservedKobo: 0, availableKobo: 700 });
  });

  it('GET /v1/wallet/transactions: debits and releases carry the scope of their check, as reservations do', async () => {
    const organization = (await createOrganization(app, { approved: true, scopes: ['bvn', 'phone'] })).id;
    const key = await issueKey(app, organization, { environment: 'test' });
    const headers = { 'x-service-key': key.key };
    const charged = await app.request('POST', '/v1/bvn', { body: { bvn: sandboxPerson(READY_MADE_PEOPLE[0]).bvn }, headers });
    expect(charged.status).toBe(201);
    // A phone ending in 2: the sandbox fails the check, and the reservation is released.
    const failed = await app.request('POST', '/v1/phone', { body: { phone: '08031234562' }, headers });
    expect(failed.status).toBe(502);

    const list = () => app.request('GET', '/v1/wallet/transactions', { headers });
    // The ledger is a read model: the closes reach it a moment after the answers.
    let response = await list();
    for (let waited = 0; response.body.meta.total < 5 && waited < 5_000; waited += 20) {
      await new Promise((resolveWait) => setTimeout(resolveWait, 20));
      response = await list();
    }
    const lines = (response.body.data as { type: string; reference: string; scope: string | null }[]).map(({ type, reference, scope }) => ({ type, reference, scope }));
    expect(lines).toEqual([
      { type: 'release', reference: failed.body.error.details.reference, scope: 'phone' },
      { type: 'reservation', reference: failed.body.error.details.reference, scope: 'phone' },
      { type: 'debit', reference: charged.body.data.reference, scope: 'bvn' },
      { type: 'reservation', reference: charged.body.data.reference, scope: 'bvn' },
      { type: 'funding', reference: SANDBOX_CREDIT_REFERENCE, scope: null },
    ]);
  });

  it('GET /v1/wallet answers 401 without a valid key', async () => {
    expect((await app.request('GET', '/v1/wallet')).status).toBe(401);
    expect((await app.request('GET', '/v1/wallet', { headers: { 'x-service-key': 'service_test_AAAAAAAAAAAAAAAAAAAAAAAA' } })).status).toBe(401);
  });
});

/**
 * EventStoreDB lets an operator delete a stream or hide its first events with metadata; a wallet
 * folded without them would decide on a wrong balance. A wallet stream found deleted or truncated
 * is refused (500, logged with the stream), and nothing is appended to it: an append would
 * recreate a soft-deleted stream after its hidden events.
 */
describeOnProject('esdb', 'Wallets whose stream an operator deleted or truncated', 'only EventStoreDB lets an operator delete or truncate a stream', () => {
  const env = { SANDBOX_CREDIT_KOBO: String(SANDBOX_CREDIT_KOBO) };
  let app: TestApp;
  let fresh: TestApp | undefined;
  let operator: EventStoreDBClient;
  beforeAll(async () => {
    app = await startTestApp({ env });
    operator = EventStoreDBClient.connectionString((await testEventStoreEnv(app.database)).EVENTSTORE_CONNECTION_STRING as string);
  });
  afterEach(async () => {
    await fresh?.close();
    fresh = undefined;
  });
  afterAll(async () => {
    await operator?.dispose();
    await app?.close();
  });

  /** A funded test wallet with one charged check in it; answers its stream and key. */
  async function usedWallet(): Promise<{ organizationId: string; streamId: string; key: string }> {
    const organizationId = (await createOrganization(app)).id;
    const { key } = await issueKey(app, organizationId);
    expect((await app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: { 'x-service-key': key } })).status).toBe(201);
    return { organizationId, streamId: streams.wallet(organizationId, 'test'), key };
  }

  /** The types of what $all holds of a stream, whatever its metadata hides from stream reads. */
  async function typesInAll(streamId: string): Promise<string[]> {
    const types: string[] = [];
    for await (const resolved of operator.readAll({ fromPosition: 'start', maxCount: 1_000_000 })) {
      if (resolved.event?.streamId === streamId) types.push(resolved.event.type);
    }
    return types;
  }

  it('soft-deleted: a fresh instance refuses funding and checks, appends nothing, and the stream stays deleted', async () => {
    const { organizationId, streamId, key } = await usedWallet();
    const before = await typesInAll(streamId);
    await operator.deleteStream(streamId);
    fresh = await startTestApp({ database: app.database, env });
    const funding = await fresh.admin('POST', `/admin/v1/organizations/${organizationId}/wallets/test/fundings`, { amountKobo: 1_000, reference: 'after-delete' });
    expect(funding.status).toBe(500);
    expect((await fresh.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: { 'x-service-key': key } })).status).toBe(500);
    expect(await typesInAll(streamId)).toEqual(before);
    await expect(operator.getStreamMetadata(streamId)).resolves.toMatchObject({ metadata: { truncateBefore: expect.any(Number) } });
    const read = async () => {
      const events: unknown[] = [];
      for await (const resolved of operator.readStream(streamId)) events.push(resolved);
      return events;
    };
    await expect(read()).rejects.toBeInstanceOf(StreamNotFoundError);
  });

  it('truncated to nothing ($tb past its end): a fresh instance refuses a check that it would otherwise decide on an empty wallet', async () => {
    const { streamId, key } = await usedWallet();
    const before = await typesInAll(streamId);
    await operator.setStreamMetadata(streamId, { truncateBefore: before.length });
    fresh = await startTestApp({ database: app.database, env });
    const check = await fresh.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: { 'x-service-key': key } });
    expect(check.status).toBe(500);
    expect(await typesInAll(streamId)).toEqual(before);
  });
});
