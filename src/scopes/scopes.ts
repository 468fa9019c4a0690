export { isScope, MAX_PRICE_KOBO, SCOPES, scopeDefinition, type Scope } from './registry.js';

/** `category` and `countryCode` are fixed for every scope. */
export const SCOPE_CATEGORY = 'kyc';
export const COUNTRY_CODE = 'NG';
