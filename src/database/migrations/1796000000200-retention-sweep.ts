import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The retention sweep walks checks by their own time: a partial index of the finished checks whose
 * personal data is still there, by `created_at`. It replaces `verification_keys_alive`, which
 * walked key rows by the key row's time (a check keyed later by a maintenance command counted from
 * then, and a check with no key row was never found). `retention_claims` shares the due checks
 * between instances: each claims a batch for a while, the others take the next.
 */
export class RetentionSweep1796000000200 implements MigrationInterface {
  name = 'RetentionSweep1796000000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create index if not exists verifications_retention on verifications (created_at) where personal_data_erased_at is null and status <> 'pending'`);
    await q.query('create table if not exists retention_claims (reference text primary key, claimed_until timestamptz not null)');
    await q.query('drop index if exists verification_keys_alive');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('create index if not exists verification_keys_alive on verification_keys (created_at) where wrapped_key is not null');
    await q.query('drop table if exists retention_claims');
    await q.query('drop index if exists verifications_retention');
  }
}
