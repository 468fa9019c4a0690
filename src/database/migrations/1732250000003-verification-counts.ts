import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Running counts of `verifications` rows per organization, environment, scope and status, kept by
 * the verifications projection, so the list's `total` is a sum of at most 40 rows instead of a
 * count over every matching row. Seeded here from the rows already projected.
 */
export class VerificationCounts1732250000003 implements MigrationInterface {
  name = 'VerificationCounts1732250000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      create table verification_counts (
        organization_id text not null,
        environment text not null,
        scope text not null,
        status text not null check (status in ('pending', 'found', 'not_found', 'failed')),
        count bigint not null,
        primary key (organization_id, environment, scope, status)
      )`);
    await q.query(`
      insert into verification_counts (organization_id, environment, scope, status, count)
      select organization_id, environment, scope, status, count(*) from verifications group by 1, 2, 3, 4`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists verification_counts');
  }
}
