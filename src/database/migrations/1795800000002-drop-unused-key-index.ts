import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `verification_keys (organization_id, created_at)` served no query: offboarding destroys the
 * organization's key rather than its data keys one by one, and the retention sweep walks
 * `verification_keys_alive`. Every check paid for it with one more index entry in its commit.
 */
export class DropUnusedKeyIndex1795800000002 implements MigrationInterface {
  name = 'DropUnusedKeyIndex1795800000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query('drop index if exists verification_keys_organization');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('create index if not exists verification_keys_organization on verification_keys (organization_id, created_at)');
  }
}
