/**
 * The one taxonomy of typed errors. Each has a stable `code` and an HTTP status; the exception
 * filter maps them to the error envelope. Messages never carry personal data.
 */
export type ErrorDetails = Record<string, unknown>;

export abstract class AppError extends Error {
  abstract readonly code: string;
  abstract readonly httpStatus: number;
  constructor(message: string, readonly details: ErrorDetails = {}) {
    super(message);
    this.name = new.target.name;
  }
}

export interface FieldError {
  readonly field: string;
  readonly message: string;
}

export class ValidationFailed extends AppError {
  readonly code = 'validation_failed';
  readonly httpStatus = 422;
  constructor(readonly fields: readonly FieldError[], message = 'The request is invalid') {
    super(message, { fields });
  }
}

export class Unauthenticated extends AppError {
  readonly code = 'unauthenticated';
  readonly httpStatus = 401;
}

export class Forbidden extends AppError {
  readonly httpStatus = 403;
  constructor(readonly code: string, message: string, details?: ErrorDetails) {
    super(message, details);
  }
}

export class NotFound extends AppError {
  readonly code = 'not_found';
  readonly httpStatus = 404;
}

export class InsufficientBalance extends AppError {
  readonly code = 'insufficient_balance';
  readonly httpStatus = 402;
}

export class ProviderFailed extends AppError {
  readonly code = 'provider_failed';
  readonly httpStatus = 502;
}

export class RateLimited extends AppError {
  readonly code = 'rate_limited';
  readonly httpStatus = 429;
}

export class ServiceUnavailable extends AppError {
  readonly code = 'service_unavailable';
  readonly httpStatus = 503;
}

export class Conflict extends AppError {
  readonly code = 'conflict';
  readonly httpStatus = 409;
}
