import { IsBoolean, IsEmail, IsIn, IsObject, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../console-auth/passwords.js';
import { INTEGRATOR_ROLES, OPERATOR_ROLES } from '../console-auth/accounts.js';

const PASSWORD_MESSAGE = `password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`;

/** The organization's name and email are checked by the registration command itself (as for the admin API); here only their type. */
export class SignUpDto {
  @IsString()
  @MaxLength(1_000)
  organizationName!: string;

  @IsString()
  @MaxLength(1_000)
  email!: string;

  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH, { message: PASSWORD_MESSAGE })
  password!: string;
}

export class LoginDto {
  @IsString()
  @MaxLength(254)
  email!: string;

  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password!: string;

  @IsOptional()
  @IsString()
  @MaxLength(10)
  totpCode?: string;
}

export class TokenDto {
  @IsString()
  @Length(10, 100)
  token!: string;
}

export class EmailDto {
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an email address' })
  email!: string;
}

export class ResetPasswordDto {
  @IsString()
  @Length(10, 100)
  token!: string;

  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH, { message: PASSWORD_MESSAGE })
  password!: string;
}

export class ChangePasswordDto {
  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  currentPassword!: string;

  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH, { message: `newPassword must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters` })
  newPassword!: string;
}

/** Deleting one's own account: the password, or a current code of the authenticator app. */
export class DeleteAccountDto {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PASSWORD_LENGTH)
  password?: string;

  @IsOptional()
  @IsString()
  @MaxLength(12)
  code?: string;
}

export class BootstrapOperatorDto {
  @IsString()
  @MaxLength(500)
  adminToken!: string;

  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an email address' })
  email!: string;

  @IsString()
  @Length(MIN_PASSWORD_LENGTH, MAX_PASSWORD_LENGTH, { message: PASSWORD_MESSAGE })
  password!: string;
}

export class TotpCodeDto {
  @IsString()
  @Matches(/^\d{6}$/, { message: 'code must be the 6 digits the authenticator shows' })
  code!: string;
}

export class InviteMemberDto {
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an email address' })
  email!: string;

  @IsIn(INTEGRATOR_ROLES, { message: `role must be one of ${INTEGRATOR_ROLES.join(', ')}` })
  role!: (typeof INTEGRATOR_ROLES)[number];
}

export class InviteOperatorDto {
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an email address' })
  email!: string;

  @IsIn(OPERATOR_ROLES, { message: `role must be one of ${OPERATOR_ROLES.join(', ')}` })
  role!: (typeof OPERATOR_ROLES)[number];
}

export class SetRoleDto {
  @IsIn(INTEGRATOR_ROLES, { message: `role must be one of ${INTEGRATOR_ROLES.join(', ')}` })
  role!: (typeof INTEGRATOR_ROLES)[number];
}

/** The second factor's sign-in step: the app's code, or one of the backup codes. */
export class SecondFactorCodeDto {
  @IsOptional()
  @IsString()
  @Matches(/^\d{6}$/, { message: 'code must be the 6 digits the authenticator shows' })
  code?: string;

  @IsOptional()
  @IsString()
  @MaxLength(40)
  backupCode?: string;
}

/** The browser's answer to a WebAuthn request (@simplewebauthn/browser's JSON), checked by @simplewebauthn/server. */
export class PasskeyResponseDto {
  @IsObject()
  response!: Record<string, unknown>;
}

export class PasskeyRegistrationDto extends PasskeyResponseDto {
  @IsString()
  @Length(1, 60, { message: 'name must be 1 to 60 characters' })
  name!: string;
}

export class PasskeyNameDto {
  @IsString()
  @Length(1, 60, { message: 'name must be 1 to 60 characters' })
  name!: string;
}

export class SecondFactorRequirementDto {
  @IsBoolean()
  required!: boolean;
}
