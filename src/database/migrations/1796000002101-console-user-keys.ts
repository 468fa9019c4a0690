import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each console user's own key for its contact data (src/data-protection/contact-data.ts), wrapped
 * under its owner's key-encryption key (the organization's, or `console:contacts` for operators).
 * Deleting one's account destroys it (the row stays, its key null with when): the email sealed
 * under it no longer opens anywhere, backups of `console_users` included.
 */
export class ConsoleUserKeys1796000002101 implements MigrationInterface {
  name = 'ConsoleUserKeys1796000002101';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table if not exists console_user_keys (
        user_id text primary key,
        owner text not null,
        wrapped_key text,
        created_at timestamptz not null default now(),
        destroyed_at timestamptz,
        check ((wrapped_key is null) = (destroyed_at is not null))
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists console_user_keys');
  }
}
