import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { asDomainEvent } from '../../src/common/event.js';
import { CATEGORIES } from '../../src/common/streams.js';
import type { OrganizationEvent } from '../../src/organizations/organization.events.js';
import { eachEvent, type Projection, type ProjectionContext } from '../projection.js';
import { occurredAt } from '../../src/common/event.js';

/**
 * The `api_keys` read model the key guard authenticates against (by `key_hash`). Revocation takes
 * effect for every instance as soon as this projection applies ApiKeyRevoked.
 */
export const apiKeysProjection: Projection = {
  name: 'api-keys',
  categories: [CATEGORIES.organization],
  tables: ['api_keys'],
  handle: eachEvent(async (recorded: RecordedEvent, context: ProjectionContext): Promise<void> => {
    const event = asDomainEvent<OrganizationEvent>(recorded);
    const table = context.table('api_keys');
    switch (event.type) {
      case 'ApiKeyIssued':
        await context.query(
          `insert into ${table} (id, organization_id, name, key_hash, prefix, last4, environment, scopes, created_at, revoked_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, null) on conflict (id) do nothing`,
          [
            event.data.keyId,
            event.data.organizationId,
            event.data.name,
            event.data.keyHash,
            event.data.prefix,
            event.data.last4,
            event.data.environment,
            event.data.scopes,
            occurredAt(recorded),
          ],
        );
        return;
      case 'ApiKeyRevoked':
        await context.query(`update ${table} set revoked_at = coalesce(revoked_at, $2) where id = $1 and organization_id = $3`, [
          event.data.keyId,
          occurredAt(recorded),
          event.data.organizationId,
        ]);
        return;
      case 'OrganizationRegistered':
      case 'OrganizationRenamed':
      case 'OrganizationApproved':
      case 'LiveAccessRequested':
      case 'OrganizationSuspended':
      case 'OrganizationReinstated':
      case 'ScopeActivated':
      case 'ScopeDeactivated':
      case 'ScopePriceSet':
      case 'RateLimitSet':
      case 'ProviderConfigured':
      case 'RetentionSet':
      case 'PersonalDataDestroyed':
        return;
      default: {
        const _exhaustive: never = event;
        throw new Error(`invariant: unhandled organization event ${(_exhaustive as { type: string }).type}`);
      }
    }
  }),
};
