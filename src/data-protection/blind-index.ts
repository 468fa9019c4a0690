import { createHmac } from 'node:crypto';
import { resolveBank } from '../scopes/banks.js';

/** The identifiers a data subject can be found by. */
export const SUBJECT_KINDS = ['nin', 'bvn', 'phone', 'account_number', 'vnin', 'vin', 'passport_number'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

/** At most this many tokens are indexed per verification (inputs and result together). */
export const MAX_TOKENS_PER_VERIFICATION = 16;

/** Nigerian numbers in their local form: `080…`, `+234 80…` and `23480…` are one number. */
export function normalisePhone(value: string): string {
  const digits = value.replace(/[\s\-().]/g, '').replace(/^\+/, '');
  if (/^234\d{10}$/.test(digits)) return `0${digits.slice(3)}`;
  if (/^\d{10}$/.test(digits) && !digits.startsWith('0')) return `0${digits}`;
  return digits;
}

export function normaliseIdentifier(kind: SubjectKind, value: string): string {
  if (kind === 'phone') return normalisePhone(value);
  return value.replace(/\s+/g, '').toUpperCase();
}

/** A bank as its code when the bank directory knows it (`GTBank`, `gt bank plc` and `058` are one bank), else as given, case aside. */
export function normaliseBank(bank: string): string {
  return resolveBank(bank).code.toUpperCase();
}

/**
 * What a token is computed from: the kind and the normalised identifier; for a bank account, the
 * normalised bank too, since account numbers are unique only within a bank. An account named with
 * no bank (premium_bank_account may leave it out) has a token of its own, unlike any bank's.
 */
function normalisedOf(kind: SubjectKind, value: string, bank: string | undefined): string {
  const identifier = `${kind}\n${normaliseIdentifier(kind, value)}`;
  return kind === 'account_number' && bank !== undefined ? `${identifier}\n${normaliseBank(bank)}` : identifier;
}

/**
 * HMAC-SHA-256 of the normalised identifier under the organization's index key: unrelated across
 * organizations. `bank` counts for a bank account only.
 */
export function blindToken(indexKey: Buffer, kind: SubjectKind, value: string, bank?: string): string {
  return tokenOf(indexKey, normalisedOf(kind, value, bank));
}

/** What blindToken computes its token from (kept sealed for a subject's holds and requests: subject-identifiers.ts). */
export const normalisedSubject = (kind: SubjectKind, value: string, bank?: string): string => normalisedOf(kind, value, bank);

/** The token of an identifier in its normalised form (`kind` newline value). */
export const tokenOf = (indexKey: Buffer, normalised: string): string => createHmac('sha256', indexKey).update(normalised, 'utf8').digest('base64url');

/** The fields that hold an identifier, by name (a Map: a field named like an Object method is no identifier). */
const FIELD_KINDS: ReadonlyMap<string, SubjectKind> = new Map([
  ['nin', 'nin'],
  ['bvn', 'bvn'],
  ['phone', 'phone'],
  ['phone_number', 'phone'],
  ['phoneNumber', 'phone'],
  ['phoneNumber1', 'phone'],
  ['phoneNumber2', 'phone'],
  ['account_number', 'account_number'],
  ['accountNumber', 'account_number'],
  ['vnin', 'vnin'],
  ['vin', 'vin'],
  ['passport_number', 'passport_number'],
  ['passportNumber', 'passport_number'],
]);

/** The fields that name a bank account's bank, in order of preference: a request's `bank`, a result's code, then its name. */
const BANK_FIELDS = ['bank', 'bankCode', 'bank_code', 'bankName', 'bank_name'] as const;

function bankIn(values: Readonly<Record<string, unknown>>): string | undefined {
  for (const field of BANK_FIELDS) {
    const value = Object.hasOwn(values, field) ? values[field] : undefined;
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

/** The identifiers among an object's top-level fields (inputs, or a result), by kind; a bank account with the bank the same object names. */
export function identifiersIn(values: Readonly<Record<string, unknown>>): { kind: SubjectKind; value: string; bank?: string }[] {
  const found: { kind: SubjectKind; value: string; bank?: string }[] = [];
  for (const field in values) {
    const kind = FIELD_KINDS.get(field);
    if (kind === undefined || !Object.hasOwn(values, field)) continue;
    const value = values[field];
    if (typeof value !== 'string' || value.trim() === '') continue;
    const bank = kind === 'account_number' ? bankIn(values) : undefined;
    found.push(bank === undefined ? { kind, value } : { kind, value, bank });
  }
  return found;
}

/** The distinct tokens of the identifiers in `sources`, bounded. */
export function tokensOf(indexKey: Buffer, ...sources: readonly Readonly<Record<string, unknown>>[]): string[] {
  return newTokensOf(indexKey, sources, []);
}

/**
 * The distinct tokens of the identifiers in `sources` that `known` does not carry (a result's, say,
 * beside its request's, which were indexed with the request), bounded. Known identifiers are told
 * apart by their normalised form, so no token is computed for them.
 */
export function newTokensOf(indexKey: Buffer, sources: readonly Readonly<Record<string, unknown>>[], known: readonly Readonly<Record<string, unknown>>[]): string[] {
  const seen = new Set<string>();
  for (const source of known) for (const { kind, value, bank } of identifiersIn(source)) seen.add(normalisedOf(kind, value, bank));
  const tokens: string[] = [];
  for (const source of sources) {
    for (const { kind, value, bank } of identifiersIn(source)) {
      const normalised = normalisedOf(kind, value, bank);
      if (seen.has(normalised)) continue;
      seen.add(normalised);
      tokens.push(tokenOf(indexKey, normalised));
      if (tokens.length === MAX_TOKENS_PER_VERIFICATION) return tokens;
    }
  }
  return tokens;
}
