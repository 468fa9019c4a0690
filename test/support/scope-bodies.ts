import { sandboxKeyInput } from '../../src/providers/sandbox.provider.js';
import type { Scope } from '../../src/scopes/scopes.js';
import { scopeExample } from '../../src/verifications/verification-inputs.js';

/**
 * A valid body of any scope that the sandbox answers by `lastDigit` (1 not_found, 2 failure, …):
 * the scope's example with the last character of its key input replaced. Suites with hand-picked
 * bodies per scope fall back to it, so a new scope needs no entry in them.
 */
export function scopeBody(scope: Scope, lastDigit: string): Record<string, string> {
  const example = scopeExample(scope);
  const key = sandboxKeyInput(scope, example);
  const field = Object.keys(example).find((name) => example[name] === key);
  if (field === undefined || key === '') throw new Error(`the example of ${scope} has no key input`);
  return { ...example, [field]: `${key.slice(0, -1)}${lastDigit}` };
}
