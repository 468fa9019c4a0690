import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Versions of an organization's blind-index key. `organization_keys` keeps the current one
 * (`index_version`, 1 for keys made before versions) and, while a rotation re-tokenises the
 * organization's `verification_subjects`, the one being retired (`retiring_index_key`, wrapped
 * under the row's master key, and how far the pass got). A token under version n > 1 says so
 * (`v<n>:`); one without is version 1. `subject_token_successors` links the tokens that holds
 * and the record of requests carry in the log (which is never rewritten) to their subject's
 * current token: HMACs both, no identifier.
 */
export class IndexKeyVersions1796000002100 implements MigrationInterface {
  name = 'IndexKeyVersions1796000002100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table organization_keys add column if not exists index_version integer not null default 1');
    await q.query('alter table organization_keys add column if not exists retiring_index_key text');
    await q.query('alter table organization_keys add column if not exists retiring_index_version integer');
    await q.query('alter table organization_keys add column if not exists index_rotated_at timestamptz');
    await q.query('alter table organization_keys add column if not exists retokenised_through text');
    await q.query(`
      create table if not exists subject_token_successors (
        organization_id text not null,
        old_token text not null,
        new_token text not null,
        primary key (organization_id, old_token)
      )`);
    await q.query('create index if not exists subject_token_successors_new on subject_token_successors (organization_id, new_token)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists subject_token_successors');
    for (const column of ['retokenised_through', 'index_rotated_at', 'retiring_index_version', 'retiring_index_key', 'index_version']) {
      await q.query(`alter table organization_keys drop column if exists ${column}`);
    }
  }
}
