import { AppError, Conflict } from '../common/errors.js';

/** A wrong email or password, told apart from neither (no account enumeration). */
export class InvalidCredentials extends AppError {
  readonly code = 'invalid_credentials';
  readonly httpStatus = 401;
}

/** The operator has a second factor and sent no code, or a wrong one. */
export class TotpRefused extends AppError {
  readonly httpStatus = 401;
  constructor(
    readonly code: 'totp_required' | 'totp_invalid',
    message: string,
  ) {
    super(message);
  }
}

/** The change would leave an organization without an owner (or the operators without an admin). */
export class LastOwner extends Conflict {
  override readonly code = 'last_owner';
}

/** A one-time token unknown, used or expired. */
export class InvalidToken extends AppError {
  readonly code = 'invalid_token';
  readonly httpStatus = 422;
}
