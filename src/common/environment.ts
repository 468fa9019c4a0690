/** `test` wallets and keys are sandbox money and checks; `live` ones are real. */
export type Environment = 'test' | 'live';
export const ENVIRONMENTS: readonly Environment[] = ['test', 'live'];

export function isEnvironment(value: unknown): value is Environment {
  return value === 'test' || value === 'live';
}
