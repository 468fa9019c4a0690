import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console's accounts: integrators' and operators' users, their sessions, one-time tokens (email
 * verification, password reset, invitations) and the mail outbox. These are credentials and
 * authentication state, not ledger facts: they live in tables, and every business change a user
 * makes is still an event with the user as its actor. Passwords are Argon2id hashes; session and
 * one-time tokens are stored as SHA-256 hashes; TOTP secrets are wrapped under the master key.
 * Also the organizations read model's `live_access_requested_at` (LiveAccessRequested).
 */
export class ConsoleAccounts1795700000000 implements MigrationInterface {
  name = 'ConsoleAccounts1795700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table console_users (
        id text primary key,
        kind text not null check (kind in ('integrator', 'operator')),
        organization_id text,
        email text not null,
        email_key text not null unique,
        password_hash text,
        role text not null,
        email_verified_at timestamptz,
        totp_secret text,
        totp_enabled_at timestamptz,
        created_at timestamptz not null,
        check ((kind = 'integrator' and organization_id is not null and role in ('owner', 'developer', 'finance'))
            or (kind = 'operator' and organization_id is null and role in ('admin', 'auditor')))
      )`);
    await q.query('create index console_users_organization on console_users (organization_id, created_at)');
    await q.query(`
      create table console_sessions (
        id text primary key,
        token_hash text not null unique,
        user_id text not null references console_users (id) on delete cascade,
        csrf_token text not null,
        created_at timestamptz not null,
        last_seen_at timestamptz not null,
        expires_at timestamptz not null,
        revoked_at timestamptz,
        user_agent text,
        address text
      )`);
    await q.query('create index console_sessions_user on console_sessions (user_id, created_at desc)');
    await q.query(`
      create table console_tokens (
        token_hash text primary key,
        id text not null unique,
        purpose text not null check (purpose in ('verify_email', 'reset_password', 'invitation')),
        user_id text references console_users (id) on delete cascade,
        kind text not null check (kind in ('integrator', 'operator')),
        organization_id text,
        email text not null,
        role text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz
      )`);
    await q.query('create index console_tokens_invitations on console_tokens (organization_id, purpose) where used_at is null');
    await q.query(`
      create table console_outbox (
        id bigserial primary key,
        recipient text not null,
        subject text not null,
        body text,
        link text,
        created_at timestamptz not null,
        sent_at timestamptz,
        attempts integer not null default 0,
        last_error text
      )`);
    await q.query('create index console_outbox_unsent on console_outbox (id) where sent_at is null');
    await q.query('alter table organizations add column live_access_requested_at timestamptz');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table organizations drop column if exists live_access_requested_at');
    await q.query('drop table if exists console_outbox');
    await q.query('drop table if exists console_tokens');
    await q.query('drop table if exists console_sessions');
    await q.query('drop table if exists console_users');
  }
}
