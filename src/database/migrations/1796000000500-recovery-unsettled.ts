import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Checks the recovery pass could not settle (a stream damaged by hand, an event it cannot fold):
 * kept aside with the reason and when to try again, so that they neither fill every pass nor go
 * unreported. A row holds references and an error code, never personal data.
 */
export class RecoveryUnsettled1796000000500 implements MigrationInterface {
  name = 'RecoveryUnsettled1796000000500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table verification_recovery_unsettled (
        reference text primary key,
        organization_id text not null,
        environment text not null,
        reason text not null,
        attempts integer not null,
        first_failed_at timestamptz not null,
        last_failed_at timestamptz not null,
        next_attempt_at timestamptz not null
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists verification_recovery_unsettled');
  }
}
