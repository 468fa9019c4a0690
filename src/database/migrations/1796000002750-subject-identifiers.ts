import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The identifier behind a blind-index token that a hold or a data-subject request carries in the
 * log, sealed under the organization's key-encryption key (src/data-protection/subject-identifiers.ts):
 * a rotation of the index key re-tokenises it into `subject_token_successors` even when the
 * subject has no check left. One row per token; offboarding deletes them.
 */
export class SubjectIdentifiers1796000002750 implements MigrationInterface {
  name = 'SubjectIdentifiers1796000002750';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table if not exists subject_identifiers (
        organization_id text not null,
        token text not null,
        sealed_identifier text not null,
        primary key (organization_id, token)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists subject_identifiers');
  }
}
