import { ArrayMaxSize, IsArray, IsEmail, IsIn, IsOptional, IsString, Length, MaxLength, Matches } from 'class-validator';
import { ValidationFailed, type FieldError } from '../common/errors.js';
import { ENVIRONMENTS, type Environment } from '../common/environment.js';
import { isPlainObject } from '../common/validation.js';
import { SCOPES } from '../scopes/scopes.js';

const NOT_BLANK = /\S/;

export class RegisterOrganizationDto {
  @IsString()
  @Length(1, 200)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name!: string;

  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an email address' })
  email!: string;
}

export class SuspendOrganizationDto {
  @IsString()
  @Length(1, 500)
  @Matches(NOT_BLANK, { message: 'reason must not be blank' })
  reason!: string;
}

export class SetScopesDto {
  @IsArray()
  @ArrayMaxSize(SCOPES.length * 2)
  @IsString({ each: true })
  scopes!: string[];
}

export class IssueApiKeyDto {
  @IsIn(ENVIRONMENTS, { message: 'environment must be "test" or "live"' })
  environment!: Environment;

  @IsOptional()
  @IsString()
  @Length(1, 100)
  name?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(SCOPES.length * 2)
  @IsString({ each: true })
  scopes?: string[];
}

/** `{"nin": 5000, ...}`: scope names are the keys, so the shape is checked here and the values by the decider. */
export function pricesBody(body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object of scope: price in kobo' }]);
  if (Object.keys(body).length > SCOPES.length) throw new ValidationFailed([{ field: 'body', message: `at most ${SCOPES.length} prices` }]);
  return body;
}

const MAX_PAGE = 1_000_000;

/** `page` from 1, `pageSize` from 1 (above 100 is capped, as on /v1). */
export function paging(query: Record<string, unknown>): { page: number; pageSize: number } {
  const errors: FieldError[] = [];
  const read = (name: string, fallback: number): number => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    if (typeof raw !== 'string' || !/^\d{1,7}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_PAGE) {
      errors.push({ field: name, message: `${name} must be an integer from 1 to ${MAX_PAGE}` });
      return fallback;
    }
    return Number(raw);
  };
  const page = read('page', 1);
  const pageSize = Math.min(read('pageSize', 20), 100);
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { page, pageSize };
}
