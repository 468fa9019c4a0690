import { createHash } from 'node:crypto';
import { InvariantViolated, ValidationFailed, type FieldError } from '../common/errors.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import { isScope, SCOPES, type Scope } from '../scopes/scopes.js';
import { SUBJECT_KINDS, type SubjectKind } from '../data-protection/blind-index.js';

/**
 * The inputs of each scope (the spec's table; face_match is ours: `image` plus `nin` or `bvn`).
 * Validation is pure and lists every problem at once. Messages name fields and rules, never values:
 * the values are personal data.
 */

/** face_match images: decoded size bounds (the HTTP body limit is 2 MiB). */
export const MAX_IMAGE_BYTES = 1024 * 1024;
export const MIN_IMAGE_BYTES = 64;
/** Any single string input longer than this is refused before pattern checks (images excepted). */
const MAX_FIELD_LENGTH = 64;

/** An input's rule: its check, and what the OpenAPI document says of it (the same regex as the check). */
export interface InputFormat {
  readonly check: (value: string) => string | null;
  readonly regex?: RegExp;
  readonly description: string;
  /** A value that passes, and that the sandbox answers `found` (docs/sandbox.md). */
  readonly example: string;
  /** For an input that is a file's content: the media types it takes (the console offers a file picker). */
  readonly mediaTypes?: readonly string[];
}

export interface FieldRule {
  readonly required: boolean;
  readonly format: InputFormat;
}

const pattern = (regex: RegExp, message: string, description: string, example: string): InputFormat => ({
  check: (value: string): string | null => (regex.test(value) ? null : message),
  regex,
  description,
  example,
});

const NIN = pattern(/^\d{11}$/, 'must be the 11-digit NIN', 'the 11-digit National Identification Number', '21440414976');
const BVN = pattern(/^\d{11}$/, 'must be the 11-digit BVN', 'the 11-digit Bank Verification Number', '22126025250');
/** Nigerian mobile numbers: 070/080/081/090/091 + 8 digits, or the same after +234 / 234. */
export const PHONE_PATTERN = /^(?:0|\+234|234)[789][01]\d{8}$/;
const PHONE = pattern(
  PHONE_PATTERN,
  'must be a Nigerian phone number: 080XXXXXXXX (11 digits), +234XXXXXXXXXX or 234XXXXXXXXXX',
  'a Nigerian mobile number: 080XXXXXXXX, +234XXXXXXXXXX or 234XXXXXXXXXX (one number in any of its forms)',
  '08150292236',
);
const VNIN = pattern(/^[A-Za-z0-9]{16}$/, 'must be a 16-character virtual NIN token (letters and digits)', 'the 16-character virtual NIN token (letters and digits; case does not matter)', 'YS79377970479239');
const VIN = pattern(
  /^[A-Za-z0-9]{19}$/,
  "must be the 19-character Voter Identification Number of a voter's card (letters and digits)",
  "the 19-character Voter Identification Number of a permanent voter's card (case does not matter)",
  '70C99262607B747FB36',
);
const PASSPORT = pattern(/^[A-Za-z]\d{8}$/, 'must be a Nigerian passport number: a letter followed by 8 digits', 'a Nigerian passport number: a letter and 8 digits', 'B43975538');
const ACCOUNT = pattern(/^\d{10}$/, 'must be the 10-digit account number (NUBAN)', 'the 10-digit account number (NUBAN)', '7753968106');
const BANK = pattern(
  /^[A-Za-z0-9][A-Za-z0-9 &.()_-]{0,49}$/,
  'must be a bank code or identifier (up to 50 letters, digits, spaces or &.()_-)',
  'a bank code (`035`) or name (`Wema Bank`, `GTBank`): up to 50 letters, digits, spaces or &.()_-',
  '035',
);

export type ImageType = 'image/jpeg' | 'image/png';

export interface DecodedImage {
  readonly contentType: ImageType;
  readonly bytes: Buffer;
}

