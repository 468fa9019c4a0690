import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every identity check a verification session ran (up to three), not only its latest: a data
 * subject's erasure reaches a session through any of them. Rows written before keep their latest
 * check until the projection is rebuilt.
 */
export class SessionIdentityReferences1796000002760 implements MigrationInterface {
  name = 'SessionIdentityReferences1796000002760';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table verification_sessions add column identity_references text[] not null default '{}'`);
    await q.query(`update verification_sessions set identity_references = array[identity_reference] where identity_reference is not null`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table verification_sessions drop column identity_references');
  }
}
