import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import { Forbidden } from '../common/errors.js';
import type { Scope } from '../scopes/scopes.js';

/** 403 unless the scope is active for the key's organization and the key may run it. */
export function assertScopeAllowed(key: AuthenticatedKey, scope: Scope): void {
  if (!key.organization.activeScopes.includes(scope)) throw new Forbidden('scope_not_active', `The scope ${scope} is not active for this organization`);
  if (key.keyScopes !== null && !key.keyScopes.includes(scope)) throw new Forbidden('scope_not_allowed', `This API key is not allowed to run ${scope}`);
}
