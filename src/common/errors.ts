/**
 * The one taxonomy of typed errors. Each has a stable `code` and an HTTP status; the exception
 * filter maps them to the error envelope. Messages never carry personal data.
 */
export type ErrorDetails = Record<string, unknown>;

export abstract class AppError extends Error {
  abstract readonly code: string;
  abstract readonly httpStatus: number;
  constructor(
    message: string,
    readonly details: ErrorDetails = {},
  ) {
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
  constructor(
    readonly fields: readonly FieldError[],
    message = 'The request is invalid',
  ) {
    super(message, { fields });
  }
}

export class Unauthenticated extends AppError {
  readonly code = 'unauthenticated';
  readonly httpStatus = 401;
}

export class Forbidden extends AppError {
  readonly httpStatus = 403;
  constructor(
    readonly code: string,
    message: string,
    details?: ErrorDetails,
  ) {
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

/** A payment webhook whose signature is not its rail's signature of its raw body: nothing of it is read. */
export class InvalidSignature extends AppError {
  readonly code = 'invalid_signature';
  readonly httpStatus = 401;
}

export class ServiceUnavailable extends AppError {
  readonly code = 'service_unavailable';
  readonly httpStatus = 503;
}

/**
 * An operator's change written to the event log that the read models did not apply in time: it is
 * recorded and takes effect once they do, but the service may act on the previous state until then.
 * Repeating the command is safe (it changes nothing and waits again).
 */
export class ChangeNotInForce extends AppError {
  readonly code = 'change_not_in_force';
  readonly httpStatus = 503;
}

/** A command that clashes with the state it meets. Subclasses name the clash with a code of their own. */
export class Conflict extends AppError {
  readonly code: string = 'conflict';
  readonly httpStatus = 409;
}

/** A verification reference is used once: a second request under it. */
export class VerificationAlreadyExists extends Conflict {
  override readonly code = 'verification_exists';
}

/** A verification takes one terminal event: a second finish. */
export class VerificationAlreadyFinished extends Conflict {
  override readonly code = 'verification_finished';
}

/** A finish of a verification whose request is not in its stream. */
export class VerificationNotRequested extends Conflict {
  override readonly code = 'verification_not_requested';
}

/** Personal data of a verification still in flight cannot be erased yet: it is erased once finished. */
export class VerificationPending extends Conflict {
  override readonly code = 'verification_pending';
}

/** A hold stops the erasure (by key, by subject or by retention) of personal data until lifted: `details` names it and its reason code. */
export class HoldInForce extends Conflict {
  override readonly code = 'legal_hold';
}

/** A funding reference already credited the wallet with another amount: `details` holds both amounts. */
export class FundingReferenceConflict extends Conflict {
  override readonly code = 'funding_reference_conflict';
}

/** A top-up an operator may not resolve as asked: not in need of it (credited, resolved), or the provider does not confirm the payment. */
export class TopUpNotResolvable extends Conflict {
  override readonly code = 'top_up_not_resolvable';
}

/**
 * Something that must never happen did: a stream that breaks its own rules (a revision gap, a
 * wallet overdrawn by its history, a second terminal event), or code that reached a case it
 * excludes. A bug, not a request error: the exception filter answers it as an internal error and
 * logs it.
 */
export class InvariantViolated extends AppError {
  readonly code = 'invariant_violated';
  readonly httpStatus = 500;
}

/** What was thrown, as an Error: itself when it is one, else an Error that names its type (never its value, which may be personal data). */
export function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(`a non-Error was thrown (${thrown === null ? 'null' : typeof thrown})`, { cause: thrown });
}
