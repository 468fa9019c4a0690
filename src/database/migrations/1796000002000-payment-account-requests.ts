import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A dedicated account the rail assigns later (Paystack's assignment webhooks): `payment_accounts`
 * holds the request first (status `requested`, no account yet), so the webhook finds the
 * organization by the customer code; then `assigned` with the account, or `failed`. One row per
 * organization and environment, with the revision of its stream's event it applied (the rows
 * written before were all at revision 0, the stream's only event then), so a replay changes nothing.
 */
export class PaymentAccountRequests1796000002000 implements MigrationInterface {
  name = 'PaymentAccountRequests1796000002000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table payment_accounts add column status text not null default 'assigned' check (status in ('requested', 'assigned', 'failed'))`);
    await q.query('alter table payment_accounts alter column account_number drop not null, alter column account_name drop not null, alter column bank_name drop not null');
    await q.query('alter table payment_accounts add column revision bigint not null default 0');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`delete from payment_accounts where status <> 'assigned'`);
    await q.query('alter table payment_accounts alter column account_number set not null, alter column account_name set not null, alter column bank_name set not null');
    await q.query('alter table payment_accounts drop column status, drop column revision');
  }
}
