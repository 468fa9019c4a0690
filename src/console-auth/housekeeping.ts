import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import { PG_POOL } from '../database/pool.js';

const INTERVAL_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Ended sessions and spent one-time tokens are kept this long (a user's sessions list, an operator's questions), then deleted. */
const KEEP_ENDED_MS = 7 * DAY_MS;
/** Sent mail (its subject and recipient; the text is gone outside the embedded default) is kept this long. */
const KEEP_SENT_MAIL_MS = 30 * DAY_MS;
/** Rows deleted per table per pass: a bound on one statement's work. */
const BATCH = 10_000;

/** Hourly: deletes ended sessions, spent or expired one-time tokens and old sent mail, so the console's tables stay bounded. */
@Injectable()
export class ConsoleHousekeeping extends PeriodicSweep<number> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(Clock) clock: Clock,
  ) {
    super('ConsoleHousekeeping', 'console housekeeping', INTERVAL_MS, clock);
  }

  protected async pass(now: Date): Promise<number> {
    const ended = new Date(now.getTime() - KEEP_ENDED_MS);
    const statements: [string, unknown[]][] = [
      ['delete from console_sessions where id in (select id from console_sessions where expires_at < $1 or revoked_at < $1 limit $2)', [ended, BATCH]],
      ['delete from console_tokens where token_hash in (select token_hash from console_tokens where expires_at < $1 or used_at < $1 limit $2)', [ended, BATCH]],
      ['delete from console_outbox where id in (select id from console_outbox where sent_at < $1 limit $2)', [new Date(now.getTime() - KEEP_SENT_MAIL_MS), BATCH]],
    ];
    let deleted = 0;
    for (const [sql, params] of statements) deleted += (await this.pool.query(sql, params)).rowCount ?? 0;
    return deleted;
  }
}
