import { Conflict, InvariantViolated, NotFound, ValidationFailed, type FieldError } from '../common/errors.js';
import { MAX_REQUESTS_PER_MINUTE, MAX_RETENTION_DAYS } from '../config/config.js';
import type { Environment } from '../common/environment.js';
import type { Decider, EventMeta } from '../event-sourcing/decider.js';
import type { OrganizationStatus } from '../common/organization-status.js';
import { isProviderName, PROVIDER_NAMES, PROVIDER_SCOPES, serves, type ProviderName } from '../providers/capabilities.js';
import { isScope, MAX_PRICE_KOBO, SCOPES, type Scope } from '../scopes/scopes.js';
import type { OrganizationEvent } from './organization.events.js';

export const SCHEMA_VERSION = 1;
/** Most keys one organization may hold (revoked ones included): a bound on the stream and on the key list. */
export const MAX_KEYS_PER_ORGANIZATION = 200;

export interface ApiKeyState {
  readonly id: string;
  readonly name: string | null;
  readonly prefix: string;
  readonly last4: string;
  readonly environment: string;
  readonly scopes: readonly string[] | null;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

/** The provider configured for one environment (credentials stay in the events, encrypted). */
export interface ProviderSetting {
  readonly provider: string;
  readonly fallback: string | null;
}

export interface OrganizationState {
  readonly id: string | null;
  readonly name: string;
  readonly email: string;
  readonly status: OrganizationStatus;
  /** Kept through a suspension, so reinstating returns to where the organization was. */
  readonly approved: boolean;
  readonly activeScopes: readonly Scope[];
  readonly prices: Readonly<Partial<Record<Scope, number>>>;
  /** Requests per API key per minute on /v1; null: the configured default. */
  readonly rateLimitPerMinute: number | null;
  readonly suspensionReason: string | null;
  readonly createdAt: Date | null;
  readonly keys: ReadonlyMap<string, ApiKeyState>;
  /** The sandbox credit its test wallet is owed (0 when none was recorded). */
  readonly sandboxCreditKobo: number;
  readonly providers: Readonly<Partial<Record<Environment, ProviderSetting>>>;
  /** Days personal data is kept; null: the configured default (PERSONAL_DATA_RETENTION_DAYS). */
  readonly retentionDays: number | null;
  /** When its keys were destroyed (offboarding); null while they stand. */
  readonly personalDataDestroyedAt: Date | null;
  /** When it first asked for live access (the approval queue); null until it does. */
  readonly liveAccessRequestedAt: Date | null;
}

export const initialState: OrganizationState = {
  id: null,
  name: '',
  email: '',
  status: 'pending',
  approved: false,
  activeScopes: [],
  prices: {},
  rateLimitPerMinute: null,
  suspensionReason: null,
  createdAt: null,
  keys: new Map(),
  sandboxCreditKobo: 0,
  providers: {},
  retentionDays: null,
  personalDataDestroyedAt: null,
  liveAccessRequestedAt: null,
};

export type OrganizationCommand =
  | { type: 'RegisterOrganization'; organizationId: string; name: string; email: string; activeScopes: readonly string[]; sandboxCreditKobo: number }
  | { type: 'ApproveOrganization' }
  /** The name as the admin DTO checked it (1 to 200 characters, not blank); surrounding spaces are dropped. */
  | { type: 'RenameOrganization'; name: string }
  /** Idempotent: asking again, or once approved, changes nothing. */
  | { type: 'RequestLiveAccess' }
  | { type: 'SuspendOrganization'; reason: string }
  | { type: 'ReinstateOrganization' }
  | { type: 'SetActiveScopes'; scopes: readonly string[] }
  /** The full set of price overrides: scopes left out go back to the configured default. */
  | { type: 'SetScopePrices'; pricesKobo: Readonly<Record<string, unknown>> }
  /** null returns the organization to the configured default. */
  | { type: 'SetRateLimit'; requestsPerMinute: unknown }
  | {
      type: 'IssueApiKey';
      keyId: string;
      environment: Environment;
      name: string | null;
      scopes: readonly string[] | null;
      keyHash: string;
      prefix: string;
      last4: string;
    }
  | { type: 'RevokeApiKey'; keyId: string }
  /** null returns the organization to the configured default. */
  | { type: 'SetRetention'; retentionDays: unknown }
  /** Offboarding; idempotent (the first destruction's time stands). */
  | { type: 'DestroyPersonalData'; at: Date }
  /** Credentials arrive already encrypted: the decider never sees them in plain text. */
  | {
      type: 'ConfigureProvider';
      environment: Environment;
      provider: string;
      credentials: string | null;
      fallback: { provider: string; credentials: string | null } | null;
    };

function inCanonicalOrder(scopes: Iterable<Scope>): Scope[] {
  const set = new Set(scopes);
  return SCOPES.filter((scope) => set.has(scope));
}

/** Every unknown scope name listed, by its position in the input. */
function knownScopes(field: string, scopes: readonly string[]): Scope[] {
  const errors: FieldError[] = [];
  scopes.forEach((scope, index) => {
    if (!isScope(scope)) errors.push({ field: `${field}[${index}]`, message: `unknown scope "${String(scope).slice(0, 50)}"; known scopes: ${SCOPES.join(', ')}` });
  });
  if (errors.length > 0) throw new ValidationFailed(errors);
  return scopes as Scope[];
}

function validPrices(pricesKobo: Readonly<Record<string, unknown>>): Partial<Record<Scope, number>> {
  const errors: FieldError[] = [];
  const prices: Partial<Record<Scope, number>> = {};
  for (const [scope, price] of Object.entries(pricesKobo)) {
    if (!isScope(scope)) {
      errors.push({ field: scope.slice(0, 50), message: `unknown scope; known scopes: ${SCOPES.join(', ')}` });
    } else if (typeof price !== 'number' || !Number.isInteger(price) || price < 0 || price > MAX_PRICE_KOBO) {
      errors.push({ field: scope, message: `must be an integer number of kobo from 0 to ${MAX_PRICE_KOBO}` });
    } else {
      prices[scope] = price;
    }
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return prices;
}

/** Scopes in `scopes` that a provider configured in any environment cannot serve, by provider. */
function unservedScopes(providers: readonly string[], scopes: readonly Scope[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const provider of providers) {
    if (!isProviderName(provider)) continue;
    const missing = scopes.filter((scope) => !serves(provider, scope));
    if (missing.length > 0) {
      errors.push({
        field: 'scopes',
        message: `${provider} cannot serve ${missing.join(', ')} (it serves ${PROVIDER_SCOPES[provider].join(', ')}); deactivate those scopes or choose another provider`,
      });
    }
  }
  return errors;
}

function configuredProviders(providers: OrganizationState['providers']): string[] {
  return Object.values(providers).flatMap((setting) => (setting === undefined ? [] : [setting.provider, ...(setting.fallback === null ? [] : [setting.fallback])]));
}

function validProviderConfiguration(command: Extract<OrganizationCommand, { type: 'ConfigureProvider' }>, state: OrganizationState): FieldError[] {
  const errors: FieldError[] = [];
  const known = (name: string): name is ProviderName => isProviderName(name);
  if (!known(command.provider)) errors.push({ field: 'provider', message: `must be one of ${PROVIDER_NAMES.join(', ')}` });
  if (command.fallback !== null && !known(command.fallback.provider)) errors.push({ field: 'fallback.provider', message: `must be one of ${PROVIDER_NAMES.join(', ')}` });
  if (errors.length > 0) return errors;
  // Test keys spend sandbox money: they never reach a real register.
  if (command.environment === 'test' && (command.provider !== 'sandbox' || command.fallback !== null)) {
    errors.push({ field: 'provider', message: 'the test environment always runs on the sandbox (no upstream, no fallback)' });
  }
  if (command.provider !== 'sandbox' && command.credentials === null) errors.push({ field: 'credentials', message: `are required for ${command.provider}` });
  if (command.fallback !== null) {
    if (command.fallback.provider === command.provider) errors.push({ field: 'fallback.provider', message: 'must differ from the primary provider' });
    // A live check must never quietly come back with made-up data.
    if (command.fallback.provider === 'sandbox') errors.push({ field: 'fallback.provider', message: 'the sandbox cannot be a fallback' });
    if (command.fallback.credentials === null && command.fallback.provider !== 'sandbox')
      errors.push({ field: 'fallback.credentials', message: `are required for ${command.fallback.provider}` });
  }
  const providers = [command.provider, ...(command.fallback === null ? [] : [command.fallback.provider])];
  return [...errors, ...unservedScopes(providers, state.activeScopes)];
}

function validRateLimit(requestsPerMinute: unknown): number | null {
  if (requestsPerMinute === null) return null;
  if (typeof requestsPerMinute !== 'number' || !Number.isInteger(requestsPerMinute) || requestsPerMinute < 1 || requestsPerMinute > MAX_REQUESTS_PER_MINUTE) {
    throw new ValidationFailed([{ field: 'requestsPerMinute', message: `must be an integer from 1 to ${MAX_REQUESTS_PER_MINUTE}, or null for the default` }]);
  }
  return requestsPerMinute;
}

function validRetention(retentionDays: unknown): number | null {
  if (retentionDays === null) return null;
  if (typeof retentionDays !== 'number' || !Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > MAX_RETENTION_DAYS) {
    throw new ValidationFailed([{ field: 'retentionDays', message: `must be an integer from 1 to ${MAX_RETENTION_DAYS}, or null for the default` }]);
  }
  return retentionDays;
}

function requireExisting(state: OrganizationState): string {
  if (state.id === null) throw new NotFound('No organization with that id');
  return state.id;
}

/**
 * What a command means for one organization, as events. Commands that would change nothing
 * (approving an approved organization, revoking a revoked key, ...) decide no events at all.
 */
export function decide(command: OrganizationCommand, state: OrganizationState): OrganizationEvent[] {
  const v = SCHEMA_VERSION;
  if (command.type === 'RegisterOrganization') {
    if (state.id !== null) throw new Conflict('The organization already exists');
    const activeScopes = inCanonicalOrder(knownScopes('activeScopes', command.activeScopes));
    const { organizationId, name, email, sandboxCreditKobo } = command;
    if (!Number.isSafeInteger(sandboxCreditKobo) || sandboxCreditKobo < 0) throw new InvariantViolated(`sandbox credit ${sandboxCreditKobo} is not a non-negative integer`);
    return [{ type: 'OrganizationRegistered', data: { schemaVersion: v, organizationId, name, email, activeScopes, sandboxCreditKobo } }];
  }
  const organizationId = requireExisting(state);
  switch (command.type) {
    case 'RenameOrganization': {
      const name = command.name.trim();
      if (name.length === 0) throw new ValidationFailed([{ field: 'name', message: 'name must not be blank' }]);
      return name === state.name ? [] : [{ type: 'OrganizationRenamed', data: { schemaVersion: v, organizationId, name } }];
    }
    case 'ApproveOrganization':
      return state.approved ? [] : [{ type: 'OrganizationApproved', data: { schemaVersion: v, organizationId } }];
    case 'RequestLiveAccess':
      return state.approved || state.liveAccessRequestedAt !== null ? [] : [{ type: 'LiveAccessRequested', data: { schemaVersion: v, organizationId } }];
    case 'SuspendOrganization':
      return state.status === 'suspended' ? [] : [{ type: 'OrganizationSuspended', data: { schemaVersion: v, organizationId, reason: command.reason } }];
    case 'ReinstateOrganization':
      return state.status !== 'suspended' ? [] : [{ type: 'OrganizationReinstated', data: { schemaVersion: v, organizationId } }];
    case 'SetActiveScopes': {
      const wanted = new Set(knownScopes('scopes', command.scopes));
      const current = new Set(state.activeScopes);
      const unserved = unservedScopes(
        configuredProviders(state.providers),
        [...wanted].filter((scope) => !current.has(scope)),
      );
      if (unserved.length > 0) throw new ValidationFailed(unserved, 'A configured provider cannot serve a scope being activated');
      const events: OrganizationEvent[] = [];
      for (const scope of SCOPES) {
        if (wanted.has(scope) && !current.has(scope)) events.push({ type: 'ScopeActivated', data: { schemaVersion: v, organizationId, scope } });
        if (!wanted.has(scope) && current.has(scope)) events.push({ type: 'ScopeDeactivated', data: { schemaVersion: v, organizationId, scope } });
      }
      return events;
    }
    case 'SetScopePrices': {
      const wanted = validPrices(command.pricesKobo);
      const events: OrganizationEvent[] = [];
      for (const scope of SCOPES) {
        const next = wanted[scope] ?? null;
        const current = state.prices[scope] ?? null;
        if (next !== current) events.push({ type: 'ScopePriceSet', data: { schemaVersion: v, organizationId, scope, priceKobo: next } });
      }
      return events;
    }
    case 'SetRateLimit': {
      const requestsPerMinute = validRateLimit(command.requestsPerMinute);
      return requestsPerMinute === state.rateLimitPerMinute ? [] : [{ type: 'RateLimitSet', data: { schemaVersion: v, organizationId, requestsPerMinute } }];
    }
    case 'IssueApiKey': {
      if (state.keys.has(command.keyId)) throw new Conflict('A key with that id already exists');
      if (state.keys.size >= MAX_KEYS_PER_ORGANIZATION) throw new Conflict(`An organization holds at most ${MAX_KEYS_PER_ORGANIZATION} keys`);
      let scopes: Scope[] | null = null;
      if (command.scopes !== null) {
        scopes = inCanonicalOrder(knownScopes('scopes', command.scopes));
        if (scopes.length === 0) throw new ValidationFailed([{ field: 'scopes', message: 'must name at least one scope, or be left out for every active scope' }]);
      }
      return [
        {
          type: 'ApiKeyIssued',
          data: {
            schemaVersion: v,
            organizationId,
            keyId: command.keyId,
            name: command.name,
            keyHash: command.keyHash,
            prefix: command.prefix,
            last4: command.last4,
            environment: command.environment,
            scopes,
          },
        },
      ];
    }
    case 'ConfigureProvider': {
      const errors = validProviderConfiguration(command, state);
      if (errors.length > 0) throw new ValidationFailed(errors);
      return [
        {
          type: 'ProviderConfigured',
          data: {
            schemaVersion: v,
            organizationId,
            environment: command.environment,
            provider: command.provider,
            fallback: command.fallback?.provider ?? null,
            credentials: command.credentials,
            fallbackCredentials: command.fallback?.credentials ?? null,
          },
        },
      ];
    }
    case 'RevokeApiKey': {
      const key = state.keys.get(command.keyId);
      if (key === undefined) throw new NotFound('No API key with that id');
      return key.revokedAt !== null ? [] : [{ type: 'ApiKeyRevoked', data: { schemaVersion: v, organizationId, keyId: command.keyId } }];
    }
    case 'SetRetention': {
      const retentionDays = validRetention(command.retentionDays);
      return retentionDays === state.retentionDays ? [] : [{ type: 'RetentionSet', data: { schemaVersion: v, organizationId, retentionDays } }];
    }
    case 'DestroyPersonalData':
      return state.personalDataDestroyedAt !== null ? [] : [{ type: 'PersonalDataDestroyed', data: { schemaVersion: v, organizationId, destroyedAt: command.at.toISOString() } }];
    default: {
      const _exhaustive: never = command;
      throw new InvariantViolated(`unhandled organization command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

/** The state after one more event; `meta.occurredAt` is when it happened (from its metadata). */
export function evolve(state: OrganizationState, event: OrganizationEvent, meta: EventMeta): OrganizationState {
  switch (event.type) {
    case 'OrganizationRegistered':
      return {
        ...initialState,
        id: event.data.organizationId,
        name: event.data.name,
        email: event.data.email,
        activeScopes: inCanonicalOrder(event.data.activeScopes.filter(isScope)),
        createdAt: meta.occurredAt,
        sandboxCreditKobo: event.data.sandboxCreditKobo ?? 0,
      };
    case 'OrganizationRenamed':
      return { ...state, name: event.data.name };
    case 'LiveAccessRequested':
      return state.liveAccessRequestedAt !== null ? state : { ...state, liveAccessRequestedAt: meta.occurredAt };
    case 'OrganizationApproved':
      return { ...state, approved: true, status: state.status === 'pending' ? 'approved' : state.status };
    case 'OrganizationSuspended':
      return { ...state, status: 'suspended', suspensionReason: event.data.reason };
    case 'OrganizationReinstated':
      return { ...state, status: state.approved ? 'approved' : 'pending', suspensionReason: null };
    case 'ScopeActivated':
      return isScope(event.data.scope) ? { ...state, activeScopes: inCanonicalOrder([...state.activeScopes, event.data.scope]) } : state;
    case 'ScopeDeactivated':
      return { ...state, activeScopes: state.activeScopes.filter((scope) => scope !== event.data.scope) };
    case 'ScopePriceSet': {
      if (!isScope(event.data.scope)) return state;
      const prices = { ...state.prices };
      if (event.data.priceKobo === null) delete prices[event.data.scope];
      else prices[event.data.scope] = event.data.priceKobo;
      return { ...state, prices };
    }
    case 'RateLimitSet':
      return { ...state, rateLimitPerMinute: event.data.requestsPerMinute };
    case 'ProviderConfigured': {
      if (event.data.environment !== 'test' && event.data.environment !== 'live') return state;
      return { ...state, providers: { ...state.providers, [event.data.environment]: { provider: event.data.provider, fallback: event.data.fallback } } };
    }
    case 'ApiKeyIssued': {
      const keys = new Map(state.keys);
      keys.set(event.data.keyId, {
        id: event.data.keyId,
        name: event.data.name,
        prefix: event.data.prefix,
        last4: event.data.last4,
        environment: event.data.environment,
        scopes: event.data.scopes,
        createdAt: meta.occurredAt,
        revokedAt: null,
      });
      return { ...state, keys };
    }
    case 'ApiKeyRevoked': {
      const key = state.keys.get(event.data.keyId);
      if (key === undefined || key.revokedAt !== null) return state;
      const keys = new Map(state.keys);
      keys.set(event.data.keyId, { ...key, revokedAt: meta.occurredAt });
      return { ...state, keys };
    }
    case 'RetentionSet':
      return { ...state, retentionDays: event.data.retentionDays };
    case 'PersonalDataDestroyed':
      return state.personalDataDestroyedAt !== null ? state : { ...state, personalDataDestroyedAt: new Date(event.data.destroyedAt) };
    default: {
      const _exhaustive: never = event;
      throw new InvariantViolated(`unhandled organization event ${(_exhaustive as { type: string }).type}`);
    }
  }
}

export const organizationDecider: Decider<OrganizationState, OrganizationCommand, OrganizationEvent> = { initialState, decide, evolve };
