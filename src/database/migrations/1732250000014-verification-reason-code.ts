import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The verifications read model keeps the reason code of a failed check (VerificationFailed's and
 * VerificationRejected's `reasonCode`), from which a verification shows its `failureReason`. Rows
 * projected before this column read null: their reads fall back to the verification's own stream.
 */
export class VerificationReasonCode1732250000014 implements MigrationInterface {
  name = 'VerificationReasonCode1732250000014';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table verifications add column reason_code text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table verifications drop column if exists reason_code');
  }
}
