import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Integrators' second factor: a session waits for it after the password (`second_factor_pending`),
 * backup codes (hashes only, each used once), passkeys (public keys: nothing secret), WebAuthn
 * challenges (one live per session and purpose, taken once), and the owner's requirement of a
 * second factor for the whole organization.
 */
export class ConsoleSecondFactor1796000001000 implements MigrationInterface {
  name = 'ConsoleSecondFactor1796000001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table console_sessions add column second_factor_pending boolean not null default false');
    await q.query(`
      create table console_backup_codes (
        code_hash text primary key,
        user_id text not null references console_users (id) on delete cascade,
        created_at timestamptz not null,
        used_at timestamptz
      )`);
    await q.query('create index console_backup_codes_user on console_backup_codes (user_id)');
    await q.query(`
      create table console_passkeys (
        id text primary key,
        user_id text not null references console_users (id) on delete cascade,
        credential_id text not null unique,
        public_key bytea not null,
        counter bigint not null,
        transports text[] not null default '{}',
        name text not null,
        created_at timestamptz not null,
        last_used_at timestamptz
      )`);
    await q.query('create index console_passkeys_user on console_passkeys (user_id, created_at)');
    await q.query(`
      create table console_webauthn_challenges (
        session_id text not null references console_sessions (id) on delete cascade,
        purpose text not null check (purpose in ('register', 'authenticate')),
        challenge text not null,
        expires_at timestamptz not null,
        primary key (session_id, purpose)
      )`);
    await q.query(`
      create table console_organization_settings (
        organization_id text primary key,
        require_second_factor boolean not null default false,
        updated_at timestamptz not null
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists console_organization_settings');
    await q.query('drop table if exists console_webauthn_challenges');
    await q.query('drop table if exists console_passkeys');
    await q.query('drop table if exists console_backup_codes');
    await q.query('alter table console_sessions drop column if exists second_factor_pending');
  }
}
