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

  /** One step of tolerance either side, for clocks a little apart. */
  async check(userId: string, wrapped: string, code: string): Promise<boolean> {
    if (!/^\d{6}$/.test(code)) return false;
    const secret = (await this.kms.unwrap(wrapped, `console-totp:${userId}`)).toString('utf8');
    const result = await verify({ secret, token: code, epochTolerance: 30 }).catch(() => ({ valid: false }));
    return result.valid;
  }
}
