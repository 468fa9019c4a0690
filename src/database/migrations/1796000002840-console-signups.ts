import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-ups answered but not yet carried out (src/console/sign-ups.ts): the request records one and
 * answers, whether or not the address has an account, and a background pass registers the
 * organization or mails the holder. The row stays until that is done, so a crash loses no sign-up.
 * The address and the organization's name are sealed; the lookup key is keyed (ContactData).
 */
export class ConsoleSignUps1796000002840 implements MigrationInterface {
  name = 'ConsoleSignUps1796000002840';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table console_signups (
        user_id text primary key,
        organization_id text not null,
        email_key text not null,
        email text not null,
        organization_name text not null,
        password_hash text not null,
        context jsonb not null,
        created_at timestamptz not null,
        attempts integer not null default 0,
        last_error text,
        next_attempt_at timestamptz not null
      )`);
    await q.query('create index console_signups_due on console_signups (next_attempt_at)');
    await q.query('create index console_signups_email on console_signups (email_key)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists console_signups');
  }
}
