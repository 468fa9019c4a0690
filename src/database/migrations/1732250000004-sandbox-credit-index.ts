import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Lets the sandbox-credit sweep find organizations whose test wallet has no `sandbox-credit`
 * funding without scanning their ledgers: one small partial index, one row per credited wallet.
 */
export class SandboxCreditIndex1732250000004 implements MigrationInterface {
  name = 'SandboxCreditIndex1732250000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create index wallet_ledger_sandbox_credit on wallet_ledger (organization_id) where entry_type = 'funding' and reference = 'sandbox-credit'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop index if exists wallet_ledger_sandbox_credit');
  }
}
