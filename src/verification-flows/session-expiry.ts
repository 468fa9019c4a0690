import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import type { FlowOwner } from './verification-flow.decider.js';
import { overdueSessions, sessionsPastRetention, undecidedSessions } from './verification-flows.read-model.js';
import { VerificationSessions } from './verification-sessions.service.js';

/** Sessions expired (and decided) by one pass at most; a larger backlog is handled over the next passes. */
export const MAX_EXPIRED_PER_PASS = 500;
const INTERVAL_MS = 60_000;
/** A submission's decision takes two checks at most, each bounded by the provider's timeout: one still undecided after this was cut short. */
export const UNDECIDED_AFTER_MS = 10 * 60_000;

/**
 * Expires open sessions past their time, so that `verification_session.expired` is sent even for a
 * session nobody reads again, and decides (for review) sessions whose decision was cut short. Every instance sweeps; the expiry is an append with an expected
 * revision and expiring twice writes nothing, so instances sweeping together expire each once.
 * Ended sessions past their organization's retention period are erased (selfies, document images,
 * data key), as the verifications' retention sweep erases checks.
 */
@Injectable()
export class SessionExpirySweep extends PeriodicSweep<number> {
  constructor(
    @Inject(VerificationSessions) private readonly sessions: VerificationSessions,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(Clock) clock: Clock,
  ) {
    super('SessionExpiry', 'session expiry', INTERVAL_MS, clock);
  }

  protected async pass(now: Date): Promise<number> {
    let expired = 0;
    for (const sessionId of await overdueSessions(this.pool, now, MAX_EXPIRED_PER_PASS)) {
      if (await this.sessions.expire(sessionId, now)) expired += 1;
    }
    for (const sessionId of await undecidedSessions(this.pool, new Date(now.getTime() - UNDECIDED_AFTER_MS), MAX_EXPIRED_PER_PASS)) {
      if (await this.sessions.decideUndecided(sessionId)) expired += 1;
    }
    for (const due of await sessionsPastRetention(this.pool, now, this.config.verifications.retentionDays, MAX_EXPIRED_PER_PASS)) {
      const owner = { organizationId: due.organization_id, environment: due.environment as FlowOwner['environment'] };
      if (await this.sessions.eraseForRetention(due.id, owner, now)) expired += 1;
    }
    return expired;
  }
}
