import { describe, expect, it } from '@jest/globals';
import type { Projection } from '../projection.js';
import { applyBatch, applyEvents, recorded, rowsOf, type GivenEvent, useProjectionDatabase } from '../../test/support/projection-harness.js';
import { webhooksSubscriber } from './webhooks.subscriber.js';

const org = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const other = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TS';
const t0 = new Date('2026-11-01T10:00:00Z');
const at = (minutes: number) => ({ occurredAt: new Date(t0.getTime() + minutes * 60_000).toISOString() });
const e = (streamId: string, type: string, data: Record<string, unknown>, minutes = 0): GivenEvent => ({
  streamId,
  type,
  data: { schemaVersion: 1, ...data },
  metadata: at(minutes),
});
const endpoint = (endpointId: string, environment: string, eventTypes: string[] = [], organizationId = org) =>
  e(`webhookEndpoint-${endpointId}`, 'WebhookEndpointCreated', {
    endpointId,
    organizationId,
    environment,
    target: 'sealed',
    eventTypes,
    enabled: true,
    secretId: 's1',
    secret: 'sealed-secret',
    masterKeyId: 'local:1',
  });
const requested = (reference: string, environment = 'test') =>
  e(`verification-${reference}`, 'VerificationRequested', {
    reference,
    organizationId: org,
    environment,
    keyId: 'key_1',
    scope: 'nin',
    category: 'identity',
    countryCode: 'NG',
    request: { nin: 'sealed' },
    priceKobo: 10_000,
    requestedAt: t0.toISOString(),
  });
const completed = (reference: string) => e(`verification-${reference}`, 'VerificationCompleted', { reference, outcome: 'found', result: {}, completedAt: t0.toISOString() }, 1);
const wallet = (type: string, amountKobo: number, extra: Record<string, unknown> = {}) =>
  e(`wallet-${org}.test`, type, { organizationId: org, environment: 'test', amountKobo, ...extra });

