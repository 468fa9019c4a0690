import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The read models. Every table here is owned by one projection and can be dropped and rebuilt
 * from the event log at any time, except `api_key_usage`, which is operational data (last use of
 * a key) written by the API and kept outside the projections on purpose: a use is not a fact worth
 * an event.
 */
export class ReadModels1732250000001 implements MigrationInterface {
  name = 'ReadModels1732250000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table projection_checkpoints (
        name text primary key,
        position bigint not null default 0,
        events_processed bigint not null default 0,
        updated_at timestamptz not null default now(),
        state text not null default 'running',
        error text,
        failed_position bigint
      )`);

    await q.query(`
      create table organizations (
        id text primary key,
        name text not null,
        email text not null,
        status text not null check (status in ('pending', 'approved', 'suspended')),
        approved boolean not null default false,
        active_scopes text[] not null,
        prices jsonb not null default '{}',
        providers jsonb not null default '{}',
        suspension_reason text,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    await q.query('create index organizations_created on organizations (created_at desc, id desc)');

    await q.query(`
      create table api_keys (
        id text primary key,
        organization_id text not null,
        name text,
        key_hash text not null unique,
        prefix text not null,
        last4 text not null,
        environment text not null check (environment in ('test', 'live')),
        scopes text[],
        created_at timestamptz not null,
        revoked_at timestamptz
      )`);
    await q.query('create index api_keys_organization on api_keys (organization_id, created_at)');
    await q.query('create table api_key_usage (key_id text primary key, last_used_at timestamptz not null)');

    await q.query(`
      create table wallets (
        organization_id text not null,
        environment text not null check (environment in ('test', 'live')),
        funded_kobo bigint not null default 0,
        debited_kobo bigint not null default 0,
        balance_kobo bigint not null default 0,
        reserved_kobo bigint not null default 0,
        updated_at timestamptz not null,
        primary key (organization_id, environment)
      )`);
    await q.query(`
      create table wallet_reservations (
        reference text primary key,
        organization_id text not null,
        environment text not null,
        amount_kobo bigint not null,
        reserved_at timestamptz not null
      )`);
    await q.query('create index wallet_reservations_age on wallet_reservations (reserved_at)');

    await q.query(`
      create table wallet_ledger (
        organization_id text not null,
        environment text not null,
        event_position bigint not null,
        entry_type text not null check (entry_type in ('funding', 'reservation', 'debit', 'release')),
        reference text not null,
        amount_kobo bigint not null,
        balance_kobo bigint not null,
        reserved_kobo bigint not null,
        available_kobo bigint not null,
        scope text,
        occurred_at timestamptz not null,
        primary key (organization_id, environment, event_position)
      )`);

    await q.query(`
      create table verifications (
        reference text primary key,
        organization_id text not null,
        environment text not null,
        key_id text not null,
        scope text not null,
        category text not null,
        country_code text not null,
        status text not null check (status in ('pending', 'found', 'not_found', 'failed')),
        request jsonb not null,
        result jsonb not null default '{}',
        error_message text,
        price_kobo bigint not null,
        charged boolean not null default false,
        created_at timestamptz not null,
        completed_at timestamptz
      )`);
    // Keyset-friendly list indexes: most recent first, with and without each filter.
    await q.query('create index verifications_list on verifications (organization_id, environment, created_at desc, reference desc)');
    await q.query('create index verifications_list_status on verifications (organization_id, environment, status, created_at desc, reference desc)');
    await q.query('create index verifications_list_scope on verifications (organization_id, environment, scope, created_at desc, reference desc)');
    await q.query(`create index verifications_pending on verifications (created_at) where status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['verifications', 'wallet_ledger', 'wallet_reservations', 'wallets', 'api_key_usage', 'api_keys', 'organizations', 'projection_checkpoints']) {
      await q.query(`drop table if exists ${table}`);
    }
  }
}
