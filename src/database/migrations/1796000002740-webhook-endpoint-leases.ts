import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which sender instance may send to an endpoint, and until when: one holder per endpoint at a time,
 * so the bound on an endpoint's requests in flight holds across instances. A row is taken, renewed
 * and released by the senders alone; one past `held_until` may be taken by any instance.
 */
export class WebhookEndpointLeases1796000002740 implements MigrationInterface {
  name = 'WebhookEndpointLeases1796000002740';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table webhook_endpoint_leases (
        endpoint_id text primary key,
        holder text not null,
        held_until timestamptz not null
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists webhook_endpoint_leases');
  }
}
