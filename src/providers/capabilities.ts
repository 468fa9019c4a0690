import { SCOPES, type Scope } from '../scopes/scopes.js';

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
 * The scopes each provider serves with the spec's inputs. Both upstreams document passport lookups
 * only with the holder's surname, and Prembly's voter's-card lookup also needs the state and last
 * name: the spec's inputs carry neither, so those scopes are not served (see src/providers/README.md).
 */
export const PROVIDER_SCOPES: Readonly<Record<ProviderName, readonly Scope[]>> = {
  sandbox: SCOPES,
  dojah: ['nin', 'pnv', 'vnin', 'bvn', 'pvc', 'bank_account', 'premium_bank_account', 'phone', 'face_match'],
  prembly: ['nin', 'pnv', 'vnin', 'bvn', 'bank_account', 'premium_bank_account', 'phone', 'face_match'],
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
