import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * History checkpoints (src/audit/history-checkpoints.ts): the finance audit replay's running state
 * every 100 events of a wallet stream, so that a page of `GET …/history` replays from the nearest
 * one. A cache, never a fact: each row is used only when its MAC and the log's hash chain at its
 * revision both check out, and the table can be emptied at any time. `entries` and
 * `latest_occurred_at` copy the state's own figures (both grow with the revision), indexed to find
 * the checkpoint before a page or an as-of moment. In PostgreSQL on both event stores, beside the read models.
 */
export class WalletHistoryCheckpoints1795647443991 implements MigrationInterface {
  name = 'WalletHistoryCheckpoints1795647443991';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table wallet_history_checkpoints (
        stream_id text not null,
        revision bigint not null check (revision >= 0),
        entries bigint not null check (entries >= 0),
        latest_occurred_at timestamptz not null,
        state jsonb not null,
        mac char(64) not null,
        saved_at timestamptz not null default now(),
        primary key (stream_id, revision)
      )`);
    await q.query('create index wallet_history_checkpoints_entries on wallet_history_checkpoints (stream_id, entries, revision)');
    await q.query('create index wallet_history_checkpoints_occurred on wallet_history_checkpoints (stream_id, latest_occurred_at, revision)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists wallet_history_checkpoints');
  }
}