/** Base64 (optionally as a data URL) of a JPEG or PNG, sniffed by its magic bytes, within the size bounds. */
export function decodeImage(value: string): DecodedImage | string {
  const match = /^data:image\/(?:jpeg|jpg|png);base64,(.*)$/s.exec(value);
  const base64 = (match === null ? value : match[1]).replace(/\s+/g, '');
  if (base64.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || base64.length % 4 !== 0) return 'must be base64 of a JPEG or PNG image';
  if ((base64.length / 4) * 3 > MAX_IMAGE_BYTES + 2) return `must be at most ${MAX_IMAGE_BYTES} bytes once decoded`;
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length < MIN_IMAGE_BYTES) return `must be at least ${MIN_IMAGE_BYTES} bytes once decoded`;
  if (bytes.length > MAX_IMAGE_BYTES) return `must be at most ${MAX_IMAGE_BYTES} bytes once decoded`;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { contentType: 'image/jpeg', bytes };
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return { contentType: 'image/png', bytes };
  return 'must be a JPEG or PNG image';
}

/** A 1×1 PNG (67 bytes): the smallest image face_match takes. */
const PNG_EXAMPLE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const IMAGE: InputFormat = {
  check: (value: string): string | null => {
    const decoded = decodeImage(value);
    return typeof decoded === 'string' ? decoded : null;
  },
  description: `base64 (or a data:image/jpeg;base64, or data:image/png;base64, URL) of a JPEG or PNG, ${MIN_IMAGE_BYTES} bytes to 1 MiB once decoded; never stored or echoed`,
  example: PNG_EXAMPLE,
  mediaTypes: ['image/jpeg', 'image/png'],
};

export const SCOPE_INPUTS: Readonly<Record<Scope, Readonly<Record<string, FieldRule>>>> = {
  nin: { nin: { required: true, format: NIN } },
  pnv: { phone: { required: true, format: PHONE } },
  vnin: { vnin: { required: true, format: VNIN } },
  bvn: { bvn: { required: true, format: BVN } },
  pvc: { vin: { required: true, format: VIN } },
  passport: { passport_number: { required: true, format: PASSPORT } },
  bank_account: { bank: { required: true, format: BANK }, account_number: { required: true, format: ACCOUNT } },
  premium_bank_account: { account_number: { required: true, format: ACCOUNT }, bank: { required: false, format: BANK } },
  phone: { phone: { required: true, format: { ...PHONE, example: '08131346060' } } },
  // One of nin / bvn is required; checked below (FACE_MATCH_SUBJECTS).
  face_match: { image: { required: true, format: IMAGE }, nin: { required: false, format: NIN }, bvn: { required: false, format: BVN } },
};

/** A request body that passes validation, and that the sandbox answers `found`: the required inputs, and face_match's nin (it takes exactly one of nin or bvn). */
export function scopeExample(scope: Scope): Record<string, string> {
  const example: Record<string, string> = {};
  for (const [field, rule] of Object.entries(SCOPE_INPUTS[scope])) {
    if (rule.required || (scope === 'face_match' && field === 'nin')) example[field] = rule.format.example;
  }
  return example;
}

export interface ValidInputs {
  readonly scope: Scope;
  /** What the provider gets (in memory only). */
  readonly input: Readonly<Record<string, string>>;
  /** The inputs echoed back and recorded in the event: face_match images are reduced to a digest. */
  readonly request: JsonObject;
}

