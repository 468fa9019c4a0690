import { Inject, Injectable, Logger } from '@nestjs/common';
import type pg from 'pg';
import { ContactData, ERASED_CONTACT, isSealedContact, SEALED_PREFIX } from '../data-protection/contact-data.js';
import { OrganizationKeysDestroyed } from '../data-protection/data-keys.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { tokenEmailContext, userEmailContext } from './accounts.js';

/** Session-wide lock: one process seals at a time; the others find nothing left or skip. */
const LOCK = "hashtext('seal-legacy-contacts')";
/** The organizations' email as sealed by RegisterOrganization (organization.views.ts ORGANIZATION_EMAIL_CONTEXT). */
const ORGANIZATION_EMAIL_CONTEXT = 'organization.email';
/** An erased value's sealed form: its organization's keys are gone, so it opens to nothing. */
const SHREDDED = 'c1:';

export interface LegacyContactReport {
  readonly users: number;
  readonly tokens: number;
  readonly mails: number;
  readonly sessions: number;
  readonly organizations: number;
  readonly events: number;
  readonly throttleKeys: number;
}

/**
 * Contact data written in clear before it was sealed: console users' and tokens' emails (and the
 * email lookup key, then the lower-cased address), outbox mail, sessions' browser and address, the
 * organizations read model's email and, on the PostgreSQL log, the `email` of
 * OrganizationRegistered events (rewritten in place under `ledger.seal_legacy_events`, migration
 * 1796000001100). Sealed in the background at every start (nothing is left after the first); throttle counters keyed by a clear email or address are deleted (they last an hour).
 * An offboarded organization's values are shredded, not sealed.
 */
@Injectable()
export class LegacyContactSealing {
  private readonly logger = new Logger('LegacyContactSealing');

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ContactData) private readonly contacts: ContactData,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  /** The start-up pass, run in the background (a start does not wait for it); settles when it has. */
  finished: Promise<void> = Promise.resolve();

  /** Started by the server (app.factory.ts), not by the CLIs. */
  start(): void {
    this.finished = this.run().then(
      (report) => {
        const total = (Object.values(report) as number[]).reduce((sum, count) => sum + count, 0);
        if (total > 0) this.logger.log(`Sealed contact data written in clear: ${JSON.stringify(report)}`);
      },
      (error: unknown) => {
        this.logger.error(`Sealing the contact data written in clear failed: ${error instanceof Error ? error.name : 'unknown'}`);
      },
    );
  }

  /** Seals what is left in clear; counts what it sealed (zeros when another process holds the lock). */
  async run(): Promise<LegacyContactReport> {
    const lock = await this.pool.connect();
    try {
      const { rows } = await lock.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK}) as locked`);
      if (!rows[0].locked) return { users: 0, tokens: 0, mails: 0, sessions: 0, organizations: 0, events: 0, throttleKeys: 0 };
      try {
        return {
          users: await this.users(),
          tokens: await this.tokens(),
          mails: await this.mails(),
          sessions: await this.sessions(),
          organizations: await this.organizations(),
          events: await this.events(),
          throttleKeys: (await this.pool.query(`delete from rate_limits where key ~ '^console_(login|mail)_[a-z]+:' and key !~ '^console_(login|mail)_[a-z]+:h1:'`)).rowCount ?? 0,
        };
      } finally {
        await lock.query(`select pg_advisory_unlock(${LOCK})`).catch(() => undefined);
      }
    } finally {
      lock.release();
    }
  }

  /** The value sealed for `owner`, or the shredded marker when the owner was offboarded. */
  private async sealed(owner: string | null, context: string, value: string): Promise<string> {
    try {
      return await this.contacts.seal(owner, context, value);
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed || (error as { code?: string }).code === 'personal_data_destroyed') return SHREDDED;
      throw error;
    }
  }

  /**
   * Console users' emails not yet under the user's own key (ContactData.sealForUser): in clear, or
   * sealed under the organization's key by an older version. Moved under it, so that deleting the
   * account shreds them.
   */
  private async users(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string; organization_id: string | null; email: string }>(
      "select id, organization_id, email from console_users where email not like 'c1:u:%' and email <> $1",
      [SHREDDED],
    );
    for (const row of rows) {
      const sealed = isSealedContact(row.email);
      const clear = sealed ? await this.contacts.open(row.organization_id, userEmailContext(row.id), row.email) : row.email;
      const email = clear === ERASED_CONTACT ? SHREDDED : await this.sealedForUser(row.organization_id, row.id, clear);
      const key = sealed ? null : await this.contacts.lookupKey('email', row.email);
      await this.pool.query('update console_users set email = $2, email_key = coalesce($3, email_key) where id = $1', [row.id, email, key]);
    }
    return rows.length;
  }

  private async sealedForUser(owner: string | null, userId: string, value: string): Promise<string> {
    try {
      return await this.contacts.sealForUser(owner, userId, userEmailContext(userId), value);
    } catch (error) {
      if (error instanceof OrganizationKeysDestroyed || (error as { code?: string }).code === 'personal_data_destroyed') return SHREDDED;
      throw error;
    }
  }

  private async tokens(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string; organization_id: string | null; email: string }>(
      "select id, organization_id, email from console_tokens where email not like 'c1:%'",
    );
    for (const row of rows)
      await this.pool.query('update console_tokens set email = $2 where id = $1', [row.id, await this.sealed(row.organization_id, tokenEmailContext(row.id), row.email)]);
    return rows.length;
  }

  private async mails(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string; recipient: string; body: string | null; link: string | null }>(
      "select id, recipient, body, link from console_outbox where recipient not like 'c1:%' or body not like 'c1:%' or link not like 'c1:%'",
    );
    const seal = (context: string, value: string | null) => (value === null || isSealedContact(value) ? value : this.sealed(null, context, value));
    for (const row of rows) {
      await this.pool.query('update console_outbox set recipient = $2, body = $3, link = $4 where id = $1', [
        row.id,
        await seal('console_outbox.recipient', row.recipient),
        await seal('console_outbox.body', row.body),
        await seal('console_outbox.link', row.link),
      ]);
    }
    return rows.length;
  }

  private async sessions(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string; user_agent: string | null; address: string | null }>(
      "select id, user_agent, address from console_sessions where user_agent not like 'c1:%' or address not like 'c1:%'",
    );
    const seal = (context: string, value: string | null) => (value === null || isSealedContact(value) ? value : this.sealed(null, context, value));
    for (const row of rows) {
      await this.pool.query('update console_sessions set user_agent = $2, address = $3 where id = $1', [
        row.id,
        await seal(`console_sessions.user_agent:${row.id}`, row.user_agent),
        await seal(`console_sessions.address:${row.id}`, row.address),
      ]);
    }
    return rows.length;
  }

  private async organizations(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string; email: string }>("select id, email from organizations where email not like 'c1:%'");
    for (const row of rows) await this.pool.query('update organizations set email = $2 where id = $1', [row.id, await this.sealed(row.id, ORGANIZATION_EMAIL_CONTEXT, row.email)]);
    return rows.length;
  }

  /** OrganizationRegistered events of the PostgreSQL log with a clear email (none on EventStoreDB's, which this cannot rewrite). */
  private async events(): Promise<number> {
    const log = this.store.logReader?.legacyEvents;
    if (log === undefined) return 0;
    const rows = await log.clearOrganizationEmails(SEALED_PREFIX);
    for (const row of rows) await log.sealOrganizationEmail(row.position, await this.sealed(row.organizationId, ORGANIZATION_EMAIL_CONTEXT, row.email));
    return rows.length;
  }
}
