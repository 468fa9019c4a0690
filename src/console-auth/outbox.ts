import { Inject, Injectable } from '@nestjs/common';
import type { Transporter } from 'nodemailer';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG, RUNTIME, type Runtime } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import type { Db } from './accounts.js';

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

/**
 * The console's mail, through an outbox table: a mail is written in the request that causes it and
 * delivered by a background pass, so a slow or absent mail server never fails a sign-up. With
 * SMTP_URL the pass sends through nodemailer; without (the embedded default, or an operator's
 * CONSOLE_MAIL_LOG_ONLY), it logs only that a mail was queued: never the link, which is a
 * credential until used, nor the address. The embedded default keeps the mail for the development
 * mailbox; elsewhere a delivered mail's text and link are dropped.
 */
@Injectable()
export class Outbox extends PeriodicSweep<number> {
  private transport: Transporter | undefined;

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(Clock) private readonly clock: Clock,
  ) {
    super('ConsoleMail', 'mail delivery', DELIVERY_INTERVAL_MS, clock);
  }

  /** True where the development mailbox exists: the embedded default with no mail server. */
  get devMailbox(): boolean {
    return this.runtime.embedded;
  }

  /** `db`: the transaction of the change that sends it, so that the mail leaves only if the change is kept. */
  async enqueue(mail: Mail, db: Db = this.pool): Promise<void> {
    await db.query('insert into console_outbox (recipient, subject, body, link, created_at) values ($1, $2, $3, $4, $5)', [mail.to, mail.subject, mail.text, mail.link, this.clock.now()]);
  }

  /** The newest mails, for the development mailbox. */
  async mailbox(): Promise<MailboxEntry[]> {
    const { rows } = await this.pool.query<{ id: string; recipient: string; subject: string; body: string | null; link: string | null; created_at: Date }>(
      'select id, recipient, subject, body, link, created_at from console_outbox order by id desc limit $1',
      [MAILBOX_SIZE],
    );
    return rows.map((row) => ({ id: String(row.id), to: row.recipient, subject: row.subject, text: row.body ?? '', link: row.link, createdAt: row.created_at.toISOString() }));
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
          await this.deliver({ to: row.recipient, subject: row.subject, text: row.body ?? '', link: row.link });
          const keep = this.devMailbox;
          await client.query(`update console_outbox set sent_at = $2, attempts = attempts + 1, body = case when $3 then body else null end, link = case when $3 then link else null end where id = $1`, [row.id, now, keep]);
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
      this.logger.log(this.devMailbox ? 'A console mail was queued, not sent (no SMTP_URL): read it in the development mailbox, /console/mailbox' : 'A console mail was queued, not sent (no SMTP_URL, CONSOLE_MAIL_LOG_ONLY)');
      return;
    }
    // Loaded only where mail goes out by SMTP: the CLIs and the embedded default never pay for it.
    this.transport ??= (await import('nodemailer')).createTransport(smtpUrl);
    await this.transport.sendMail({ from: this.config.console.mailFrom, to: mail.to, subject: mail.subject, text: mail.text });
  }

  override async onModuleDestroy(): Promise<void> {
    await super.onModuleDestroy();
    this.transport?.close();
  }
}
