import { ValidationFailed, type FieldError } from '../common/errors.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import { isScope, scopeDefinition, SCOPES, type Scope } from '../scopes/scopes.js';
import { SUBJECT_KINDS, type SubjectKind } from '../data-protection/blind-index.js';
import { ACCOUNT, BANK, BVN, MAX_FIELD_LENGTH, NIN, PASSPORT, PHONE, VIN, VNIN, type FieldRule, type InputFormat } from '../scopes/input-formats.js';

/**
 * Validation of a scope's inputs, by the rules of its definition (src/scopes/registry/). Pure, and
 * lists every problem at once. Messages name fields and rules, never values: the values are
 * personal data.
 */

/** A request body that passes validation, and that the sandbox answers `found`: the scope's example, else its required inputs' examples. */
export function scopeExample(scope: Scope): Record<string, string> {
  const definition = scopeDefinition(scope);
  if (definition.example !== undefined) return { ...definition.example };
  return Object.fromEntries(
    Object.entries(definition.inputs)
      .filter(([, rule]) => rule.required)
      .map(([field, rule]) => [field, rule.format.example]),
  );
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
  const definition = scopeDefinition(scope);
  const rules = definition.inputs;
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
    if (rule.format.mediaTypes === undefined && value.length > MAX_FIELD_LENGTH) {
      errors.push({ field, message: `must be at most ${MAX_FIELD_LENGTH} characters` });
      continue;
    }
    const problem = rule.format.check(value);
    if (problem !== null) errors.push({ field, message: problem });
    else input[field] = value;
  }
  if (definition.across !== undefined) errors.push(...definition.across.problems(body));
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { scope, input, request: echo(rules, input) };
}

/** The inputs as recorded: an input whose format says so (an image) by what identifies it. */
function echo(rules: Readonly<Record<string, FieldRule>>, input: Readonly<Record<string, string>>): JsonObject {
  const request: JsonObject = { ...input };
  for (const [field, value] of Object.entries(input)) {
    const recorded = rules[field]?.format.echo;
    if (recorded !== undefined) request[field] = recorded.of(value);
  }
  return request;
}

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
  if (unknown.length > 0)
    throw new ValidationFailed(unknown.map((field) => ({ field: field.slice(0, 50), message: `is not an identifier (allowed: ${SUBJECT_KINDS.join(', ')})` })));
  if (fields.length !== 1) throw new ValidationFailed([{ field: 'body', message: `give exactly one of ${SUBJECT_KINDS.join(', ')}` }]);
  const kind = fields[0] as SubjectKind;
  const value = body[kind];
  if (typeof value !== 'string') throw new ValidationFailed([{ field: kind, message: 'must be a string' }]);
  const problem = value.length > MAX_FIELD_LENGTH ? `must be at most ${MAX_FIELD_LENGTH} characters` : SUBJECT_FORMATS[kind].check(value);
  if (problem !== null) throw new ValidationFailed([{ field: kind, message: problem }]);
  return typeof bank === 'string' ? { kind, value, bank } : { kind, value };
}
