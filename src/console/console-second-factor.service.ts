import { Inject, Injectable } from '@nestjs/common';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { FastifyRequest } from 'fastify';
import { Clock } from '../common/clock.js';
import { AppError, Forbidden, NotFound } from '../common/errors.js';
import { commandContext } from '../common/request-context.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { AccountEvents } from '../console-auth/account-events.js';
import { AccountStore, hasSecondFactor, type ConsoleUser } from '../console-auth/accounts.js';
import { organizationOf, userActor, type ConsoleIdentity } from '../console-auth/console.guard.js';
import { LoginThrottle } from '../console-auth/login-throttle.js';
import { SecondFactorStore, type Passkey } from '../console-auth/second-factors.js';
import { Sessions, type SessionRecord } from '../console-auth/sessions.js';
import { Totp } from '../console-auth/totp.js';
import { TotpRefused } from './console.errors.js';

const RP_NAME = 'Identity verification console';
const MAX_PASSKEYS = 20;

/** A passkey's answer that does not verify, or whose challenge is unknown, used or expired. */
export class PasskeyRefused extends AppError {
  readonly httpStatus = 401;
  constructor(
    readonly code: 'passkey_invalid' | 'passkey_challenge_invalid',
    message: string,
  ) {
    super(message);
  }
}

export interface SecondFactorStatus {
  /** This session waits for the second factor. */
  readonly pending: boolean;
  readonly totp: boolean;
  readonly passkeys: number;
  readonly backupCodesLeft: number;
  /** The organization requires a second factor of every member. */
  readonly required: boolean;
}

export interface PasskeyView {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
}

const view = (passkey: Passkey): PasskeyView => ({
  id: passkey.id,
  name: passkey.name,
  createdAt: passkey.createdAt.toISOString(),
  lastUsedAt: passkey.lastUsedAt?.toISOString() ?? null,
});

/**
 * Integrators' second factor: TOTP with backup codes, and passkeys (WebAuthn, verified by
 * @simplewebauthn/server). After the password a user who has one gets a session that waits for it
 * (ConsoleGuard opens nothing else); each factor is taken once: a TOTP step, a backup code, a
 * WebAuthn challenge.
 */
