import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { AppError } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import { AccountEvents } from '../console-auth/account-events.js';
import { AccountStore } from '../console-auth/accounts.js';
import { emailKey } from '../console-auth/tokens.js';
import { ContactData } from '../data-protection/contact-data.js';
import { PG_POOL } from '../database/pool.js';
import { consoleSignUpFailuresTotal } from '../metrics/metrics.js';
import { IssueApiKey, RegisterOrganization } from '../organizations/organization.commands.js';
import { OrganizationStore } from '../organizations/organization.store.js';
import { ConsoleSessions, PLAYGROUND_KEY_NAME, type RecordedSignUp } from './console-session.service.js';

/** A pass looks for sign-ups left over (a failure, a crash) this often; a new one is carried out at once. */
const PASS_INTERVAL_MS = 1_000;
/** Sign-ups carried out per pass. */
const BATCH = 20;
/** The longest wait before a failed sign-up is tried again (it doubles from a second up to this). */
const RETRY_MAX_MS = 15 * 60_000;

interface SignUpRow {
  user_id: string;
  organization_id: string;
  email: string;
  organization_name: string;
  password_hash: string;
  context: CommandContext;
}

/** What a failure leaves in the row and the log: the error's code, never its message (which may quote the input). */
function failureCode(error: unknown): string {
  return error instanceof AppError ? error.code : error instanceof Error ? error.name : 'unknown';
}

/**
 * The console's sign-ups, carried out after their answer. The request checks the fields, hashes
 * the password and records the sign-up (this table), then answers: the same work, so the same time,
 * whether or not the address has an account. This pass then registers the organization, its owner
 * and playground key and mails the confirmation, or mails the address's holder instead. The row is
 * deleted in the transaction that holds it claimed, once everything is done: a crash or a failure
 * leaves it for the next pass, and every step is found done on a retry (the organization by the id
 * recorded, the key by the organization's state, the owner by the id recorded). A sign-in with the
 * address carries its pending sign-up out first, so that a new account can sign in at once.
 */
