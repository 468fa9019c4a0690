import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import type { Actor, CommandContext } from '../common/event.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { PersonalDataErasure } from './erasure.js';

/** The actor of every erasure the sweep makes (`system:retention`). */
export const RETENTION_ACTOR: Actor = { type: 'system', id: 'retention' };
/** Verifications looked at per query, and at most per pass (the next pass continues). */
const BATCH = 100;
const MAX_PER_PASS = 5_000;

export interface RetentionReport {
  readonly erased: number;
}

interface Due {
  reference: string;
  organization_id: string;
  environment: string;
}

/**
 * Erases the personal data of finished verifications older than their organization's retention
 * period (`retentionDays`, else PERSONAL_DATA_RETENTION_DAYS), through the same erasure as the
 * API (an event with actor system:retention, the key destroyed, the portrait deleted). Only keys
 * still alive are looked at (a partial index), from the oldest; every instance may run it at once:
 * an erasure is idempotent.
 */
@Injectable()
export class RetentionSweep extends PeriodicSweep<RetentionReport> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(PersonalDataErasure) private readonly erasure: PersonalDataErasure,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(Clock) clock: Clock,
  ) {
    super('RetentionSweep', 'retention', config.verifications.retentionSweepIntervalMs, clock);
  }

  protected async pass(now: Date): Promise<RetentionReport> {
    let erased = 0;
    let skip: string[] = [];
    while (erased + skip.length < MAX_PER_PASS) {
      const due = await this.due(now, skip);
      for (const row of due) {
        const context: CommandContext = { correlationId: `retention-${row.reference}`, actor: RETENTION_ACTOR };
        try {
          await this.erasure.erase(row.reference, { organizationId: row.organization_id, environment: row.environment }, context);
          erased += 1;
        } catch (error) {
          // One verification that cannot be erased now (its stream unreadable) must not stop the others.
          skip = [...skip, row.reference];
          this.logger.warn(`Retention: ${row.reference} could not be erased this pass (${(error as Error).name}); the next pass retries`);
        }
      }
      if (due.length < BATCH) break;
    }
    if (erased > 0) this.logger.log(`Retention: the personal data of ${erased} verification(s) erased`);
    return { erased };
  }

  private async due(now: Date, skip: readonly string[]): Promise<Due[]> {
    const { rows } = await this.pool.query<Due>(
      `select v.reference, v.organization_id, v.environment
       from verification_keys k
       join verifications v on v.reference = k.reference
       left join organizations o on o.id = k.organization_id
       where k.wrapped_key is not null
         and k.created_at < $1::timestamptz - make_interval(days => (select least($2::int, min(retention_days)) from organizations))
         and v.status <> 'pending' and v.personal_data_erased_at is null
         and v.created_at < $1::timestamptz - make_interval(days => coalesce(o.retention_days, $2::int))
         and not (v.reference = any($3::text[]))
       order by k.created_at limit $4`,
      [now, this.config.verifications.retentionDays, skip, BATCH],
    );
    return rows;
  }
}
