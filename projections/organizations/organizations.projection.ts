import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { asDomainEvent } from '../../src/common/event.js';
import { occurredAt } from '../../src/common/event.js';
import { CATEGORIES } from '../../src/common/streams.js';
import type { OrganizationEvent } from '../../src/organizations/organization.events.js';
import { eachEvent, type Projection, type ProjectionContext } from '../projection.js';

/**
 * The `organizations` read model. Every statement is safe to apply twice: inserts do nothing on
 * conflict, set changes test membership first, status changes are guarded by the current status.
 */
export const organizationsProjection: Projection = {
  name: 'organizations',
  categories: [CATEGORIES.organization],
  tables: ['organizations'],
  handle: eachEvent(async (recorded: RecordedEvent, context: ProjectionContext): Promise<void> => {
    const event = asDomainEvent<OrganizationEvent>(recorded);
    const table = context.table('organizations');
    const at = occurredAt(recorded);
    switch (event.type) {
      case 'OrganizationRegistered':
        await context.query(
          `insert into ${table} (id, name, email, status, approved, active_scopes, prices, providers, suspension_reason, created_at, updated_at)
           values ($1, $2, $3, 'pending', false, $4, '{}', '{}', null, $5, $5) on conflict (id) do nothing`,
          [event.data.organizationId, event.data.name, event.data.email, event.data.activeScopes, at],
        );
        return;
      case 'OrganizationRenamed':
        await context.query(`update ${table} set name = $2, updated_at = $3 where id = $1`, [event.data.organizationId, event.data.name, at]);
        return;
      case 'OrganizationApproved':
        await context.query(`update ${table} set approved = true, status = case when status = 'pending' then 'approved' else status end, updated_at = $2 where id = $1`, [
          event.data.organizationId,
          at,
        ]);
        return;
      case 'LiveAccessRequested':
        await context.query(`update ${table} set live_access_requested_at = coalesce(live_access_requested_at, $2), updated_at = $2 where id = $1`, [
          event.data.organizationId,
          at,
        ]);
        return;
      case 'OrganizationSuspended':
        await context.query(`update ${table} set status = 'suspended', suspension_reason = $2, updated_at = $3 where id = $1`, [event.data.organizationId, event.data.reason, at]);
        return;
      case 'OrganizationReinstated':
        await context.query(`update ${table} set status = case when approved then 'approved' else 'pending' end, suspension_reason = null, updated_at = $2 where id = $1`, [
          event.data.organizationId,
          at,
        ]);
        return;
      case 'ScopeActivated':
        await context.query(
          `update ${table} set active_scopes = case when $2 = any(active_scopes) then active_scopes else active_scopes || $2::text end, updated_at = $3 where id = $1`,
          [event.data.organizationId, event.data.scope, at],
        );
        return;
      case 'ScopeDeactivated':
        await context.query(`update ${table} set active_scopes = array_remove(active_scopes, $2::text), updated_at = $3 where id = $1`, [
          event.data.organizationId,
          event.data.scope,
          at,
        ]);
        return;
      case 'ScopePriceSet':
        if (event.data.priceKobo === null) {
          await context.query(`update ${table} set prices = prices - $2::text, updated_at = $3 where id = $1`, [event.data.organizationId, event.data.scope, at]);
        } else {
          await context.query(`update ${table} set prices = prices || jsonb_build_object($2::text, $3::bigint), updated_at = $4 where id = $1`, [
            event.data.organizationId,
            event.data.scope,
            event.data.priceKobo,
            at,
          ]);
        }
        return;
      case 'RateLimitSet':
        await context.query(`update ${table} set rate_limit_per_minute = $2, updated_at = $3 where id = $1`, [event.data.organizationId, event.data.requestsPerMinute, at]);
        return;
      case 'ProviderConfigured':
        // The credentials stay encrypted here too: the API key guard hands them to the provider selector, which decrypts them in memory.
        await context.query(
          `update ${table} set providers = providers || jsonb_build_object($2::text, jsonb_build_object('provider', $3::text, 'fallback', $4::text, 'credentials', $5::text, 'fallbackCredentials', $6::text)), updated_at = $7 where id = $1`,
          [event.data.organizationId, event.data.environment, event.data.provider, event.data.fallback, event.data.credentials ?? null, event.data.fallbackCredentials ?? null, at],
        );
        return;
      case 'RetentionSet':
        await context.query(`update ${table} set retention_days = $2, updated_at = $3 where id = $1`, [event.data.organizationId, event.data.retentionDays, at]);
        return;
      case 'PersonalDataDestroyed':
        await context.query(`update ${table} set personal_data_destroyed_at = coalesce(personal_data_destroyed_at, $2), updated_at = $3 where id = $1`, [
          event.data.organizationId,
          event.data.destroyedAt,
          at,
        ]);
        return;
      case 'ApiKeyIssued':
      case 'ApiKeyRevoked':
        // Keys have their own read model (api-keys).
        return;
      default: {
        const _exhaustive: never = event;
        throw new Error(`invariant: unhandled organization event ${(_exhaustive as { type: string }).type}`);
      }
    }
  }),
};
