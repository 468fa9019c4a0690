import type { FieldRule } from './input-formats.js';
import type { FieldError, JsonObject, Schema } from './shapes.js';
import type { ResultField } from './scope-results.js';

/** How the sandbox answers an input: the last digit of its key input decides (docs/sandbox.md). */
export type SandboxBehaviour = 'found' | 'not_found' | 'failure' | 'slow' | 'no_match';

export interface SandboxRecord {
  readonly result: JsonObject;
  readonly portrait?: Buffer;
}

/** The sandbox's side of a scope: a pure function of the inputs. */
export interface ScopeSandbox {
  /** The input whose last digit decides the outcome. */
  readonly keyInput: (input: Readonly<Record<string, string>>) => string;
  /** A last digit 4 answers found with no match (face_match), not plain found. */
  readonly noMatchOnFour?: true;
  /** The found record (behaviour `found`, or `no_match`), describing the owner of the key input. */
  readonly record: (input: Readonly<Record<string, string>>, behaviour: 'found' | 'no_match') => SandboxRecord;
}

/**
 * Everything a scope is, in one object: `src/scopes/registry/<scope>.ts` exports one, and
 * `registry.ts` lists them. `POST /v1/{name}`, its validation, OpenAPI operation and schemas, its
 * default price and its sandbox answers all come from here; what each upstream asks and answers is
 * in that provider's scope map (src/providers/*.scopes.ts).
 */
export interface ScopeDefinition<Name extends string = string> {
  /** The path segment and the `scope` of the verification: lower case, digits and `_`. */
  readonly name: Name;
  /** The OpenAPI operation's summary and the first sentence of its description. */
  readonly summary: string;
  readonly description: string;
  /** Default price of one check, in kobo (SCOPE_PRICES and organizations override it). */
  readonly defaultPriceKobo: number;
  readonly inputs: Readonly<Record<string, FieldRule>>;
  /** A rule across inputs, beyond each one's own (face_match: exactly one of nin or bvn), and what the input schema adds for it. */
  readonly across?: { readonly problems: (body: Readonly<Record<string, unknown>>) => FieldError[]; readonly schema: Schema };
  /** The OpenAPI example and the console's: by default the required inputs' examples. */
  readonly example?: Readonly<Record<string, string>>;
  /** The result fields any provider may answer (src/scopes/scope-results.ts). */
  readonly results: Readonly<Record<string, ResultField>>;
  readonly sandbox: ScopeSandbox;
}

/** Types a definition, keeping its name's literal type (the `Scope` union is made of them). */
export function defineScope<const Name extends string>(definition: ScopeDefinition<Name>): ScopeDefinition<Name> {
  return definition;
}
