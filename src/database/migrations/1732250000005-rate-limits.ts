import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operators' per-organization rate limit on the `organizations` read model (null: the
 * configured default), and the table of per-key request counters that every instance shares when
 * RATE_LIMIT_STORE=postgres. The counters table has the shape rate-limiter-flexible's
 * RateLimiterPostgres expects; it is created here so no instance creates it at request time.
 */
export class RateLimits1732250000005 implements MigrationInterface {
  name = 'RateLimits1732250000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table organizations add column rate_limit_per_minute integer');
    // Unlogged: counters of the current minute are not worth a WAL write each, and a crash that empties them only resets one window.
    await q.query(`
      create unlogged table rate_limits (
        key varchar(255) primary key,
        points integer not null default 0,
        expire bigint
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('drop table if exists rate_limits');
    await q.query('alter table organizations drop column if exists rate_limit_per_minute');
  }
}