/** 422 for a missing or unknown scope: the spec lists both under "missing or invalid inputs". */
export function parseScope(value: unknown): Scope {
  if (value === undefined || value === null || value === '') {
    throw new ValidationFailed([{ field: 'scope', message: `a scope is required in the path: one of ${SCOPES.join(', ')}` }], 'No scope in the path');
  }
  if (!isScope(value)) throw new ValidationFailed([{ field: 'scope', message: `must be one of ${SCOPES.join(', ')}` }], 'Unknown scope');
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates a scope's body; throws ValidationFailed listing every field error. */
export function validateInputs(scope: Scope, given: unknown): ValidInputs {
  const rules = SCOPE_INPUTS[scope];
  // No body at all reports each required field by name.
  const body = given === undefined || given === null ? {} : given;
  if (!isPlainObject(body)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object of the scope inputs' }]);
  const errors: FieldError[] = [];
  const input: Record<string, string> = {};

  for (const field of Object.keys(body).slice(0, 20)) {
    if (!(field in rules)) errors.push({ field, message: `is not an input of ${scope} (allowed: ${Object.keys(rules).join(', ')})` });
  }
  for (const [field, rule] of Object.entries(rules)) {
    const value = body[field];
    if (value === undefined || value === null) {
      if (rule.required) errors.push({ field, message: 'is required' });
      continue;
    }
    if (typeof value !== 'string') {
      errors.push({ field, message: 'must be a string' });
      continue;
    }
    if (value.trim() === '') {
      errors.push({ field, message: 'must not be empty' });
      continue;
    }
    if (field !== 'image' && value.length > MAX_FIELD_LENGTH) {
      errors.push({ field, message: `must be at most ${MAX_FIELD_LENGTH} characters` });
      continue;
    }
    const problem = rule.format.check(value);
    if (problem !== null) errors.push({ field, message: problem });
    else input[field] = value;
  }
  if (scope === 'face_match') {
    const given = FACE_MATCH_SUBJECTS.filter((field) => body[field] !== undefined && body[field] !== null);
    if (given.length === 0) errors.push({ field: 'nin', message: 'one of nin or bvn is required to compare the image against' });
    if (given.length === 2) errors.push({ field: 'bvn', message: 'give nin or bvn, not both' });
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { scope, input, request: echo(scope, input) };
}

function echo(scope: Scope, input: Readonly<Record<string, string>>): JsonObject {
  const request: JsonObject = { ...input };
  if (scope === 'face_match' && input.image !== undefined) {
    const decoded = decodeImage(input.image);
    if (typeof decoded === 'string') throw new InvariantViolated('an image that passed validation does not decode');
    // Raw image bytes never go into events or responses: the echo carries what identifies the image.
    request.image = { contentType: decoded.contentType, sizeBytes: decoded.bytes.length, sha256: createHash('sha256').update(decoded.bytes).digest('hex') };
  }
  return request;
}

/** face_match compares its image with the portrait of exactly one of these. */
export const FACE_MATCH_SUBJECTS = ['nin', 'bvn'] as const;

export const SUBJECT_FORMATS: Readonly<Record<SubjectKind, InputFormat>> = {
  nin: NIN,
  bvn: BVN,
  phone: PHONE,
  account_number: ACCOUNT,
  vnin: VNIN,
  vin: VIN,
  passport_number: PASSPORT,
};

/** The bank of a data subject's account number (`bank` beside `account_number`), as the bank-account checks take it. */
export const SUBJECT_BANK_FORMAT: InputFormat = BANK;

/**
 * A data subject's identifier (`POST /v1/data-subjects/…`): exactly one of the identifiers,
 * validated as for the checks; an account number with its bank (`bank`), or without it for the
 * checks that named none.
 */
export function validateSubject(given: unknown): { kind: SubjectKind; value: string; bank?: string } {
  const body = given === undefined || given === null ? {} : given;
  if (!isPlainObject(body)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object with one identifier' }]);
  const bank = body.bank;
  if (bank !== undefined) {
    if (body.account_number === undefined) throw new ValidationFailed([{ field: 'bank', message: 'is given only with account_number' }]);
    if (typeof bank !== 'string') throw new ValidationFailed([{ field: 'bank', message: 'must be a string' }]);
    const problem = bank.length > MAX_FIELD_LENGTH ? `must be at most ${MAX_FIELD_LENGTH} characters` : BANK.check(bank);
    if (problem !== null) throw new ValidationFailed([{ field: 'bank', message: problem }]);
  }
  const fields = Object.keys(body).filter((field) => field !== 'bank');
  const unknown = fields.filter((field) => !(SUBJECT_KINDS as readonly string[]).includes(field)).slice(0, 20);
  if (unknown.length > 0) throw new ValidationFailed(unknown.map((field) => ({ field: field.slice(0, 50), message: `is not an identifier (allowed: ${SUBJECT_KINDS.join(', ')})` })));
  if (fields.length !== 1) throw new ValidationFailed([{ field: 'body', message: `give exactly one of ${SUBJECT_KINDS.join(', ')}` }]);
  const kind = fields[0] as SubjectKind;
  const value = body[kind];
  if (typeof value !== 'string') throw new ValidationFailed([{ field: kind, message: 'must be a string' }]);
  const problem = value.length > MAX_FIELD_LENGTH ? `must be at most ${MAX_FIELD_LENGTH} characters` : SUBJECT_FORMATS[kind].check(value);
  if (problem !== null) throw new ValidationFailed([{ field: kind, message: problem }]);
  return typeof bank === 'string' ? { kind, value, bank } : { kind, value };
}
