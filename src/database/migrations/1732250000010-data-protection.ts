import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The key hierarchy of src/data-protection/ and the blind index of data subjects: in PostgreSQL
 * on both event stores, never in the event log. Back these tables up with the master key: without
 * them no sealed field of any verification can be opened. A key is destroyed by setting its
 * wrapped form to null (erasure of a verification; offboarding of an organization).
 */
export class DataProtection1732250000010 implements MigrationInterface {
  name = 'DataProtection1732250000010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table organization_keys (
        organization_id text primary key,
        master_key_id text not null,
        wrapped_kek text,
        wrapped_index_key text,
        created_at timestamptz not null default now(),
        rewrapped_at timestamptz,
        destroyed_at timestamptz,
        check ((wrapped_kek is null) = (destroyed_at is not null)),
        check ((wrapped_index_key is null) = (destroyed_at is not null))
      )`);
    await q.query(`
      create table verification_keys (
        reference text primary key,
        organization_id text not null,
        wrapped_key text,
        created_at timestamptz not null default now(),
        destroyed_at timestamptz,
        check ((wrapped_key is null) = (destroyed_at is not null))
      )`);
    await q.query('create index verification_keys_organization on verification_keys (organization_id, created_at)');
    await q.query(`
      create table verification_subjects (
        organization_id text not null,
        environment text not null,
        token text not null,
        reference text not null,
        primary key (organization_id, environment, token, reference)
      )`);
    await q.query('create index verification_subjects_reference on verification_subjects (reference)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists verification_subjects');
    await q.query('drop table if exists verification_keys');
    await q.query('drop table if exists organization_keys');
  }
}
