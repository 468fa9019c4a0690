import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The environment a check's data key belongs to, bound into the key's wrapping (its associated
 * data) beside the organization and the reference: a key row moved to another environment does not
 * unwrap. Null on keys wrapped before the binding, which unwrap as they were wrapped.
 */
export class DataKeyEnvironment1796000000100 implements MigrationInterface {
  name = 'DataKeyEnvironment1796000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table verification_keys add column if not exists environment text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table verification_keys drop column if exists environment');
  }
}