describe('webhooks subscriber', () => {
  const db = useProjectionDatabase(webhooksSubscriber);
  const apply = (events: ReturnType<typeof recorded>) => applyEvents(db.pool, webhooksSubscriber, events);
  const deliveries = async () =>
    (
      await db.pool.query<{ endpoint_id: string; message_id: string; event_type: string; environment: string | null; body: string; status: string }>(
        'select endpoint_id, message_id, event_type, environment, body, status from webhook_deliveries order by endpoint_id, id',
      )
    ).rows;

  it('given endpoints, a completed check is one pending delivery to each endpoint of its organization and environment that wants it', async () => {
    const events = recorded([
      endpoint('ep_a', 'test'),
      endpoint('ep_b', 'test', ['wallet.funded']),
      endpoint('ep_c', 'live'),
      endpoint('ep_d', 'test', [], other),
      requested('vrf_1'),
      completed('vrf_1'),
    ]);
    await apply(events);
    const rows = await deliveries();
    expect(rows.map((row) => [row.endpoint_id, row.message_id, row.event_type, row.status])).toEqual([['ep_a', `msg_${events[5].id}`, 'verification.completed', 'pending']]);
    expect(JSON.parse(rows[0].body)).toEqual({
      type: 'verification.completed',
      timestamp: '2026-11-01T10:01:00.000Z',
      data: { organizationId: org, environment: 'test', reference: 'vrf_1', scope: 'nin', status: 'found', charged: true, completedAt: t0.toISOString() },
    });
  });

  it('an endpoint receives only the events after its creation, and none once disabled or deleted', async () => {
    const events = recorded([
      requested('vrf_1'),
      completed('vrf_1'),
      endpoint('ep_a', 'test'),
      requested('vrf_2'),
      completed('vrf_2'),
      e('webhookEndpoint-ep_a', 'WebhookEndpointUpdated', { endpointId: 'ep_a', enabled: false }),
      requested('vrf_3'),
      completed('vrf_3'),
    ]);
    await apply(events);
    expect((await deliveries()).map((row) => row.message_id)).toEqual([`msg_${events[4].id}`]);
  });

  it('organization-wide events go to the endpoints of both environments with environment null', async () => {
    const events = recorded([endpoint('ep_a', 'test'), endpoint('ep_b', 'live'), e(`organization-${org}`, 'OrganizationApproved', { organizationId: org })]);
    await apply(events);
    const rows = await deliveries();
    expect(rows.map((row) => row.endpoint_id)).toEqual(['ep_a', 'ep_b']);
    expect(rows.map((row) => JSON.parse(row.body).data.environment)).toEqual([null, null]);
  });

  it('a balance crossing the threshold downwards is one wallet.low_balance delivery and one mail per owner and finance user, once per crossing', async () => {
    await db.pool.query('delete from console_outbox');
    await db.pool.query('delete from console_users');
    for (const [id, role] of [
      ['u1', 'owner'],
      ['u2', 'finance'],
      ['u3', 'developer'],
    ]) {
      await db.pool.query(`insert into console_users (id, kind, organization_id, email, email_key, role, created_at) values ($1, 'integrator', $2, $3, $3, $4, now())`, [
        id,
        org,
        `${id}@acme.test`,
        role,
      ]);
    }
    const events = recorded([
      endpoint('ep_a', 'test', ['wallet.low_balance']),
      e(`walletAlert-${org}.test`, 'LowBalanceThresholdSet', { organizationId: org, environment: 'test', thresholdKobo: 5_000 }),
      wallet('WalletFunded', 10_000, { fundingReference: 'f1' }),
      wallet('WalletFundsReserved', 6_000, { reference: 'vrf_1', scope: 'nin' }),
      wallet('WalletDebited', 6_000, { reference: 'vrf_1' }),
      wallet('WalletDebited', 1_000, { reference: 'vrf_2' }),
      wallet('WalletFunded', 10_000, { fundingReference: 'f2' }),
      wallet('WalletDebited', 10_000, { reference: 'vrf_3' }),
    ]);
    await apply(events);
    // Replayed: nothing more.
    await apply(events);
    const rows = await deliveries();
    expect(rows.map((row) => [row.message_id, JSON.parse(row.body).data])).toEqual([
      [`msg_${events[4].id}`, { organizationId: org, environment: 'test', balanceKobo: 4_000, thresholdKobo: 5_000 }],
      [`msg_${events[7].id}`, { organizationId: org, environment: 'test', balanceKobo: 3_000, thresholdKobo: 5_000 }],
    ]);
    const mail = (await db.pool.query<{ recipient: string; body: string; link: string }>('select recipient, body, link from console_outbox order by id')).rows;
    // Each mail names its member (the outbox opens the member's own sealed email when it sends).
    expect(mail.map((row) => row.recipient).sort()).toEqual(['user:u1', 'user:u1', 'user:u2', 'user:u2']);
    expect(mail[0].body).toContain('NGN 40.00');
    expect(mail[0].body).toContain('Top it up to keep running checks: /console/wallet');
    expect(mail[0].link).toBe('/console/wallet');
  });

  it('replayed twice, same rows', async () => {
    const events = recorded([
      endpoint('ep_a', 'test'),
      requested('vrf_1'),
      completed('vrf_1'),
      wallet('WalletFunded', 10_000, { fundingReference: 'f1' }),
      e('webhookEndpoint-ep_a', 'WebhookEndpointSecretRotated', {
        endpointId: 'ep_a',
        secretId: 's2',
        secret: 'sealed-2',
        masterKeyId: 'local:1',
        previousSecretId: 's1',
        previousValidUntil: '2026-11-02T10:00:00.000Z',
      }),
    ]);
    await apply(events);
    const once = {
      endpoints: await rowsOf(db.pool, 'webhook_endpoints', 'id'),
      deliveries: await rowsOf(db.pool, 'webhook_deliveries', 'id'),
      wallets: await rowsOf(db.pool, 'webhook_wallet_alerts', 'organization_id'),
    };
    await apply(events);
    await apply(events.slice(2));
    expect({
      endpoints: await rowsOf(db.pool, 'webhook_endpoints', 'id'),
      deliveries: await rowsOf(db.pool, 'webhook_deliveries', 'id'),
      wallets: await rowsOf(db.pool, 'webhook_wallet_alerts', 'organization_id'),
    }).toEqual(once);
    expect(once.endpoints[0].secrets).toEqual([
      { secretId: 's2', secret: 'sealed-2', masterKeyId: 'local:1', validUntil: null },
      { secretId: 's1', secret: 'sealed-secret', masterKeyId: 'local:1', validUntil: '2026-11-02T10:00:00.000Z' },
    ]);
    expect(once.deliveries).toHaveLength(2);
  });

  describe('in batches', () => {
    const members = async () => {
      await db.pool.query('delete from console_outbox');
      await db.pool.query('delete from console_users');
      await db.pool.query(
        `insert into console_users (id, kind, organization_id, email, email_key, role, created_at) values ('u1', 'integrator', $1, 'u1@acme.test', 'u1@acme.test', 'owner', now())`,
        [org],
      );
    };
    const everything = async () => ({
      endpoints: await rowsOf(db.pool, 'webhook_endpoints', 'id'),
      facts: await rowsOf(db.pool, 'webhook_stream_facts', 'key'),
      wallets: await rowsOf(db.pool, 'webhook_wallet_alerts', 'organization_id, environment'),
      deliveries: (
        await db.pool.query(
          'select endpoint_id, message_id, event_type, organization_id, environment, body, occurred_at, status from webhook_deliveries order by endpoint_id, message_id',
        )
      ).rows,
      mail: (await db.pool.query('select recipient, subject, body, link from console_outbox order by recipient, body')).rows,
    });
    const reset = async () => {
      await db.pool.query(`truncate ${webhooksSubscriber.tables.join(', ')}`);
      await db.pool.query('delete from console_outbox');
    };
    const key = (keyId: string, type: string) => e(`apiKey-${keyId}`, type, { organizationId: org, environment: 'test', keyId, prefix: 'sk_test_ab', scopes: null });

    it('write exactly the rows of the events applied one by one, however the log is cut, replays included', async () => {
      await members();
      const events = recorded([
        endpoint('ep_a', 'test'),
        endpoint('ep_b', 'test', ['verification.completed', 'wallet.low_balance']),
        requested('vrf_1'),
        completed('vrf_1'),
        e(`walletAlert-${org}.test`, 'LowBalanceThresholdSet', { organizationId: org, environment: 'test', thresholdKobo: 5_000 }),
        wallet('WalletFunded', 10_000, { fundingReference: 'f1' }),
        requested('vrf_2'),
        wallet('WalletFundsReserved', 6_000, { reference: 'vrf_2', scope: 'nin' }),
        wallet('WalletDebited', 6_000, { reference: 'vrf_2' }),
        completed('vrf_2'),
        key('key_1', 'ApiKeyIssued'),
        e('webhookEndpoint-ep_a', 'WebhookEndpointDisabled', { endpointId: 'ep_a', reason: 'failing' }),
        requested('vrf_3'),
        e('verification-vrf_3', 'VerificationFailed', { reference: 'vrf_3', reasonCode: 'provider_unavailable', failedAt: t0.toISOString() }, 2),
        wallet('WalletFunded', 10_000, { fundingReference: 'f2' }),
        wallet('WalletDebited', 9_500, { reference: 'vrf_4' }),
        key('key_1', 'ApiKeyRevoked'),
        completed('vrf_9'),
      ]);
      await applyEvents(db.pool, webhooksSubscriber, events);
      const oneByOne = await everything();
      expect(oneByOne.deliveries.length).toBeGreaterThan(6);
      expect(oneByOne.mail).toHaveLength(2);

      for (const cut of [events.length, 5, 3, 1]) {
        await reset();
        for (let from = 0; from < events.length; from += cut) await applyBatch(db.pool, webhooksSubscriber, events.slice(from, from + cut));
        // A replay of the whole log in one batch adds nothing.
        await applyBatch(db.pool, webhooksSubscriber, events);
        expect(await everything()).toEqual(oneByOne);
      }
    });

    it('take a few statements for a batch of checks, whatever its size, not one per event', async () => {
      let statements = 0;
      const counted: Projection = {
        ...webhooksSubscriber,
        handle: (batch, context) =>
          webhooksSubscriber.handle(batch, {
            table: (name) => context.table(name),
            query: (sql, params) => {
              statements++;
              return context.query(sql, params);
            },
          }),
      };
      await applyEvents(db.pool, webhooksSubscriber, recorded([endpoint('ep_a', 'test')]));
      const checks = Array.from({ length: 100 }, (_, i) => [
        requested(`vrf_${i}`),
        wallet('WalletFundsReserved', 100, { reference: `vrf_${i}`, scope: 'nin' }),
        wallet('WalletDebited', 100, { reference: `vrf_${i}` }),
        completed(`vrf_${i}`),
      ]).flat();
      await applyBatch(db.pool, counted, recorded([wallet('WalletFunded', 1_000_000, { fundingReference: 'f1' }), ...checks]));
      expect(statements).toBeLessThanOrEqual(5);
      expect((await db.pool.query('select count(*)::int as n from webhook_deliveries')).rows[0].n).toBe(101);
    });
  });
});
