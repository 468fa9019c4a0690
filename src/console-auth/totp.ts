import { Inject, Injectable } from '@nestjs/common';
import { generateSecret, generateURI, verify } from 'otplib';
import { KeyManagement } from '../data-protection/key-management.port.js';
import { totpContext } from '../data-protection/master-key-uses.js';

const ISSUER = 'Identity verification ledger';

/**
 * Console users' second factor (operators', and integrators' beside passkeys): TOTP (RFC 6238, 30 s steps, 6 digits) with otplib. The secret is
 * wrapped under the master key, bound to the user, and never shown again once enrolled.
 */
@Injectable()
export class Totp {
  constructor(@Inject(KeyManagement) private readonly kms: KeyManagement) {}

  /** A new secret, wrapped (`masterKeyId` names the master key that wrapped it: stored with it, for the rotation). */
  async newSecret(userId: string, email: string): Promise<{ secret: string; otpauthUrl: string; wrapped: string; masterKeyId: string }> {
    const secret = generateSecret();
    const wrapped = await this.kms.wrap(Buffer.from(secret, 'utf8'), totpContext(userId));
    return { secret, otpauthUrl: generateURI({ issuer: ISSUER, label: email, secret }), wrapped, masterKeyId: this.kms.masterKeyId };
  }

  /**
   * The time step the code belongs to, or null when it is wrong. One step of tolerance either side,
   * for clocks a little apart; the caller refuses a step not later than the last one accepted.
   */
  async check(userId: string, wrapped: string, code: string): Promise<number | null> {
    if (!/^\d{6}$/.test(code)) return null;
    const secret = (await this.kms.unwrap(wrapped, totpContext(userId))).toString('utf8');
    const result = await verify({ secret, token: code, epochTolerance: 30 }).catch(() => ({ valid: false as const }));
    return result.valid && 'timeStep' in result ? result.timeStep : null;
  }
}
