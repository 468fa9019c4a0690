import type { Event } from '../common/event.js';

/** Events of `organization-{organizationId}`. Keys are recorded by hash only, never in plain text. */
/**
 * `sandboxCreditKobo`: the credit its test wallet is owed, decided at registration (absent on events
 * written before it was recorded: those were credited in the same request). The credit itself is a
 * `WalletFunded` on the wallet stream with funding reference `sandbox-credit`, written right after;
 * if that write fails, the recovery sweep writes it later from this figure.
 */
export type OrganizationRegistered = Event<'OrganizationRegistered', { organizationId: string; name: string; email: string; activeScopes: string[]; sandboxCreditKobo?: number }>;
/** The operators changed the organization's name: its events and its wallet's keep its id. */
export type OrganizationRenamed = Event<'OrganizationRenamed', { organizationId: string; name: string }>;
export type OrganizationApproved = Event<'OrganizationApproved', { organizationId: string }>;
/** An integrator asked, from the console, for its live keys to be allowed: the operators' approval queue. */
export type LiveAccessRequested = Event<'LiveAccessRequested', { organizationId: string }>;
export type OrganizationSuspended = Event<'OrganizationSuspended', { organizationId: string; reason: string }>;
export type OrganizationReinstated = Event<'OrganizationReinstated', { organizationId: string }>;
export type ScopeActivated = Event<'ScopeActivated', { organizationId: string; scope: string }>;
export type ScopeDeactivated = Event<'ScopeDeactivated', { organizationId: string; scope: string }>;
/** `priceKobo: null` removes the override (the configured default applies again). */
export type ScopePriceSet = Event<'ScopePriceSet', { organizationId: string; scope: string; priceKobo: number | null }>;
/** `requestsPerMinute: null` removes the override (RATE_LIMIT_PER_MINUTE applies again). Per API key on /v1. */
export type RateLimitSet = Event<'RateLimitSet', { organizationId: string; requestsPerMinute: number | null }>;
/**
 * The upstream provider of one environment, and its optional secondary. Credentials travel only
 * as AES-256-GCM ciphertexts (src/providers/credentials.ts), bound to the organization,
 * environment, role and provider; null for the sandbox. Events written before credentials existed
 * lack the two fields.
 */
export type ProviderConfigured = Event<
  'ProviderConfigured',
  { organizationId: string; environment: string; provider: string; fallback: string | null; credentials?: string | null; fallbackCredentials?: string | null }
>;
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
/** Days the personal data of its checks is kept; `retentionDays: null` returns to PERSONAL_DATA_RETENTION_DAYS. */
export type RetentionSet = Event<'RetentionSet', { organizationId: string; retentionDays: number | null }>;
/** Offboarding: the organization's key-encryption and index keys destroyed; every verification of it reads as erased. */
export type PersonalDataDestroyed = Event<'PersonalDataDestroyed', { organizationId: string; destroyedAt: string }>;

export type OrganizationEvent =
  | OrganizationRegistered
  | OrganizationRenamed
  | OrganizationApproved
  | LiveAccessRequested
  | OrganizationSuspended
  | OrganizationReinstated
  | ScopeActivated
  | ScopeDeactivated
  | ScopePriceSet
  | RateLimitSet
  | ProviderConfigured
  | ApiKeyIssued
  | ApiKeyRevoked
  | RetentionSet
  | PersonalDataDestroyed;

export const ORGANIZATION_EVENT_TYPES: readonly OrganizationEvent['type'][] = [
  'OrganizationRegistered',
  'OrganizationRenamed',
  'OrganizationApproved',
  'LiveAccessRequested',
  'OrganizationSuspended',
  'OrganizationReinstated',
  'ScopeActivated',
  'ScopeDeactivated',
  'ScopePriceSet',
  'RateLimitSet',
  'ProviderConfigured',
  'ApiKeyIssued',
  'ApiKeyRevoked',
  'RetentionSet',
  'PersonalDataDestroyed',
];
