import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Erasure: the verifications read model records when a verification's personal data was erased
 * (its sealed columns are then blanked), organizations carry their retention period (null: the
 * configured default), and the retention sweep finds the keys still alive, oldest first.
 */
export class Erasure1732250000012 implements MigrationInterface {
  name = 'Erasure1732250000012';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table verifications add column personal_data_erased_at timestamptz');
    await q.query('alter table organizations add column retention_days integer');
    await q.query('alter table organizations add column personal_data_destroyed_at timestamptz');
    await q.query('create index verification_keys_alive on verification_keys (created_at) where wrapped_key is not null');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop index if exists verification_keys_alive');
    await q.query('alter table organizations drop column if exists personal_data_destroyed_at');
    await q.query('alter table organizations drop column if exists retention_days');
    await q.query('alter table verifications drop column if exists personal_data_erased_at');
  }
}
