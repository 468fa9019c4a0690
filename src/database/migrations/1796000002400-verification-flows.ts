import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Verification flows and sessions: the `verification_flows` projection's read models of the
 * `verificationFlow-*` and `verificationSession-*` streams (with the flows' reusable links). A flow version's definition is kept as
 * its event carries it, sealed under the organization's key; a session's customer id and metadata
 * sealed under the session's data key.
 */
export class VerificationFlows1796000002400 implements MigrationInterface {
  name = 'VerificationFlows1796000002400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table verification_flows (
        id text primary key,
        organization_id text not null,
        environment text not null check (environment in ('test', 'live')),
        version integer not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    await q.query('create index verification_flows_by_owner on verification_flows (organization_id, environment, created_at desc, id desc)');
    await q.query(`
      create table verification_flow_versions (
        flow_id text not null,
        version integer not null,
        definition text not null,
        created_at timestamptz not null,
        primary key (flow_id, version)
      )`);
    await q.query(`
      create table verification_flow_links (
        id text primary key,
        flow_id text not null,
        organization_id text not null,
        environment text not null check (environment in ('test', 'live')),
        key_id text not null,
        created_at timestamptz not null
      )`);
    await q.query(`
      create table verification_sessions (
        id text primary key,
        organization_id text not null,
        environment text not null check (environment in ('test', 'live')),
        flow_id text not null,
        flow_version integer not null,
        status text not null,
        customer jsonb not null,
        identity_reference text,
        identity_outcome text,
        liveness text,
        face_match_reference text,
        face_match_confidence double precision,
        reasons jsonb not null default '[]',
        expires_at timestamptz not null,
        revision bigint not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        submitted_at timestamptz,
        decided_at timestamptz,
        personal_data_erased_at timestamptz
      )`);
    await q.query('create index verification_sessions_by_owner on verification_sessions (organization_id, environment, created_at desc, id desc)');
    await q.query(`create index verification_sessions_open on verification_sessions (expires_at) where status in ('created', 'in_progress')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists verification_sessions');
    await q.query('drop table if exists verification_flow_links');
    await q.query('drop table if exists verification_flow_versions');
    await q.query('drop table if exists verification_flows');
  }
}