@Injectable()
export class ConsoleSecondFactors {
  constructor(
    @Inject(AccountStore) private readonly accounts: AccountStore,
    @Inject(SecondFactorStore) private readonly store: SecondFactorStore,
    @Inject(AccountEvents) private readonly events: AccountEvents,
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(LoginThrottle) private readonly throttle: LoginThrottle,
    @Inject(Totp) private readonly totp: Totp,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async status(user: ConsoleUser, session: SessionRecord): Promise<SecondFactorStatus> {
    return {
      pending: session.secondFactorPending,
      totp: user.totpEnabledAt !== null,
      passkeys: await this.store.passkeyCount(user.id),
      backupCodesLeft: await this.store.backupCodesLeft(user.id),
      required: user.organizationRequiresSecondFactor,
    };
  }

  // --- TOTP and backup codes ---

  async startTotp(user: ConsoleUser): Promise<{ secret: string; otpauthUrl: string }> {
    if (user.totpEnabledAt !== null) throw new Forbidden('totp_enabled', 'The authenticator app is set up already');
    const { secret, otpauthUrl, wrapped, masterKeyId } = await this.totp.newSecret(user.id, user.email);
    await this.accounts.setTotpSecret(user.id, wrapped, masterKeyId);
    return { secret, otpauthUrl };
  }

  /** Enables TOTP with a code of the new secret; the answer is the backup codes, shown this once. */
  async confirmTotp(user: ConsoleUser, code: string, request: FastifyRequest): Promise<{ backupCodes: string[] }> {
    const current = await this.accounts.byId(user.id);
    if (current === undefined || current.totpSecret === null) throw new Forbidden('totp_not_started', 'Start the set-up first (POST /console/api/second-factor/totp/setup)');
    if (current.totpEnabledAt !== null) throw new Forbidden('totp_enabled', 'The authenticator app is set up already');
    await this.acceptTotp(current, code);
    return this.events.record(commandContext(request, userActor(current)), async (db) => {
      if (!(await this.accounts.enableTotp(current.id, this.clock.now(), db))) throw new Forbidden('totp_enabled', 'The authenticator app is set up already');
      const backupCodes = await this.store.replaceBackupCodes(current.id, this.clock.now(), db);
      return {
        value: { backupCodes },
        events: [
          { type: 'ConsoleTotpEnrolled', data: { schemaVersion: 1, userId: current.id } },
          { type: 'ConsoleBackupCodesIssued', data: { schemaVersion: 1, userId: current.id, count: backupCodes.length } },
        ],
      };
    });
  }

  /** Needs a current code of the app: whoever holds a signed-in browser alone cannot take the factor off. */
  async disableTotp(user: ConsoleUser, code: string, request: FastifyRequest): Promise<void> {
    if (user.totpEnabledAt === null || user.totpSecret === null) throw new Forbidden('totp_not_enabled', 'No authenticator app is set up');
    await this.acceptTotp(user, code);
    await this.events.record(commandContext(request, userActor(user)), async (db) => {
      const disabled = await this.accounts.disableTotp(user.id, db);
      await this.store.removeBackupCodes(user.id, db);
      return { value: undefined, events: disabled ? [{ type: 'ConsoleTotpDisabled', data: { schemaVersion: 1, userId: user.id } }] : [] };
    });
  }

  /** New backup codes (the old ones stop working), for a current code of the app. */
  async renewBackupCodes(user: ConsoleUser, code: string, request: FastifyRequest): Promise<{ backupCodes: string[] }> {
    if (user.totpEnabledAt === null || user.totpSecret === null) throw new Forbidden('totp_not_enabled', 'No authenticator app is set up');
    await this.acceptTotp(user, code);
    return this.events.record(commandContext(request, userActor(user)), async (db) => {
      const backupCodes = await this.store.replaceBackupCodes(user.id, this.clock.now(), db);
      return { value: { backupCodes }, events: [{ type: 'ConsoleBackupCodesIssued', data: { schemaVersion: 1, userId: user.id, count: backupCodes.length } }] };
    });
  }

  /** The sign-in step with the app's code or a backup code; throttled as the password is. */
  async signInWithCode(identity: ConsoleIdentity, input: { code?: string; backupCode?: string }, request: FastifyRequest): Promise<ConsoleIdentity> {
    const { user, session } = identity;
    await this.throttle.assertMayTry(user.email, request.ip);
    try {
      if (input.backupCode !== undefined && input.backupCode !== '') {
        if (user.totpEnabledAt === null) throw new TotpRefused('totp_invalid', 'The backup code is wrong or was used already');
        await this.events.record(commandContext(request, userActor(user)), async (db) => {
          if (!(await this.store.useBackupCode(user.id, input.backupCode!, this.clock.now(), db)))
            throw new TotpRefused('totp_invalid', 'The backup code is wrong or was used already');
          return { value: undefined, events: [{ type: 'ConsoleBackupCodeUsed', data: { schemaVersion: 1, userId: user.id, sessionId: session.id } }] };
        });
      } else {
        if (user.totpEnabledAt === null || user.totpSecret === null) throw new TotpRefused('totp_invalid', 'No authenticator app is set up: use a passkey');
        if (input.code === undefined || input.code === '') throw new TotpRefused('totp_required', 'Enter the code of your authenticator app or a backup code');
        await this.acceptTotp(user, input.code);
      }
    } catch (error) {
      if (error instanceof TotpRefused) await this.throttle.failed(user.email, request.ip);
      throw error;
    }
    return this.complete(identity);
  }

  private async acceptTotp(user: ConsoleUser, code: string): Promise<void> {
    if (user.totpSecret === null) throw new TotpRefused('totp_invalid', 'No authenticator app is set up');
    const step = await this.totp.check(user.id, user.totpSecret, code);
    if (step === null || !(await this.accounts.acceptTotpStep(user.id, step)))
      throw new TotpRefused('totp_invalid', 'The authenticator code is wrong or was used already: wait for the next one');
  }

  private async complete(identity: ConsoleIdentity): Promise<ConsoleIdentity> {
    const session = await this.sessions.completeSecondFactor(identity.session.id, this.clock.now());
    if (session === undefined) throw new Forbidden('second_factor_not_pending', 'This session is not waiting for a second factor');
    await this.throttle.succeeded(identity.user.email);
    return { user: identity.user, session };
  }

  // --- Passkeys ---

  async passkeys(user: ConsoleUser): Promise<PasskeyView[]> {
    return (await this.store.passkeys(user.id)).map(view);
  }

  async registrationOptions(identity: ConsoleIdentity): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const { user, session } = identity;
    const existing = await this.store.passkeys(user.id);
    if (existing.length >= MAX_PASSKEYS) throw new Forbidden('passkey_limit', `At most ${MAX_PASSKEYS} passkeys per account`);
    const options = await generateRegistrationOptions({
      rpName: RP_NAME,
      rpID: this.config.console.webauthn.rpId,
      userName: user.email,
      userID: new TextEncoder().encode(user.id),
      attestationType: 'none',
      excludeCredentials: existing.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    });
    await this.store.putChallenge(session.id, 'register', options.challenge, this.clock.now());
    return options;
  }

