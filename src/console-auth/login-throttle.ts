import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimited } from '../common/errors.js';
import { PG_POOL } from '../database/pool.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { ContactData } from '../data-protection/contact-data.js';

const WINDOW_SECONDS = 15 * 60;
/** Failed sign-ins of one account in the window before it is refused. */
export const ACCOUNT_FAILURES = 5;
/** Failed sign-ins from one address in the window before it is refused. */
export const ADDRESS_FAILURES = 20;

function limiter(pool: pg.Pool, keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
  const options = { points, duration, keyPrefix };
  // The request rate limits' table (migration 1732250000005), shared by every instance.
  return new RateLimiterPostgres({
    ...options,
    storeClient: pool,
    storeType: 'pool',
    tableName: 'rate_limits',
    tableCreated: true,
    insuranceLimiter: new RateLimiterMemory(options),
  });
}

/**
 * Sign-in throttling with rate-limiter-flexible, per account and per address, counting failures
 * only: a refused attempt answers 429 with Retry-After before the password is even checked, and a
 * success clears the account's count. Mails that anyone may trigger are counted per address.
 * Counted by the keyed hashes of the email and the client address (ContactData), never by either.
 */
@Injectable()
export class LoginThrottle {
  private readonly accounts: RateLimiterAbstract;
  private readonly addresses: RateLimiterAbstract;
  private readonly mails: RateLimiterAbstract;
  private readonly recipients: RateLimiterAbstract;
  private readonly accountMails: RateLimiterAbstract;

  constructor(
    @Inject(PG_POOL) pool: pg.Pool,
    @Inject(CONFIG) config: AppConfig,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {
    this.accounts = limiter(pool, 'console_login_account', ACCOUNT_FAILURES, WINDOW_SECONDS);
    this.addresses = limiter(pool, 'console_login_address', ADDRESS_FAILURES, WINDOW_SECONDS);
    this.mails = limiter(pool, 'console_mail_address', config.console.mailRequestsPerHour, 3_600);
    this.recipients = limiter(pool, 'console_mail_recipient', config.console.mailsPerRecipientPerHour, 3_600);
    this.accountMails = limiter(pool, 'console_mail_account', config.console.mailsPerRecipientPerHour, 3_600);
  }

  /** 429 when the account or the address has used up its failures. */
  async assertMayTry(email: string, address: string): Promise<void> {
    const [emailKey, addressKey] = await this.keysOf(email, address);
    const [account, from] = await Promise.all([this.accounts.get(emailKey), this.addresses.get(addressKey)]);
    const blocked = [
      account !== null && account.consumedPoints >= ACCOUNT_FAILURES ? account.msBeforeNext : 0,
      from !== null && from.consumedPoints >= ADDRESS_FAILURES ? from.msBeforeNext : 0,
    ];
    const waitMs = Math.max(...blocked);
    if (waitMs > 0) throw tooMany(waitMs, 'Too many failed sign-ins');
  }

  async failed(email: string, address: string): Promise<void> {
    const [emailKey, addressKey] = await this.keysOf(email, address);
    await Promise.all([this.accounts.penalty(emailKey, 1), this.addresses.penalty(addressKey, 1)]);
  }

  async succeeded(email: string): Promise<void> {
    await this.accounts.delete(await this.contacts.lookupKey('email', email));
  }

  private keysOf(email: string, address: string): Promise<[string, string]> {
    return Promise.all([this.contacts.lookupKey('email', email), this.contacts.lookupKey('address', address)]);
  }

  /**
   * Counts one mail-sending request (sign-up, reset, resend): per address always, and per
   * recipient and per account when given; 429 past any hourly bound. A recipient is counted whether
   * it has an account or not, so the bound tells nothing about who has one.
   */
  async mailRequest(address: string, to: { recipient?: string; accountId?: string } = {}): Promise<void> {
    const counted: [RateLimiterAbstract, string][] = [[this.mails, await this.contacts.lookupKey('address', address)]];
    if (to.recipient !== undefined) counted.push([this.recipients, await this.contacts.lookupKey('email', to.recipient)]);
    if (to.accountId !== undefined) counted.push([this.accountMails, to.accountId]);
    let waitMs = 0;
    for (const [bound, key] of counted) {
      try {
        await bound.consume(key);
      } catch (rejection) {
        const msBeforeNext = (rejection as { msBeforeNext?: number }).msBeforeNext;
        if (typeof msBeforeNext !== 'number') throw rejection;
        waitMs = Math.max(waitMs, msBeforeNext);
      }
    }
    if (waitMs > 0) throw tooMany(waitMs, 'Too many mails asked for');
  }
}

function tooMany(waitMs: number, what: string): RateLimited {
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new RateLimited(`${what}; try again in ${retryAfterSeconds} s`, { retryAfterSeconds });
}
