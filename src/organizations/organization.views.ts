import { isoWithOffset } from '../common/time.js';
import type { ApiKeyState, OrganizationState, OrganizationStatus } from './organization.decider.js';

/** The organization as the admin API shows it. */
export interface OrganizationView {
  readonly id: string;
  readonly name: string;
  readonly email: string;
  readonly status: OrganizationStatus;
  readonly approved: boolean;
  readonly activeScopes: readonly string[];
  /** Per-scope price overrides in kobo; scopes not listed cost the configured default. */
  readonly prices: Readonly<Record<string, number>>;
  readonly suspensionReason: string | null;
  readonly createdAt: string;
}

/** A key as listed: never the key itself. `scopes: null` means every scope active for the organization. */
export interface ApiKeyView {
  readonly id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly last4: string;
  readonly environment: string;
  readonly scopes: readonly string[] | null;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly revokedAt: string | null;
}

/** The one response that carries the full key. */
export interface IssuedApiKeyView {
  readonly id: string;
  readonly key: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly last4: string;
  readonly environment: string;
  readonly scopes: readonly string[] | null;
  readonly createdAt: string;
}

export function organizationView(state: OrganizationState): OrganizationView {
  if (state.id === null || state.createdAt === null) throw new Error('invariant: a view of an organization that does not exist');
  return {
    id: state.id,
    name: state.name,
    email: state.email,
    status: state.status,
    approved: state.approved,
    activeScopes: [...state.activeScopes],
    prices: { ...state.prices },
    suspensionReason: state.suspensionReason,
    createdAt: isoWithOffset(state.createdAt),
  };
}

export function apiKeyView(key: ApiKeyState, lastUsedAt: Date | null = null): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    last4: key.last4,
    environment: key.environment,
    scopes: key.scopes === null ? null : [...key.scopes],
    createdAt: isoWithOffset(key.createdAt),
    lastUsedAt: lastUsedAt === null ? null : isoWithOffset(lastUsedAt),
    revokedAt: key.revokedAt === null ? null : isoWithOffset(key.revokedAt),
  };
}
