import { NotFound } from '../common/errors.js';
import { streams } from '../common/streams.js';
import type { EventStore } from '../event-store/event-store.port.js';

/** Organization ids are `org_` + a ULID; anything much longer is not one, and is not looked up. */
const MAX_ORGANIZATION_ID_LENGTH = 100;

/** 404 unless the organization exists, which it does iff its stream has events (the authority, not a read model). */
export async function assertOrganizationExists(store: EventStore, organizationId: string): Promise<void> {
  const exists =
    organizationId.length > 0 && organizationId.length <= MAX_ORGANIZATION_ID_LENGTH && (await store.readStream(streams.organization(organizationId), { maxCount: 1 })).length > 0;
  if (!exists) throw new NotFound('No organization with this id');
}
