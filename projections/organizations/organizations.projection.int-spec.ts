import { describe, expect, it } from '@jest/globals';
import { applyEvents, recorded, rowsOf, type GivenEvent, useProjectionDatabase } from '../../test/support/projection-harness.js';
import { organizationsProjection } from './organizations.projection.js';

const id = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const stream = `organization-${id}`;
const t0 = new Date('2026-11-01T10:00:00Z');
const event = (type: string, data: Record<string, unknown>, minutes = 0): GivenEvent => ({
  streamId: stream,
  type,
  data: { schemaVersion: 1, organizationId: id, ...data },
  metadata: { occurredAt: new Date(t0.getTime() + minutes * 60_000).toISOString() },
});
const registered = event('OrganizationRegistered', { name: 'Acme', email: 'ops@acme.test', activeScopes: ['nin', 'bvn'] });

describe('organizations projection', () => {
  const db = useProjectionDatabase(organizationsProjection);

  const when = (events: GivenEvent[]) => applyEvents(db.pool, organizationsProjection, recorded(events));
  const row = async () => (await db.pool.query('select * from organizations where id = $1', [id])).rows[0];

  it('given a registration, then a pending row with the scopes and the time it happened', async () => {
    await when([registered]);
    expect(await row()).toMatchObject({ name: 'Acme', email: 'ops@acme.test', status: 'pending', approved: false, active_scopes: ['nin', 'bvn'], created_at: t0 });
  });

  it('given approval, suspension and reinstatement, then approved again with the reason cleared', async () => {
    await when([registered, event('OrganizationApproved', {}, 1), event('OrganizationSuspended', { reason: 'review' }, 2)]);
    expect(await row()).toMatchObject({ status: 'suspended', approved: true, suspension_reason: 'review' });
    await when([event('OrganizationReinstated', {}, 3)]);
    expect(await row()).toMatchObject({ status: 'approved', suspension_reason: null });
  });

  it('given a live-access request, then its first time kept, and the approval leaves it', async () => {
    await when([registered, event('LiveAccessRequested', {}, 1), event('LiveAccessRequested', {}, 2)]);
    expect(await row()).toMatchObject({ live_access_requested_at: new Date(t0.getTime() + 60_000), approved: false });
    await when([event('OrganizationApproved', {}, 3)]);
    expect(await row()).toMatchObject({ live_access_requested_at: new Date(t0.getTime() + 60_000), approved: true });
  });

  it('given scope and price changes, then the active set and the overrides', async () => {
    await when([
      registered,
      event('ScopeActivated', { scope: 'phone' }),
      event('ScopeDeactivated', { scope: 'nin' }),
      event('ScopePriceSet', { scope: 'nin', priceKobo: 5_000 }),
      event('ScopePriceSet', { scope: 'bvn', priceKobo: 0 }),
      event('ScopePriceSet', { scope: 'nin', priceKobo: null }),
    ]);
    expect(await row()).toMatchObject({ active_scopes: ['bvn', 'phone'], prices: { bvn: 0 } });
  });

  it('given a provider configuration, then the provider names and the still-sealed credentials per environment', async () => {
    await when([
      registered,
      event('ProviderConfigured', { environment: 'live', provider: 'dojah', fallback: 'prembly', credentials: 'v1.a.b.c', fallbackCredentials: 'v1.d.e.f' }),
    ]);
    expect((await row()).providers).toEqual({ live: { provider: 'dojah', fallback: 'prembly', credentials: 'v1.a.b.c', fallbackCredentials: 'v1.d.e.f' } });
  });

  it('given a rate limit set and then cleared, then the override and then null', async () => {
    await when([registered, event('RateLimitSet', { requestsPerMinute: 120 }, 1)]);
    expect(await row()).toMatchObject({ rate_limit_per_minute: 120 });
    await when([event('RateLimitSet', { requestsPerMinute: null }, 2)]);
    expect(await row()).toMatchObject({ rate_limit_per_minute: null });
  });

  it('given a rename, then the new name and the time it happened', async () => {
    await when([registered, event('OrganizationRenamed', { name: 'Acme Holdings' }, 4)]);
    expect(await row()).toMatchObject({ name: 'Acme Holdings', updated_at: new Date(t0.getTime() + 4 * 60_000) });
  });

  it('replayed twice, same rows', async () => {
    const events = recorded([
      registered,
      event('LiveAccessRequested', {}, 1),
      event('OrganizationApproved', {}, 1),
      event('ScopeActivated', { scope: 'phone' }, 2),
      event('ScopePriceSet', { scope: 'nin', priceKobo: 5_000 }, 3),
      event('RateLimitSet', { requestsPerMinute: 120 }, 3),
      event('OrganizationRenamed', { name: 'Acme Holdings' }, 3),
      event('OrganizationSuspended', { reason: 'review' }, 4),
      event('ApiKeyIssued', { keyId: 'key_1', name: null, keyHash: 'h', prefix: 'p', last4: 'l', environment: 'test', scopes: null }, 5),
    ]);
    await applyEvents(db.pool, organizationsProjection, events);
    const once = await rowsOf(db.pool, 'organizations', 'id');
    await applyEvents(db.pool, organizationsProjection, events);
    expect(await rowsOf(db.pool, 'organizations', 'id')).toEqual(once);
    expect(once).toHaveLength(1);
  });
});
