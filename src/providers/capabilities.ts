import { SCOPES, type Scope } from '../scopes/scopes.js';
import { DOJAH_SCOPES } from './dojah.scopes.js';
import { PREMBLY_SCOPES } from './prembly.scopes.js';

/** Who can answer a check: the built-in sandbox and the HTTP upstreams. */
export const PROVIDER_NAMES = ['sandbox', 'dojah', 'prembly'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];
export type UpstreamName = Exclude<ProviderName, 'sandbox'>;
export const UPSTREAM_NAMES: readonly UpstreamName[] = ['dojah', 'prembly'];

export function isProviderName(value: unknown): value is ProviderName {
  return typeof value === 'string' && (PROVIDER_NAMES as readonly string[]).includes(value);
}

export function isUpstreamName(value: unknown): value is UpstreamName {
  return typeof value === 'string' && (UPSTREAM_NAMES as readonly string[]).includes(value);
}

/**
 * The scopes each provider serves with the spec's inputs: the sandbox every one, an upstream those
 * its scope map (`<name>.scopes.ts`) has. Both upstreams document passport lookups only with the
 * holder's surname, and Prembly's voter's-card lookup also needs the state and last name: the
 * spec's inputs carry neither, so those scopes are not served (see src/providers/README.md).
 */
export const PROVIDER_SCOPES: Readonly<Record<ProviderName, readonly Scope[]>> = {
  sandbox: SCOPES,
  dojah: SCOPES.filter((scope) => DOJAH_SCOPES[scope] !== undefined),
  prembly: SCOPES.filter((scope) => PREMBLY_SCOPES[scope] !== undefined),
};

export function serves(provider: ProviderName, scope: Scope): boolean {
  return PROVIDER_SCOPES[provider].includes(scope);
}

/** The credentials each provider needs, by field name (all strings). */
export const CREDENTIAL_FIELDS: Readonly<Record<ProviderName, readonly string[]>> = {
  sandbox: [],
  dojah: ['appId', 'secretKey'],
  prembly: ['appId', 'apiKey'],
};
