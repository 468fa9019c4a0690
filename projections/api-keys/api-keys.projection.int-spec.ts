import { describe, expect, it } from '@jest/globals';
import { applyEvents, recorded, rowsOf, type GivenEvent, useProjectionDatabase } from '../../test/support/projection-harness.js';
import { apiKeysProjection } from './api-keys.projection.js';

const organizationId = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const t0 = new Date('2026-11-01T10:00:00Z');
const event = (type: string, data: Record<string, unknown>, minutes = 0): GivenEvent => ({
  streamId: `organization-${organizationId}`,
  type,
  data: { schemaVersion: 1, organizationId, ...data },
  metadata: { occurredAt: new Date(t0.getTime() + minutes * 60_000).toISOString() },
});
const issued = (keyId: string, scopes: string[] | null = null, minutes = 0) =>
  event('ApiKeyIssued', { keyId, name: 'ci', keyHash: `hash-${keyId}`, prefix: 'service_test_abcd', last4: 'wxyz', environment: 'test', scopes }, minutes);

describe('api-keys projection', () => {
  const db = useProjectionDatabase(apiKeysProjection);
  const when = (events: GivenEvent[]) => applyEvents(db.pool, apiKeysProjection, recorded(events));

  it('given an issued key, then a row found by its hash, live until revoked', async () => {
    await when([event('OrganizationRegistered', { name: 'Acme', email: 'a@b.test', activeScopes: [] }), issued('key_1', ['nin'])]);
    const { rows } = await db.pool.query('select * from api_keys where key_hash = $1', ['hash-key_1']);
    expect(rows).toEqual([expect.objectContaining({ id: 'key_1', organization_id: organizationId, environment: 'test', scopes: ['nin'], created_at: t0, revoked_at: null })]);
  });

  it('given a revocation, then revoked at the time it happened, and a second revocation keeps the first time', async () => {
    await when([issued('key_1'), event('ApiKeyRevoked', { keyId: 'key_1' }, 5)]);
    await when([event('ApiKeyRevoked', { keyId: 'key_1' }, 9)]);
    const { rows } = await db.pool.query('select revoked_at from api_keys where id = $1', ['key_1']);
    expect(rows[0].revoked_at).toEqual(new Date(t0.getTime() + 5 * 60_000));
  });

  it('replayed twice, same rows', async () => {
    const events = recorded([issued('key_1'), issued('key_2', ['bvn'], 1), event('ApiKeyRevoked', { keyId: 'key_1' }, 2), event('ScopeActivated', { scope: 'nin' }, 3)]);
    await applyEvents(db.pool, apiKeysProjection, events);
    const once = await rowsOf(db.pool, 'api_keys', 'id');
    await applyEvents(db.pool, apiKeysProjection, events);
    expect(await rowsOf(db.pool, 'api_keys', 'id')).toEqual(once);
    expect(once).toHaveLength(2);
  });
});
