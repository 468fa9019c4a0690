import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The wallet stream revision each `wallets` row has applied. Amounts are running sums, so the
 * projection needs it to apply every event exactly once (a replay skips what the row already
 * holds) and to stop loudly on a revision gap instead of showing a wrong balance.
 */
export class WalletRevision1732250000002 implements MigrationInterface {
  name = 'WalletRevision1732250000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table wallets add column revision bigint not null default -1');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table wallets drop column if exists revision');
  }
}
