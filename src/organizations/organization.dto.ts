import { ArrayMaxSize, IsArray, IsEmail, IsIn, IsOptional, IsString, Length, MaxLength, Matches } from 'class-validator';
import { ValidationFailed, type FieldError } from '../common/errors.js';
import { ENVIRONMENTS, type Environment } from '../common/environment.js';
import { isPlainObject } from '../common/validation.js';
import { SCOPES } from '../scopes/scopes.js';
import type { ProviderConfigurationInput } from './organization.commands.js';

const NOT_BLANK = /\S/;

/** An organization's name, as registered or renamed. */
export class OrganizationNameDto {
  @IsString()
  @Length(1, 200)
  @Matches(NOT_BLANK, { message: 'name must not be blank' })
  name!: string;
}

export class RegisterOrganizationDto extends OrganizationNameDto {
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

const PROVIDER_FIELDS = ['environment', 'provider', 'credentials', 'fallback'];

/**
 * `{environment, provider, credentials?, fallback?: {provider, credentials?}}`. Only the shape is
 * checked here; provider names and scopes by the decider, credential fields by the handler.
 */
export function providerBody(body: unknown): ProviderConfigurationInput {
  if (!isPlainObject(body)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object {environment, provider, credentials, fallback?}' }]);
  const errors: FieldError[] = [];
  for (const field of Object.keys(body).slice(0, 20))
    if (!PROVIDER_FIELDS.includes(field)) errors.push({ field: field.slice(0, 50), message: 'is not a field of a provider configuration' });
  const { environment, provider, credentials, fallback } = body;
  if (!(ENVIRONMENTS as readonly unknown[]).includes(environment)) errors.push({ field: 'environment', message: 'environment must be "test" or "live"' });
  if (typeof provider !== 'string' || provider.length === 0 || provider.length > 50) errors.push({ field: 'provider', message: 'provider must be a provider name' });
  let parsedFallback: ProviderConfigurationInput['fallback'] = null;
  if (fallback !== undefined && fallback !== null) {
    if (!isPlainObject(fallback)) errors.push({ field: 'fallback', message: 'fallback must be an object {provider, credentials}' });
    else {
      for (const field of Object.keys(fallback).slice(0, 20))
        if (field !== 'provider' && field !== 'credentials') errors.push({ field: `fallback.${field.slice(0, 50)}`, message: 'is not a field of a fallback' });
      if (typeof fallback.provider !== 'string' || fallback.provider.length === 0 || fallback.provider.length > 50)
        errors.push({ field: 'fallback.provider', message: 'provider must be a provider name' });
      else parsedFallback = { provider: fallback.provider, credentials: fallback.credentials };
    }
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { environment: environment as Environment, provider: provider as string, credentials, fallback: parsedFallback };
}

/** `{"nin": 5000, ...}`: scope names are the keys, so the shape is checked here and the values by the decider. */
export function pricesBody(body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object of scope: price in kobo' }]);
  if (Object.keys(body).length > SCOPES.length) throw new ValidationFailed([{ field: 'body', message: `at most ${SCOPES.length} prices` }]);
  return body;
}

/** `{"requestsPerMinute": 120}` or `{"requestsPerMinute": null}` (back to the default); the value is checked by the decider. */
export function rateLimitBody(body: unknown): { requestsPerMinute: unknown } {
  if (!isPlainObject(body) || !('requestsPerMinute' in body) || Object.keys(body).length !== 1) {
    throw new ValidationFailed([{ field: 'requestsPerMinute', message: 'the body must be {"requestsPerMinute": <integer> | null}' }]);
  }
  return { requestsPerMinute: body.requestsPerMinute };
}

export function retentionBody(body: unknown): { retentionDays: unknown } {
  if (!isPlainObject(body) || !('retentionDays' in body) || Object.keys(body).length !== 1) {
    throw new ValidationFailed([{ field: 'retentionDays', message: 'the body must be {"retentionDays": <integer> | null}' }]);
  }
  return { retentionDays: body.retentionDays };
}
