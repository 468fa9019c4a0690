import { Inject, Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import type { Actor, CommandContext } from '../common/event.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { prepared } from '../database/prepared.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { HOLD_ON_CHECK } from './data-subject.read-model.js';
import { PersonalDataErasure } from './erasure.js';

/** The actor of every erasure the sweep makes (`system:retention`). */
export const RETENTION_ACTOR: Actor = { type: 'system', id: 'retention' };
/** Verifications one instance claims at a time; the other instances claim the next ones meanwhile. */
const BATCH = 100;
/**
 * Erasures of a batch under way at once: each is a few round trips, mostly waiting on commits (8
 * swept slower than a closed loop of checks is made; bench:projections, phase retention).
 */
const ERASURES_IN_FLIGHT = 32;
/**
 * How long a claim keeps other instances off a check. Long enough for a batch (about a second), and
 * a check that failed to be erased stays claimed this long, so that it is retried later rather than
 * at once by every instance.
 */
const CLAIM_SECONDS = 600;
/** Claims older than this are of checks erased meanwhile by someone else (or gone): swept away. */
const STALE_CLAIM_SECONDS = 86_400;

export interface RetentionReport {
  readonly erased: number;
}

interface Due {
  reference: string;
  organization_id: string;
  environment: string;
}

/**
 * The finished checks past their organization's retention period, counted from the check's own
 * time, whose personal data is still there (the read model not yet marked, and no destroyed data
 * key, which an erasure writes before the projection catches up), claimed by this instance. The
 * first bound (the shortest retention of any organization) walks the partial index
 * verifications_retention; claims taken by another instance and not yet expired are skipped, and
 * a concurrent claim of the same check waits for the other's commit and then does not take it.
 */
const CLAIM_DUE = `with due as (
    select v.reference from verifications v
    left join organizations o on o.id = v.organization_id
    left join verification_keys k on k.reference = v.reference
    where v.personal_data_erased_at is null and v.status <> 'pending'
      and v.created_at < $1::timestamptz - make_interval(days => (select least($2::int, min(retention_days)) from organizations))
      and v.created_at < $1::timestamptz - make_interval(days => coalesce(o.retention_days, $2::int))
      and k.destroyed_at is null
      and not exists (${HOLD_ON_CHECK('v.reference', 'v.organization_id', 'v.environment', '$1::timestamptz')})
      and not exists (select 1 from retention_claims c where c.reference = v.reference and c.claimed_until > now())
    order by v.created_at limit $3),
  claimed as (
    insert into retention_claims (reference, claimed_until) select reference, now() + make_interval(secs => $4) from due
    on conflict (reference) do update set claimed_until = excluded.claimed_until where retention_claims.claimed_until <= now()
    returning reference)
  select v.reference, v.organization_id, v.environment from claimed c join verifications v on v.reference = c.reference`;

/**
 * Erases the personal data of finished verifications older than their organization's retention
 * period (`retentionDays`, else PERSONAL_DATA_RETENTION_DAYS), counted from each check's own time
 * (checks under a hold in force at the sweep's time are left alone),
 * through the same erasure as the API (an event with actor system:retention, the key destroyed,
 * the portrait deleted). A check with no key row (recorded before personal data was sealed) is
 * swept like any other. Every instance runs it; each claims its own batches, so that together
 * they erase as many checks as they can run, and a pass goes on until nothing is due or it has
 * run for the sweep's interval (the next pass continues).
 */
@Injectable()
export class RetentionSweep extends PeriodicSweep<RetentionReport> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(PersonalDataErasure) private readonly erasure: PersonalDataErasure,
    @Inject(DataKeys) private readonly keys: DataKeys,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(Clock) clock: Clock,
  ) {
    super('RetentionSweep', 'retention', config.verifications.retentionSweepIntervalMs, clock);
  }

  protected async pass(now: Date): Promise<RetentionReport> {
    const startedMs = performance.now();
    await this.pool.query(prepared('delete from retention_claims where claimed_until < now() - make_interval(secs => $1)', [STALE_CLAIM_SECONDS]));
    let erased = 0;
    while (performance.now() - startedMs < this.config.verifications.retentionSweepIntervalMs) {
      const due = await this.claimDue(now);
      if (due.length === 0) break;
      const done = await this.eraseAll(due);
      erased += done.length;
      // A check that could not be erased keeps its claim: it is retried once the claim expires.
      if (done.length > 0) await this.pool.query(prepared('delete from retention_claims where reference = any($1::text[])', [done]));
    }
    if (erased > 0) this.logger.log(`Retention: the personal data of ${erased} verification(s) erased`);
    return { erased };
  }

  /**
   * Erases `due`, ERASURES_IN_FLIGHT at a time, then destroys the keys of those erased in one
   * transaction (a commit per batch rather than per check); answers the references erased. A
   * crash between the two leaves the batch's erasures recorded (they read as erased) with their
   * keys whole, as a crash between an erasure's event and its key's destruction always could; an
   * erasure of one by key or subject destroys it.
   */
  private async eraseAll(due: readonly Due[]): Promise<string[]> {
    const done: string[] = [];
    const recorded: { organizationId: string; reference: string; at: Date }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        const row = due[next++];
        const context: CommandContext = { correlationId: `retention-${row.reference}`, actor: RETENTION_ACTOR };
        try {
          const { erasedAt } = await this.erasure.recordErasure(row.reference, { organizationId: row.organization_id, environment: row.environment }, context);
          recorded.push({ organizationId: row.organization_id, reference: row.reference, at: erasedAt });
        } catch (error) {
          // One verification that cannot be erased now (its stream unreadable) must not stop the others.
          this.logger.warn(`Retention: ${row.reference} could not be erased this pass (${(error as Error).name}); a later pass retries`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(ERASURES_IN_FLIGHT, due.length) }, worker));
    await this.keys.destroyMany(recorded);
    done.push(...recorded.map((erasure) => erasure.reference));
    return done;
  }

  private async claimDue(now: Date): Promise<Due[]> {
    const { rows } = await this.pool.query<Due>(prepared(CLAIM_DUE, [now, this.config.verifications.retentionDays, BATCH, CLAIM_SECONDS]));
    return rows;
  }
}
