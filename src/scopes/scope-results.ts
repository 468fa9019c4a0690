/**
 * The kinds of result field a scope may answer (each scope's `results`, src/scopes/registry/),
 * whichever provider ran it: what the normaliser (src/providers/normalise.ts) and the sandbox write,
 * and the portrait link the service adds. Every field may be absent (an upstream may not have it; a
 * not-found result is `{}`). The OpenAPI document's result schemas are made from them, and tests
 * check the normaliser and the sandbox against them. Below: groups of fields several scopes share.
 */
export type ResultFieldKind =
  /** A string as the register holds it. */
  | 'text'
  /** `YYYY-MM-DD`. */
  | 'date'
  /** `Male`, `Female`, or another value as the register sent it. */
  | 'gender'
  /** A phone number in the local `080…` form when Nigerian, else as sent. */
  | 'phone'
  | 'boolean'
  /** A number from 0 to 100. */
  | 'percent'
  /** The signed portrait link. */
  | 'url'
  /** When the portrait link stops working (ISO 8601). */
  | 'timestamp';

export interface ResultField {
  readonly kind: ResultFieldKind;
  readonly description?: string;
}

export const text = (description?: string): ResultField => (description === undefined ? { kind: 'text' } : { kind: 'text', description });
export const NAMES = { firstName: text(), middleName: text(), lastName: text() } as const;
export const IDENTITY = { ...NAMES, gender: { kind: 'gender' }, dateOfBirth: { kind: 'date' } } as const satisfies Record<string, ResultField>;
export const PORTRAIT = {
  portraitUrl: { kind: 'url', description: 'a signed link to the portrait (GET /v1/portraits/{id}); each read of the verification signs a fresh one' },
  portraitUrlExpiresAt: { kind: 'timestamp', description: 'when portraitUrl stops working' },
} as const satisfies Record<string, ResultField>;
export const NIN_RECORD = {
  nin: text('the NIN of the record'),
  ...IDENTITY,
  phoneNumber: { kind: 'phone' },
  stateOfOrigin: text(),
  lgaOfOrigin: text(),
  residentialAddress: text(),
  stateOfResidence: text(),
  ...PORTRAIT,
} as const satisfies Record<string, ResultField>;
export const BANK_ACCOUNT = { accountNumber: text(), accountName: text(), bankCode: text(), bankName: text() } as const;
