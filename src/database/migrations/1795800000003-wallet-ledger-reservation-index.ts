import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The wallet-ledger projection gives a debit or a release the scope of its reservation. When the
 * reservation was applied in an earlier batch (under a steady load, nearly always: a check's
 * capture comes some milliseconds after its reservation), it looks the reservation line up by
 * wallet and reference. With only the primary key (organization_id, environment, event_position),
 * PostgreSQL read every earlier line of the wallet to find it (a bitmap scan, then a filter on the
 * reference): 60 to 140 ms a batch for a wallet of a few hundred thousand lines, growing with the
 * wallet, about a core of PostgreSQL under bench:api's paced load. This partial index answers it
 * in one descent, and costs an index entry for reservation lines only.
 */
export class WalletLedgerReservationIndex1795800000003 implements MigrationInterface {
  name = 'WalletLedgerReservationIndex1795800000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `create index if not exists wallet_ledger_reservation on wallet_ledger (organization_id, environment, reference, event_position) where entry_type = 'reservation'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop index if exists wallet_ledger_reservation');
  }
}
