import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When the top-up recovery sweep last verified each unfinished top-up, shared by every instance: a
 * pass takes the top-ups verified longest ago (never first), so checkouts nobody pays cannot keep
 * newer top-ups out of every pass. Written by the sweep alone, not a projection's table.
 */
export class TopUpRecoveryChecks1796000002800 implements MigrationInterface {
  name = 'TopUpRecoveryChecks1796000002800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table topup_recovery_checks (
        reference text primary key,
        checked_at timestamptz not null
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists topup_recovery_checks');
  }
}
