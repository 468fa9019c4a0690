import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Versions of an organization's key-encryption key. `organization_keys` keeps the current one
 * (`kek_version`, 1 for keys made before versions) and how many keys it has wrapped so far
 * (`kek_wraps`, counted in batches: AES-GCM with random nonces allows 2^32 per key);
 * `organization_kek_versions` keeps the older ones, wrapped under the master key, to unwrap what
 * they wrapped. A value wrapped under version n > 1 says so (`v<n>:`); one without is version 1.
 */
export class OrganizationKeyVersions1796000001300 implements MigrationInterface {
  name = 'OrganizationKeyVersions1796000001300';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table organization_keys add column if not exists kek_version integer not null default 1');
    await q.query('alter table organization_keys add column if not exists kek_wraps bigint not null default 0');
    await q.query(`
      create table if not exists organization_kek_versions (
        organization_id text not null,
        version integer not null,
        master_key_id text not null,
        wrapped_kek text not null,
        wraps bigint not null,
        retired_at timestamptz not null default now(),
        primary key (organization_id, version)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists organization_kek_versions');
    await q.query('alter table organization_keys drop column if exists kek_wraps');
    await q.query('alter table organization_keys drop column if exists kek_version');
  }
}
