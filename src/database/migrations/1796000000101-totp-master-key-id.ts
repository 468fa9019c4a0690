import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which master key wraps each operator's TOTP secret, as `organization_keys.master_key_id` does for
 * the organizations' keys, so that `keys rotate-master` re-wraps every secret under the master key
 * and knows which it has done. Null on secrets wrapped before the column: the master key in force
 * when the rotation runs.
 */
export class TotpMasterKeyId1796000000101 implements MigrationInterface {
  name = 'TotpMasterKeyId1796000000101';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table console_users add column if not exists totp_master_key_id text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table console_users drop column if exists totp_master_key_id');
  }
}
