import { Inject, Injectable } from '@nestjs/common';
import type { Transporter } from 'nodemailer';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG, RUNTIME, type Runtime } from '../config/runtime.js';
import { ContactData, ERASED_CONTACT } from '../data-protection/contact-data.js';
import { PG_POOL } from '../database/pool.js';
import { userEmailContext, type Db } from './accounts.js';

const DELIVERY_INTERVAL_MS = 1_000;
/** Mails handed to the transport per pass. */
const BATCH = 20;
/** A mail that failed this many times is left (with its last error) for an operator to look at. */
const MAX_ATTEMPTS = 10;
const MAILBOX_SIZE = 100;

export interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  /** The one-time link the mail carries, shown apart in the development mailbox. */
  readonly link: string | null;
}

export interface MailboxEntry {
  readonly id: string;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly link: string | null;
  readonly createdAt: string;
}

/** The recipient of a mail to an organization's member, written by SQL: `user:` and the member's id (see recipientOf). */
export const USER_RECIPIENT = 'user:';

/**
 * The console's mail, through an outbox table: a mail is written in the request that causes it and
 * delivered by a background pass, so a slow or absent mail server never fails a sign-up. With
 * SMTP_URL the pass sends through nodemailer; without (the embedded default, or an operator's
 * CONSOLE_MAIL_LOG_ONLY), it logs only that a mail was queued: never the link, which is a
 * credential until used, nor the address. The embedded default keeps the mail for the development
 * mailbox; elsewhere a delivered mail's text and link are dropped. The recipient, the text and the
 * link are stored sealed under the console's contact key (ContactData), opened to send or show.
 */
@Injectable()
export class Outbox extends PeriodicSweep<number> {
  private transport: Transporter | undefined;

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(ContactData) private readonly contacts: ContactData,
  ) {
    super('ConsoleMail', 'mail delivery', DELIVERY_INTERVAL_MS, clock);
  }

  /** True where the development mailbox exists: the embedded default with no mail server. */
  get devMailbox(): boolean {
    return this.runtime.embedded;
  }

  /** `db`: the transaction of the change that sends it, so that the mail leaves only if the change is kept. */
  async enqueue(mail: Mail, db: Db = this.pool): Promise<void> {
    const [recipient, body, link] = await Promise.all([
      this.contacts.seal(null, 'console_outbox.recipient', mail.to),
      this.contacts.seal(null, 'console_outbox.body', mail.text),
      this.contacts.sealNullable(null, 'console_outbox.link', mail.link),
    ]);
    await db.query('insert into console_outbox (recipient, subject, body, link, created_at) values ($1, $2, $3, $4, $5)', [recipient, mail.subject, body, link, this.clock.now()]);
  }

  private async opened(row: { recipient: string; body: string | null; link: string | null }): Promise<{ to: string; text: string; link: string | null }> {
    const [to, text, link] = await Promise.all([
      this.recipientOf(row.recipient),
      this.contacts.openNullable(null, 'console_outbox.body', row.body),
      this.contacts.openNullable(null, 'console_outbox.link', row.link),
    ]);
    return { to, text: text ?? '', link };
  }

  /**
   * A mail's address: sealed in the row, or `user:<id>` for a mail written by SQL to an
   * organization's members (low balance, a failing endpoint, a receipt), whose address is read
   * from the member's own sealed email when the mail leaves; ERASED_CONTACT once that member is gone
   * or the organization offboarded.
   */
  private async recipientOf(stored: string): Promise<string> {
    if (!stored.startsWith(USER_RECIPIENT)) return this.contacts.open(null, 'console_outbox.recipient', stored);
    const userId = stored.slice(USER_RECIPIENT.length);
    const { rows } = await this.pool.query<{ organization_id: string | null; email: string }>('select organization_id, email from console_users where id = $1', [userId]);
    return rows[0] === undefined ? ERASED_CONTACT : this.contacts.open(rows[0].organization_id, userEmailContext(userId), rows[0].email);
  }

  /** The newest mails, for the development mailbox. */
  async mailbox(): Promise<MailboxEntry[]> {
    const { rows } = await this.pool.query<{ id: string; recipient: string; subject: string; body: string | null; link: string | null; created_at: Date }>(
      'select id, recipient, subject, body, link, created_at from console_outbox order by id desc limit $1',
      [MAILBOX_SIZE],
    );
    return Promise.all(rows.map(async (row) => ({ id: String(row.id), ...(await this.opened(row)), subject: row.subject, createdAt: row.created_at.toISOString() })));
  }

  protected async pass(now: Date): Promise<number> {
    const client = await this.pool.connect();
    let delivered = 0;
    try {
      await client.query('begin');
      const { rows } = await client.query<{ id: string; recipient: string; subject: string; body: string | null; link: string | null }>(
        'select id, recipient, subject, body, link from console_outbox where sent_at is null and attempts < $1 order by id limit $2 for update skip locked',
        [MAX_ATTEMPTS, BATCH],
      );
      for (const row of rows) {
        try {
          const mail = await this.opened(row);
          // Nobody to send to any more (the member or the organization's keys are gone): done.
          if (mail.to !== ERASED_CONTACT) await this.deliver({ ...mail, subject: row.subject });
          const keep = this.devMailbox;
          await client.query(
            `update console_outbox set sent_at = $2, attempts = attempts + 1, body = case when $3 then body else null end, link = case when $3 then link else null end where id = $1`,
            [row.id, now, keep],
          );
          delivered += 1;
        } catch (error) {
          await client.query('update console_outbox set attempts = attempts + 1, last_error = $2 where id = $1', [row.id, String((error as Error).message ?? error).slice(0, 500)]);
        }
      }
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    return delivered;
  }

  private async deliver(mail: Mail): Promise<void> {
    const smtpUrl = this.config.console.smtpUrl;
    if (smtpUrl === undefined) {
      this.logger.log(
        this.devMailbox
          ? 'A console mail was queued, not sent (no SMTP_URL): read it in the development mailbox, /console/mailbox'
          : 'A console mail was queued, not sent (no SMTP_URL, CONSOLE_MAIL_LOG_ONLY)',
      );
      return;
    }
    // Loaded only where mail goes out by SMTP: the CLIs and the embedded default never pay for it.
    this.transport ??= (await import('nodemailer')).createTransport(smtpUrl);
    await this.transport.sendMail({ from: this.config.console.mailFrom, to: mail.to, subject: mail.subject, text: this.absoluteLinks(mail) });
  }

  /** A mail whose link is a path of the console (a low-balance mail's Top up) has it written with the console's address: PUBLIC_BASE_URL, else localhost and the port. */
  private absoluteLinks(mail: Mail): string {
    if (mail.link === null || !mail.link.startsWith('/')) return mail.text;
    const origin = (this.config.portraits.publicBaseUrl ?? `http://localhost:${this.config.port}`).replace(/\/+$/, '');
    return mail.text.split(mail.link).join(`${origin}${mail.link}`);
  }

  override async onModuleDestroy(): Promise<void> {
    await super.onModuleDestroy();
    this.transport?.close();
  }
}
