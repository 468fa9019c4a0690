import { InvariantViolated } from '../common/errors.js';
import type { ContactData } from '../data-protection/contact-data.js';
import { isoWithOffset } from '../common/time.js';
import type { OrganizationStatus } from '../common/organization-status.js';
import type { ApiKeyState, OrganizationState } from './organization.decider.js';

/** The organization as the admin API shows it. */
export interface OrganizationView {
  readonly id: string;
  readonly name: string;
  /** The contact email, opened from its sealed form; empty once the organization was offboarded. */
  readonly email: string;
  readonly status: OrganizationStatus;
  readonly approved: boolean;
  readonly activeScopes: readonly string[];
  /** Per-scope price overrides in kobo; scopes not listed cost the configured default. */
  readonly prices: Readonly<Record<string, number>>;
  /** Requests per API key per minute on /v1; null: the configured default (RATE_LIMIT_PER_MINUTE). */
  readonly rateLimitPerMinute: number | null;
  readonly suspensionReason: string | null;
  /** The upstream per environment and its secondary; never the credentials. Empty until an operator configures one. */
  readonly providers: Readonly<Record<string, { readonly provider: string; readonly fallback: string | null }>>;
  /** Days the personal data of its checks is kept; null: the configured default (PERSONAL_DATA_RETENTION_DAYS). */
  readonly retentionDays: number | null;
  /** When its personal data was destroyed (offboarding); null while it stands. */
  readonly personalDataDestroyedAt: string | null;
  readonly createdAt: string;
}

/** The providers of a view, from state or read model: provider names only, whatever else is stored beside them. */
export function providersView(providers: Readonly<Record<string, unknown>>): Record<string, { provider: string; fallback: string | null }> {
  const view: Record<string, { provider: string; fallback: string | null }> = {};
  for (const environment of ['test', 'live']) {
    const setting = providers[environment] as { provider?: unknown; fallback?: unknown } | undefined;
    if (typeof setting?.provider !== 'string') continue;
    view[environment] = { provider: setting.provider, fallback: typeof setting.fallback === 'string' ? setting.fallback : null };
  }
  return view;
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
  if (state.id === null || state.createdAt === null) throw new InvariantViolated('a view of an organization that does not exist');
  return {
    id: state.id,
    name: state.name,
    email: state.email,
    status: state.status,
    approved: state.approved,
    activeScopes: [...state.activeScopes],
    prices: { ...state.prices },
    rateLimitPerMinute: state.rateLimitPerMinute,
    suspensionReason: state.suspensionReason,
    providers: providersView(state.providers),
    retentionDays: state.retentionDays,
    personalDataDestroyedAt: state.personalDataDestroyedAt === null ? null : isoWithOffset(state.personalDataDestroyedAt),
    createdAt: isoWithOffset(state.createdAt),
  };
}

/** What an organization's email is sealed bound to, under its own key (ContactData), in its events and read model. */
export const ORGANIZATION_EMAIL_CONTEXT = 'organization.email';

/** The view with its email opened (the state and the read model hold it sealed). */
export async function withOpenedEmail<V extends OrganizationView>(contacts: ContactData, view: V): Promise<V> {
  return { ...view, email: await contacts.open(view.id, ORGANIZATION_EMAIL_CONTEXT, view.email) };
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
