import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The last TOTP time step each console user signed in (or confirmed the set-up) with: a code is
 * refused unless its step is later, so a code seen over a shoulder or in a proxy's log cannot be
 * used a second time within its 30 s.
 */
export class ConsoleTotpLastStep1796000000300 implements MigrationInterface {
  name = 'ConsoleTotpLastStep1796000000300';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table console_users add column totp_last_step bigint');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table console_users drop column if exists totp_last_step');
  }
}
