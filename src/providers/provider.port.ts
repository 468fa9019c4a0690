import type { FieldError } from '../common/errors.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import type { Scope } from '../scopes/scopes.js';

export interface ProviderCallOptions {
  /** The provider gives up after this long; the caller also aborts `signal` then. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/**
 * What a provider answers. A portrait, when the register holds one, travels as bytes beside the
 * result and never inside it: the caller stores it encrypted and puts a signed link in the result.
 */
export type ProviderOutcome =
  | { readonly outcome: 'found'; readonly result: JsonObject; readonly portrait?: Buffer }
  | { readonly outcome: 'not_found' }
  | { readonly outcome: 'failed'; readonly reasonCode: string; readonly retryable: boolean };

/** The upstream registers behind one port: the sandbox for test keys, HTTP upstreams (Dojah, Prembly) for live ones. */
export abstract class VerificationProvider {
  abstract readonly name: string;
  /** Inputs valid for the spec that this provider still cannot take (e.g. a bank code it requires): 422 before anything is written. */
  inputProblems(_scope: Scope, _input: Readonly<Record<string, string>>): FieldError[] {
    return [];
  }
  abstract verify(scope: Scope, input: Readonly<Record<string, string>>, options: ProviderCallOptions): Promise<ProviderOutcome>;
}
