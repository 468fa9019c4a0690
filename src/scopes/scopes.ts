/** The scopes of the spec. `category` and `countryCode` are fixed for all of them. */
export const SCOPES = ['nin', 'pnv', 'vnin', 'bvn', 'pvc', 'passport', 'bank_account', 'premium_bank_account', 'phone', 'face_match'] as const;
export type Scope = (typeof SCOPES)[number];

/** The highest price of one check of any scope, in kobo (₦1,000,000): configured defaults and organizations' overrides alike. */
export const MAX_PRICE_KOBO = 100_000_000;

export const SCOPE_CATEGORY = 'kyc';
export const COUNTRY_CODE = 'NG';

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}
