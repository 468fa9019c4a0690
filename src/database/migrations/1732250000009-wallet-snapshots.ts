import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Snapshots of the wallet ledger's folded streams (src/wallets/wallet-snapshots.ts): the write
 * side's cache, so that its first command for a wallet after a start folds the events since the
 * newest snapshot instead of the wallet's whole history. Not a fact and not a read model: nothing
 * else reads it, the finance audit replays the log itself, and the table can be emptied at any
 * time (the next command folds the whole stream again and writes a new one). In PostgreSQL on both
 * event stores, beside the read models.
 */
export class WalletSnapshots1732250000009 implements MigrationInterface {
  name = 'WalletSnapshots1732250000009';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table wallet_snapshots (
        stream_id text primary key,
        revision bigint not null check (revision >= 0),
        link char(64) not null,
        state jsonb not null,
        saved_at timestamptz not null default now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists wallet_snapshots');
  }
}
