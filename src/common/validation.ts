import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { ValidationFailed, type FieldError } from './errors.js';

/** Above this many problems the list stops growing: a bound on the error body. */
const MAX_FIELD_ERRORS = 50;

function collect(errors: readonly ValidationError[], parent: string, out: FieldError[]): void {
  for (const error of errors) {
    const field = parent === '' ? error.property : /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`;
    for (const message of Object.values(error.constraints ?? {})) {
      if (out.length < MAX_FIELD_ERRORS) out.push({ field, message });
    }
    if (error.children !== undefined && error.children.length > 0) collect(error.children, field, out);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates a request body against a class-validator DTO: unknown properties are refused, and
 * every problem is listed (422 `validation_failed`, `details.fields: [{field, message}]`).
 * A missing body counts as `{}`, so required fields are reported by name.
 */
export function validateBody<T extends object>(dto: new () => T, body: unknown): T {
  const input = body === undefined || body === null ? {} : body;
  if (!isPlainObject(input)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object' }]);
  const instance = plainToInstance(dto, input, { enableImplicitConversion: false });
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true, validationError: { target: false, value: false } });
  if (errors.length > 0) {
    const fields: FieldError[] = [];
    collect(errors, '', fields);
    throw new ValidationFailed(fields);
  }
  return instance;
}
