import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Req, Res, UseGuards } from '@nestjs/common';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyReply } from 'fastify';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { validateBody } from '../common/validation.js';
import { ALL_INTEGRATOR_ROLES, ConsoleAccess, consoleIdentity, ConsoleGuard, type ConsoleRequest } from '../console-auth/console.guard.js';
import { ConsoleSecondFactors, type PasskeyView, type SecondFactorStatus } from './console-second-factor.service.js';
import { ConsoleSessions, type SessionView } from './console-session.service.js';
import { PasskeyNameDto, PasskeyRegistrationDto, PasskeyResponseDto, SecondFactorCodeDto, SecondFactorRequirementDto, TotpCodeDto } from './console.dto.js';
import { ANY_OBJECT, ConsoleRoute, flag, jsonBody, list } from '../common/console-route.js';
import { ref } from '../common/openapi.js';

const ENROLMENT = { who: 'integrator', roles: ALL_INTEGRATOR_ROLES, beforeSecondFactor: true } as const;

/**
 * Integrators' second factor: its set-up (TOTP with backup codes, passkeys), the sign-in step that
 * follows the password, and the owner's requirement of one for the whole organization.
 */
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleSecondFactorController {
  constructor(
    @Inject(ConsoleSecondFactors) private readonly factors: ConsoleSecondFactors,
    @Inject(ConsoleSessions) private readonly console: ConsoleSessions,
  ) {}

  @Get('second-factor')
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('getSecondFactor', 'Session', "The user's second factors", { status: 200, data: ref('SecondFactorStatus') })
  async status(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<SecondFactorStatus>> {
    const { user, session } = consoleIdentity(request);
    return ok(await this.factors.status(user, session));
  }

  @Post('second-factor/totp/setup')
  @HttpCode(200)
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('setUpTotp', 'Session', 'Start a TOTP set-up', { status: 200, data: ref('TotpSetup') })
  async totpSetup(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<{ secret: string; otpauthUrl: string }>> {
    return ok(await this.factors.startTotp(consoleIdentity(request).user));
  }

  @Post('second-factor/totp/confirm')
  @HttpCode(200)
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('confirmTotp', 'Session', 'Confirm a TOTP set-up: the backup codes', { status: 200, data: ref('BackupCodes') }, jsonBody(ref('TotpCodeInput')))
  async totpConfirm(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ backupCodes: string[] }>> {
    return ok(await this.factors.confirmTotp(consoleIdentity(request).user, validateCode(body), request));
  }

  @Post('second-factor/totp/disable')
  @HttpCode(200)
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('disableTotp', 'Session', 'Turn TOTP off', { status: 200, data: flag('disabled') }, jsonBody(ref('TotpCodeInput')))
  async totpDisable(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ disabled: true }>> {
    await this.factors.disableTotp(consoleIdentity(request).user, validateCode(body), request);
    return ok({ disabled: true });
  }

  @Post('second-factor/backup-codes')
  @HttpCode(200)
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('renewBackupCodes', 'Session', 'New backup codes', { status: 200, data: ref('BackupCodes') }, jsonBody(ref('TotpCodeInput')))
  async backupCodes(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ backupCodes: string[] }>> {
    return ok(await this.factors.renewBackupCodes(consoleIdentity(request).user, validateCode(body), request));
  }

  @Get('second-factor/passkeys')
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('listPasskeys', 'Session', "The user's passkeys", { status: 200, data: list(ref('Passkey')) })
  async passkeys(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<PasskeyView[]>> {
    return ok(await this.factors.passkeys(consoleIdentity(request).user));
  }

  @Post('second-factor/passkeys/options')
  @HttpCode(200)
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('passkeyRegistrationOptions', 'Session', "WebAuthn registration options (@simplewebauthn's JSON)", { status: 200, data: ANY_OBJECT })
  async registrationOptions(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<PublicKeyCredentialCreationOptionsJSON>> {
    return ok(await this.factors.registrationOptions(consoleIdentity(request)));
  }

  @Post('second-factor/passkeys')
  @HttpCode(201)
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('registerPasskey', 'Session', 'Register a passkey', { status: 201, data: ref('Passkey') }, jsonBody(ref('PasskeyRegistrationInput')))
  async register(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<PasskeyView>> {
    const input = validateBody(PasskeyRegistrationDto, body);
    return ok(await this.factors.register(consoleIdentity(request), input.response as unknown as RegistrationResponseJSON, input.name.trim(), request));
  }

  @Put('second-factor/passkeys/:id')
  @HttpCode(204)
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('renamePasskey', 'Session', 'Rename a passkey', { status: 204 }, jsonBody(ref('PasskeyNameInput')))
  async rename(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<void> {
    await this.factors.rename(consoleIdentity(request).user, id, validateBody(PasskeyNameDto, body).name.trim());
  }

  @Delete('second-factor/passkeys/:id')
  @HttpCode(204)
  @ConsoleAccess(ENROLMENT)
  @ConsoleRoute('removePasskey', 'Session', 'Remove a passkey', { status: 204 })
  async remove(@Req() request: ConsoleRequest, @Param('id') id: string): Promise<void> {
    await this.factors.remove(consoleIdentity(request).user, id, request);
  }

  /** The sign-in step with the app's code or a backup code: the answer is the session, now open. */
  @Post('second-factor/verify')
  @HttpCode(200)
  @ConsoleAccess({ who: 'second_factor_step' })
  @ConsoleRoute('verifySecondFactor', 'Session', 'The sign-in step: a TOTP or backup code', { status: 200, data: ref('Session') }, jsonBody(ref('SecondFactorInput')))
  async verify(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const identity = await this.factors.signInWithCode(consoleIdentity(request), validateBody(SecondFactorCodeDto, body), request);
    return ok(await this.console.view(request, reply, identity));
  }

  @Post('second-factor/passkey/options')
  @HttpCode(200)
  @ConsoleAccess({ who: 'second_factor_step' })
  @ConsoleRoute('passkeyAuthenticationOptions', 'Session', "WebAuthn authentication options (@simplewebauthn's JSON)", { status: 200, data: ANY_OBJECT })
  async authenticationOptions(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<PublicKeyCredentialRequestOptionsJSON>> {
    return ok(await this.factors.authenticationOptions(consoleIdentity(request)));
  }

  @Post('second-factor/passkey/verify')
  @HttpCode(200)
  @ConsoleAccess({ who: 'second_factor_step' })
  @ConsoleRoute('verifyPasskey', 'Session', 'The sign-in step: a passkey', { status: 200, data: ref('Session') }, jsonBody(ref('PasskeyAuthenticationInput')))
  async passkeyVerify(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const input = validateBody(PasskeyResponseDto, body);
    const identity = await this.factors.signInWithPasskey(consoleIdentity(request), input.response as unknown as AuthenticationResponseJSON, request);
    return ok(await this.console.view(request, reply, identity));
  }

  @Put('organization/second-factor')
  @HttpCode(200)
  @ConsoleAccess({ who: 'integrator', roles: ['owner'] })
  @ConsoleRoute(
    'setSecondFactorRequirement',
    'Organization',
    'Require a second factor of every member',
    { status: 200, data: flag('required', { type: 'boolean' }) },
    jsonBody(ref('SecondFactorRequirementInput')),
  )
  async requirement(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ required: boolean }>> {
    const { required } = validateBody(SecondFactorRequirementDto, body);
    await this.factors.setRequirement(consoleIdentity(request).user, required, request);
    return ok({ required });
  }
}

function validateCode(body: unknown): string {
  return validateBody(TotpCodeDto, body).code;
}
