import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks. The `webhooks` subscriber of the log owns the first four tables and writes them in the
 * transaction of its checkpoint: the endpoints (their URL, description and secrets sealed under the
 * master key), what earlier events of a stream said (a verification's organization, environment
 * and scope; a key's environment), each wallet's balance and low-balance threshold, and the
 * deliveries, one per message and endpoint. The sender claims due deliveries (row locks) and
 * records every attempt in `webhook_attempts` (no foreign key: the subscriber's tables are
 * truncated together in tests, and an attempt is only ever written beside its delivery's update).
 */
export class Webhooks1796000000600 implements MigrationInterface {
  name = 'Webhooks1796000000600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table webhook_endpoints (
        id text primary key,
        organization_id text not null,
        environment text not null check (environment in ('test', 'live')),
        target text not null,
        master_key_id text not null,
        event_types text[] not null,
        enabled boolean not null,
        disabled_reason text,
        secrets jsonb not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        deleted_at timestamptz
      )`);
    await q.query('create index webhook_endpoints_owner on webhook_endpoints (organization_id, environment, created_at) where deleted_at is null');
    await q.query(`
      create table webhook_stream_facts (
        key text primary key,
        organization_id text not null,
        environment text not null,
        scope text
      )`);
    await q.query(`
      create table webhook_wallet_alerts (
        organization_id text not null,
        environment text not null,
        balance_kobo bigint not null default 0,
        revision bigint not null default -1,
        threshold_kobo bigint,
        primary key (organization_id, environment)
      )`);
    await q.query(`
      create table webhook_deliveries (
        id bigserial primary key,
        endpoint_id text not null,
        message_id text not null,
        event_type text not null,
        organization_id text not null,
        environment text,
        body text not null,
        occurred_at timestamptz not null,
        created_at timestamptz not null,
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        attempts integer not null default 0,
        next_attempt_at timestamptz,
        last_status_code integer,
        finished_at timestamptz,
        unique (endpoint_id, message_id)
      )`);
    await q.query("create index webhook_deliveries_pending on webhook_deliveries (endpoint_id, next_attempt_at) where status = 'pending'");
    await q.query('create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, id desc)');
    await q.query(`
      create table webhook_attempts (
        id bigserial primary key,
        delivery_id bigint not null,
        attempt integer not null,
        attempted_at timestamptz not null,
        latency_ms integer not null,
        status_code integer,
        outcome text not null check (outcome in ('succeeded', 'failed')),
        error_code text,
        response_excerpt text,
        unique (delivery_id, attempt)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists webhook_attempts');
    await q.query('drop table if exists webhook_deliveries');
    await q.query('drop table if exists webhook_wallet_alerts');
    await q.query('drop table if exists webhook_stream_facts');
    await q.query('drop table if exists webhook_endpoints');
  }
}