  async register(identity: ConsoleIdentity, response: RegistrationResponseJSON, name: string, request: FastifyRequest): Promise<PasskeyView> {
    const { user, session } = identity;
    const challenge = await this.store.takeChallenge(session.id, 'register', this.clock.now());
    if (challenge === undefined) throw new PasskeyRefused('passkey_challenge_invalid', 'The passkey request is unknown, used or expired: start again');
    const verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: this.config.console.webauthn.origin,
      expectedRPID: this.config.console.webauthn.rpId,
      requireUserVerification: true,
    }).catch(() => ({ verified: false as const }));
    if (!verification.verified) throw new PasskeyRefused('passkey_invalid', 'The passkey could not be verified');
    const { credential } = verification.registrationInfo;
    const id = await this.events.record(commandContext(request, userActor(user)), async (db) => {
      const added = await this.store.addPasskey(
        {
          userId: user.id,
          credentialId: credential.id,
          publicKey: credential.publicKey,
          counter: credential.counter,
          transports: credential.transports ?? [],
          name,
          now: this.clock.now(),
        },
        db,
      );
      if (added === undefined) throw new Forbidden('passkey_exists', 'This passkey is registered already');
      return { value: added, events: [{ type: 'ConsolePasskeyRegistered', data: { schemaVersion: 1, userId: user.id, passkeyId: added } }] };
    });
    const passkey = (await this.store.passkeys(user.id)).find((row) => row.id === id);
    if (passkey === undefined) throw new NotFound('The passkey is gone');
    return view(passkey);
  }

  async rename(user: ConsoleUser, id: string, name: string): Promise<void> {
    if (!(await this.store.renamePasskey(user.id, id, name))) throw new NotFound('No such passkey of yours');
  }

  async remove(user: ConsoleUser, id: string, request: FastifyRequest): Promise<void> {
    const removed = await this.events.record(commandContext(request, userActor(user)), async (db) => {
      const done = await this.store.removePasskey(user.id, id, db);
      return { value: done, events: done ? [{ type: 'ConsolePasskeyRemoved', data: { schemaVersion: 1, userId: user.id, passkeyId: id } }] : [] };
    });
    if (!removed) throw new NotFound('No such passkey of yours');
  }

  async authenticationOptions(identity: ConsoleIdentity): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const { user, session } = identity;
    const passkeys = await this.store.passkeys(user.id);
    if (passkeys.length === 0) throw new Forbidden('no_passkey', 'No passkey is registered: use your authenticator app');
    const options = await generateAuthenticationOptions({
      rpID: this.config.console.webauthn.rpId,
      allowCredentials: passkeys.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports })),
      userVerification: 'required',
    });
    await this.store.putChallenge(session.id, 'authenticate', options.challenge, this.clock.now());
    return options;
  }

  async signInWithPasskey(identity: ConsoleIdentity, response: AuthenticationResponseJSON, request: FastifyRequest): Promise<ConsoleIdentity> {
    const { user, session } = identity;
    await this.throttle.assertMayTry(user.email, request.ip);
    const challenge = await this.store.takeChallenge(session.id, 'authenticate', this.clock.now());
    if (challenge === undefined) {
      await this.throttle.failed(user.email, request.ip);
      throw new PasskeyRefused('passkey_challenge_invalid', 'The passkey request is unknown, used or expired: start again');
    }
    const passkey = typeof response?.id === 'string' ? await this.store.passkeyByCredential(user.id, response.id) : undefined;
    const verification =
      passkey === undefined
        ? undefined
        : await verifyAuthenticationResponse({
            response,
            expectedChallenge: challenge,
            expectedOrigin: this.config.console.webauthn.origin,
            expectedRPID: this.config.console.webauthn.rpId,
            credential: { id: passkey.credentialId, publicKey: passkey.publicKey as Uint8Array<ArrayBuffer>, counter: passkey.counter, transports: passkey.transports },
            requireUserVerification: true,
          }).catch(() => undefined);
    if (passkey === undefined || verification?.verified !== true) {
      await this.throttle.failed(user.email, request.ip);
      throw new PasskeyRefused('passkey_invalid', 'The passkey could not be verified');
    }
    await this.store.passkeyUsed(passkey.id, verification.authenticationInfo.newCounter, this.clock.now());
    return this.complete(identity);
  }

  // --- The organization's requirement ---

  /** The owner turns it on only with a second factor of their own (else the setting would lock them out at once). */
  async setRequirement(user: ConsoleUser, required: boolean, request: FastifyRequest): Promise<void> {
    const organizationId = organizationOf(user);
    if (required && !hasSecondFactor(user)) throw new Forbidden('second_factor_enrollment_required', 'Set up a second factor for yourself before requiring one of everyone');
    await this.events.record(commandContext(request, userActor(user)), async (db) => {
      await this.store.setOrganizationRequirement(organizationId, required, this.clock.now(), db);
      return { value: undefined, events: [{ type: 'ConsoleSecondFactorRequirementChanged', data: { schemaVersion: 1, userId: user.id, organizationId, required } }] };
    });
  }
}
