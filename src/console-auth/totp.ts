import { Inject, Injectable } from '@nestjs/common';
import { generateSecret, generateURI, verify } from 'otplib';
import { KeyManagement } from '../data-protection/key-management.port.js';

const ISSUER = 'Identity verification ledger';

/**
 * Operators' second factor: TOTP (RFC 6238, 30 s steps, 6 digits) with otplib. The secret is
 * wrapped under the master key, bound to the user, and never shown again once enrolled.
 */
@Injectable()
export class Totp {
  constructor(@Inject(KeyManagement) private readonly kms: KeyManagement) {}

  async newSecret(userId: string, email: string): Promise<{ secret: string; otpauthUrl: string; wrapped: string }> {
    const secret = generateSecret();
    const wrapped = await this.kms.wrap(Buffer.from(secret, 'utf8'), `console-totp:${userId}`);
    return { secret, otpauthUrl: generateURI({ issuer: ISSUER, label: email, secret }), wrapped };
  }

  /**
   * The time step the code belongs to, or null when it is wrong. One step of tolerance either side,
   * for clocks a little apart; the caller refuses a step not later than the last one accepted.
   */
  async check(userId: string, wrapped: string, code: string): Promise<number | null> {
    if (!/^\d{6}$/.test(code)) return null;
    const secret = (await this.kms.unwrap(wrapped, `console-totp:${userId}`)).toString('utf8');
    const result = await verify({ secret, token: code, epochTolerance: 30 }).catch(() => ({ valid: false as const }));
    return result.valid && 'timeStep' in result ? result.timeStep : null;
  }
}
