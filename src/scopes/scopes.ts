/** The scopes of the spec. `category` and `countryCode` are fixed for all of them. */
export const SCOPES = ['nin', 'pnv', 'vnin', 'bvn', 'pvc', 'passport', 'bank_account', 'premium_bank_account', 'phone', 'face_match'] as const;
export type Scope = (typeof SCOPES)[number];

export const SCOPE_CATEGORY = 'kyc';
export const COUNTRY_CODE = 'NG';

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}
