import { bankAccount } from './registry/bank-account.js';
import { bvn } from './registry/bvn.js';
import { faceMatch } from './registry/face-match.js';
import { nin } from './registry/nin.js';
import { passport } from './registry/passport.js';
import { phone } from './registry/phone.js';
import { pnv } from './registry/pnv.js';
import { premiumBankAccount } from './registry/premium-bank-account.js';
import { pvc } from './registry/pvc.js';
import { vnin } from './registry/vnin.js';
import type { ScopeDefinition } from './scope-definition.js';

/**
 * The scope registry: every scope is one definition (src/scopes/registry/<scope>.ts), listed here
 * in the order the API and its document list them. Everything else (validation, the OpenAPI
 * operations and schemas, default prices, the sandbox, the list of scopes) reads it.
 */
const BUILT_IN = [nin, pnv, vnin, bvn, pvc, passport, bankAccount, premiumBankAccount, phone, faceMatch] as const;

export type Scope = (typeof BUILT_IN)[number]['name'];

/** The highest price of one check of any scope, in kobo (₦1,000,000): configured defaults and organizations' overrides alike. */
export const MAX_PRICE_KOBO = 100_000_000;

const definitions = new Map<string, ScopeDefinition>();
const names: string[] = [];

/** Every registered scope, in order: one list, which `registerScope` extends in place. */
export const SCOPES: readonly Scope[] = names as Scope[];

/**
 * Adds a scope: the built-in ones at load, below. A test may register one more before it builds the
 * application (test/e2e/scope-registry.e2e-spec.ts): later registrations reach only what is built
 * after them.
 */
export function registerScope(definition: ScopeDefinition): void {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(definition.name)) throw new Error(`invariant: a scope's name is lower case, digits and _: ${definition.name}`);
  if (definitions.has(definition.name)) throw new Error(`invariant: the scope ${definition.name} is registered twice`);
  if (!Number.isSafeInteger(definition.defaultPriceKobo) || definition.defaultPriceKobo < 0 || definition.defaultPriceKobo > MAX_PRICE_KOBO) {
    throw new Error(`invariant: the default price of ${definition.name} is out of bounds`);
  }
  definitions.set(definition.name, definition);
  names.push(definition.name);
}

for (const definition of BUILT_IN) registerScope(definition);

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && definitions.has(value);
}

export function scopeDefinition(scope: Scope): ScopeDefinition {
  const definition = definitions.get(scope);
  if (definition === undefined) throw new Error(`invariant: unknown scope ${String(scope)}`);
  return definition;
}
