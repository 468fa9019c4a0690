import type { Event } from '../common/event.js';

/** Events of `organization-{organizationId}`. Keys are recorded by hash only, never in plain text. */
export type OrganizationRegistered = Event<'OrganizationRegistered', { organizationId: string; name: string; email: string; activeScopes: string[] }>;
export type OrganizationApproved = Event<'OrganizationApproved', { organizationId: string }>;
export type OrganizationSuspended = Event<'OrganizationSuspended', { organizationId: string; reason: string }>;
export type OrganizationReinstated = Event<'OrganizationReinstated', { organizationId: string }>;
export type ScopeActivated = Event<'ScopeActivated', { organizationId: string; scope: string }>;
export type ScopeDeactivated = Event<'ScopeDeactivated', { organizationId: string; scope: string }>;
/** `priceKobo: null` removes the override (the configured default applies again). */
export type ScopePriceSet = Event<'ScopePriceSet', { organizationId: string; scope: string; priceKobo: number | null }>;
/** Upstream provider per environment (issue 8); credentials are stored encrypted elsewhere, never in the event. */
export type ProviderConfigured = Event<'ProviderConfigured', { organizationId: string; environment: string; provider: string; fallback: string | null }>;
export type ApiKeyIssued = Event<
  'ApiKeyIssued',
  {
    organizationId: string;
    keyId: string;
    name: string | null;
    /** SHA-256 of the full key, hex. */
    keyHash: string;
    /** `service_test_` or `service_live_` plus the first characters of the random part, for recognition. */
    prefix: string;
    last4: string;
    environment: string;
    /** null: every scope active for the organization. */
    scopes: string[] | null;
  }
>;
export type ApiKeyRevoked = Event<'ApiKeyRevoked', { organizationId: string; keyId: string }>;

export type OrganizationEvent =
  | OrganizationRegistered
  | OrganizationApproved
  | OrganizationSuspended
  | OrganizationReinstated
  | ScopeActivated
  | ScopeDeactivated
  | ScopePriceSet
  | ProviderConfigured
  | ApiKeyIssued
  | ApiKeyRevoked;

export const ORGANIZATION_EVENT_TYPES: readonly OrganizationEvent['type'][] = [
  'OrganizationRegistered',
  'OrganizationApproved',
  'OrganizationSuspended',
  'OrganizationReinstated',
  'ScopeActivated',
  'ScopeDeactivated',
  'ScopePriceSet',
  'ProviderConfigured',
  'ApiKeyIssued',
  'ApiKeyRevoked',
];
