import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Wallet top-ups. `payment_topups` is the `topups` projection's read model of the `topUp-*`
 * streams (the console's history, the daily limit, the recovery sweep, the auditor's
 * reconciliation); `payment_accounts` its read model of the organizations' dedicated bank accounts
 * (`paymentAccount-*`). `sandbox_payments` is the sandbox payment rail's own record of its
 * transactions, as Paystack keeps its own: shared by every instance, never rebuilt from the log.
 */
export class Payments1796000001400 implements MigrationInterface {
  name = 'Payments1796000001400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table payment_topups (
        reference text primary key,
        organization_id text not null,
        environment text not null check (environment in ('test', 'live')),
        rail text not null,
        channel text not null,
        status text not null,
        initiated_kobo bigint not null,
        paid_kobo bigint,
        fees_kobo bigint,
        credited_kobo bigint,
        flag_reason text,
        provider_transaction_id text,
        paid_at text,
        revision bigint not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    await q.query('create index payment_topups_by_wallet on payment_topups (organization_id, environment, created_at desc)');
    await q.query(`create index payment_topups_unfinished on payment_topups (created_at) where status in ('initiated', 'paid')`);
    await q.query(`
      create table payment_accounts (
        customer_code text primary key,
        organization_id text not null,
        environment text not null check (environment in ('test', 'live')),
        rail text not null,
        account_number text not null,
        account_name text not null,
        bank_name text not null,
        unique (organization_id, environment)
      )`);
    await q.query(`
      create table sandbox_payments (
        id bigserial primary key,
        reference text not null unique,
        amount_kobo bigint not null,
        status text not null,
        fees_kobo bigint not null default 0,
        callback_url text not null,
        paid_at timestamptz,
        created_at timestamptz not null
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists sandbox_payments');
    await q.query('drop table if exists payment_accounts');
    await q.query('drop table if exists payment_topups');
  }
}