@Injectable()
export class SignUps extends PeriodicSweep<number> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(AccountStore) private readonly accounts: AccountStore,
    @Inject(AccountEvents) private readonly events: AccountEvents,
    @Inject(ConsoleSessions) private readonly sessions: ConsoleSessions,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(OrganizationStore) private readonly organizations: OrganizationStore,
    @Inject(ContactData) private readonly contacts: ContactData,
    @Inject(Clock) private readonly clock: Clock,
  ) {
    super('ConsoleSignUps', 'sign-up', PASS_INTERVAL_MS, clock);
  }

  /** Records a sign-up and starts carrying it out after the answer; the address and name are sealed. */
  async record(signUp: RecordedSignUp): Promise<void> {
    const [key, email, name] = await Promise.all([
      this.contacts.lookupKey('email', signUp.email),
      this.contacts.seal(null, 'console_signups.email', signUp.email),
      this.contacts.seal(null, 'console_signups.organization_name', signUp.organizationName),
    ]);
    const now = this.clock.now();
    await this.pool.query(
      `insert into console_signups (user_id, organization_id, email_key, email, organization_name, password_hash, context, created_at, next_attempt_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
      [signUp.userId, signUp.organizationId, key, email, name, signUp.passwordHash, JSON.stringify(signUp.context), now],
    );
    // Not awaited: the answer does not wait for it. A pass already under way is joined, and the next one takes the row.
    void this.runOnce().catch(() => undefined);
  }

  /** Carries out the pending sign-ups of `email` now (waiting for one a pass holds): before a sign-in looks the account up. */
  async settle(email: string): Promise<void> {
    const { rows } = await this.pool.query<{ user_id: string }>('select user_id from console_signups where email_key = any($1::text[])', [
      await this.contacts.lookupKeys('email', email),
    ]);
    for (const row of rows) await this.carryOut(row.user_id, 'wait').catch(() => undefined);
  }

  protected async pass(now: Date): Promise<number> {
    const { rows } = await this.pool.query<{ user_id: string }>('select user_id from console_signups where next_attempt_at <= $1 order by created_at limit $2', [now, BATCH]);
    let done = 0;
    for (const row of rows) if (await this.carryOut(row.user_id, 'skip')) done++;
    return done;
  }

  /**
   * One sign-up, claimed for the whole of it by a session advisory lock (`skip`: by a pass, which
   * leaves one claimed to whoever holds it; `wait`: by a sign-in, which waits for it). Not a row
   * lock: a transaction held open while the commands append would hold back the PostgreSQL log,
   * and with it the projections those commands wait for. True when it was carried out now.
   */
  private async carryOut(userId: string, claiming: 'skip' | 'wait'): Promise<boolean> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    const lock = async (name: string, wait: boolean): Promise<boolean> => {
      if (wait) {
        await client.query('select pg_advisory_lock(hashtextextended($1, 7))', [name]);
        return true;
      }
      const { rows } = await client.query<{ got: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 7)) as got', [name]);
      return rows[0]?.got === true;
    };
    const unlock = (name: string) => client.query('select pg_advisory_unlock(hashtextextended($1, 7))', [name]);
    try {
      const claim = `console-signup:${userId}`;
      if (!(await lock(claim, claiming === 'wait'))) return false;
      try {
        const { rows } = await client.query<SignUpRow>(
          'select user_id, organization_id, email, organization_name, password_hash, context from console_signups where user_id = $1',
          [userId],
        );
        const row = rows[0];
        // Carried out meanwhile by whoever held the claim.
        if (row === undefined) return false;
        const email = await this.contacts.open(null, 'console_signups.email', row.email);
        // One address's sign-ups one at a time, on every instance: two cannot both register an organization for it.
        const address = `console-email:${emailKey(email)}`;
        await lock(address, true);
        try {
          await this.register(row, email);
        } catch (error) {
          await this.failed(userId, failureCode(error));
          return false;
        } finally {
          await unlock(address);
        }
        await client.query('delete from console_signups where user_id = $1', [userId]);
        return true;
      } finally {
        await unlock(claim);
      }
    } catch (error) {
      // A connection that may still hold a lock is closed rather than pooled.
      broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /** Each step is skipped when a previous attempt did it already. */
  private async register(row: SignUpRow, email: string): Promise<void> {
    const existing = await this.accounts.byEmail(email);
    if (existing !== undefined && existing.id !== row.user_id) {
      await this.sessions.mailAccountExists(existing);
      return;
    }
    const context = row.context;
    const name = await this.contacts.open(null, 'console_signups.organization_name', row.organization_name);
    const organizationId = row.organization_id;
    if ((await this.organizations.load(organizationId)).state.id === null) {
      await this.commands.execute(new RegisterOrganization({ name, email }, context, { organizationId }));
    }
    if ((await this.organizations.load(organizationId)).state.keys.size === 0) {
      await this.commands.execute(new IssueApiKey(organizationId, { environment: 'test', name: PLAYGROUND_KEY_NAME, scopes: null }, context));
    }
    const user =
      existing ??
      (await this.events.record(context, async (db) => ({
        value: await this.accounts.insert(
          {
            id: row.user_id,
            kind: 'integrator',
            organizationId,
            email,
            role: 'owner',
            passwordHash: row.password_hash,
            emailVerifiedAt: null,
            createdAt: this.clock.now(),
          },
          db,
        ),
        events: [{ type: 'ConsoleUserSignedUp', data: { schemaVersion: 1, userId: row.user_id, organizationId, role: 'owner' } }],
      })));
    // After a crash between the owner and the mail, the mail again: a second confirmation link does no harm, none does.
    await this.sessions.sendVerification(user);
  }

  private async failed(userId: string, code: string): Promise<void> {
    consoleSignUpFailuresTotal.inc({ code });
    this.logger.warn(`A sign-up could not be carried out (${code}); a later pass tries again`);
    await this.pool.query(
      `update console_signups set attempts = attempts + 1, last_error = $2,
         next_attempt_at = $3::timestamptz + least(1000 * power(2, least(attempts, 20))::bigint, $4::bigint) * interval '1 millisecond'
       where user_id = $1`,
      [userId, code, this.clock.now(), RETRY_MAX_MS],
    );
  }
}
