import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { SYSTEM_ACTOR } from '../common/event.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { recordRecoveryChecks, unfinishedTopUps } from './topup.read-model.js';
import { TopUps } from './topups.service.js';

/** Top-ups one pass verifies at most: those verified longest ago (see `unfinishedTopUps`). */
const BATCH = 50;
/** A top-up unpaid after this long is left alone (the provider's webhook can still pay it). */
const GIVE_UP_MS = 48 * 3_600_000;
/** Younger top-ups are the payer's to finish first. */
const GRACE_MS = 10_000;

export interface TopUpRecoveryReport {
  readonly examined: number;
  readonly credited: number;
  readonly failed: number;
}

/**
 * Finishes what a webhook and the payer's return left undone: a provider down during verify, a
 * crash between verifying and crediting, a webhook that never came. Each pass verifies up to 50
 * unfinished top-ups of the last two days, those verified longest ago first, and credits those
 * paid; the wallet credits each top-up's reference once, so every instance may run it side by side.
 */
@Injectable()
export class TopUpRecoverySweep extends PeriodicSweep<TopUpRecoveryReport> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(TopUps) private readonly topUps: TopUps,
    @Inject(CONFIG) config: AppConfig,
    @Inject(Clock) clock: Clock,
  ) {
    super('TopUpRecovery', 'top-up recovery', config.payments.recoveryIntervalMs, clock);
  }

  protected async pass(now: Date): Promise<TopUpRecoveryReport> {
    const references = await unfinishedTopUps(this.pool, new Date(now.getTime() - GIVE_UP_MS), new Date(now.getTime() - GRACE_MS), BATCH);
    let credited = 0;
    let failed = 0;
    for (const reference of references) {
      try {
        const state = await this.topUps.confirm(reference, null, { correlationId: `topup-recovery-${reference}`, actor: SYSTEM_ACTOR }, now);
        if (state.status === 'credited') credited++;
      } catch {
        failed++;
      }
    }
    // Recorded at the pass's time, so the next pass (on any instance) starts with those not looked at.
    if (references.length > 0) await recordRecoveryChecks(this.pool, references, now, new Date(now.getTime() - 2 * GIVE_UP_MS));
    if (failed > 0) this.logger.warn(`${failed} top-ups could not be verified this pass; the next one retries`);
    return { examined: references.length, credited, failed };
  }
}
