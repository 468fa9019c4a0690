import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import { Forbidden } from '../common/errors.js';
import type { Scope } from '../scopes/scopes.js';

/** 403 unless the scope is active for the key's organization and the key may run it. */
export function assertScopeAllowed(key: AuthenticatedKey, scope: Scope): void {
  if (!key.organization.activeScopes.includes(scope)) throw new Forbidden('scope_not_active', `The scope ${scope} is not active for this organization`);
  if (key.keyScopes !== null && !key.keyScopes.includes(scope)) throw new Forbidden('scope_not_allowed', `This API key is not allowed to run ${scope}`);
}

/** Who may see checks: an unrestricted key (or a console page) has no `keyScopes`, or null. */
export interface ScopedReader {
  readonly keyScopes?: readonly string[] | null;
}

/**
 * Whether a reader may see a check of `scope` at all. A key restricted to some scopes reads,
 * lists, searches and erases only checks of those scopes: any other check of its organization is,
 * to it, a check that does not exist, so that a key handed to one team cannot read or erase the
 * personal data another team's checks gathered.
 */
export function readerSeesScope(reader: ScopedReader, scope: string): boolean {
  return reader.keyScopes === undefined || reader.keyScopes === null || reader.keyScopes.includes(scope);
}
