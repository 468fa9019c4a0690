import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import { isEnvironment } from '../common/environment.js';
import { SYSTEM_ACTOR, type CommandContext } from '../common/event.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { StreamDamagedError } from '../event-store/event-store.port.js';
import { WalletLedger, type WalletId } from '../wallets/wallet-ledger.port.js';
import type { VerificationState } from './verification.decider.js';
import { OutcomeNotKnown, VerificationStreams } from './verification.stream.js';

/** Verifications settled per pass: a bound on one pass's work; the next pass continues. */
const BATCH = 100;

export const RECOVERED_TIMEOUT = 'recovered_timeout';
export const RECOVERED_MESSAGE = 'The check did not finish in time and was abandoned; the wallet was not charged';

export interface RecoveryReport {
  readonly examined: number;
  /** Verifications this pass failed itself (they were still open). */
  readonly failed: number;
  readonly captured: number;
  readonly released: number;
}

interface Candidate {
  reference: string;
  organization_id: string;
  environment: string;
}

/**
 * Settles verifications left open past the deadline (a process killed between steps): those that
 * finished get their reservation captured or released; those still open are failed with expected
 * revision 0, so if the request finishes at the same moment exactly one of the two wins, and the
 * loser settles the money according to the winner. Capture and release are idempotent per
 * reference, so running this on every instance at once is safe.
 */
@Injectable()
export class VerificationRecovery extends PeriodicSweep<RecoveryReport> {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(VerificationStreams) private readonly streams: VerificationStreams,
    @Inject(WalletLedger) private readonly ledger: WalletLedger,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(Clock) private readonly clock: Clock,
  ) {
    super('VerificationRecovery', 'recovery', config.verifications.recoveryIntervalMs, clock);
  }

  protected async pass(now: Date): Promise<RecoveryReport> {
    // Staleness by the database's clock, the one every instance shares: an instance whose own clock
    // runs ahead must not fail checks still waiting on their provider. A `now` given ahead of this
    // instance's clock (a test, an operator) moves the database's time by as much.
    const aheadMs = now.getTime() - this.clock.now().getTime();
    const { rows } = await this.pool.query<Candidate>(
      `with cutoff as (select now() + $1 * interval '1 millisecond' as at)
       (select reference, organization_id, environment from wallet_reservations, cutoff where reserved_at < cutoff.at order by reserved_at limit $2)
       union
       (select reference, organization_id, environment from verifications, cutoff where status = 'pending' and created_at < cutoff.at order by created_at limit $2)`,
      [aheadMs - this.config.verifications.recoveryDeadlineMs, BATCH],
    );
    const report = { examined: 0, failed: 0, captured: 0, released: 0 };
    for (const row of rows) {
      if (!isEnvironment(row.environment)) continue;
      report.examined += 1;
      let outcome: Awaited<ReturnType<VerificationRecovery['settle']>>;
      try {
        outcome = await this.settle(row.reference, { organizationId: row.organization_id, environment: row.environment }, now);
      } catch (error) {
        // A stream an operator deleted or truncated stays unsettled until it is restored; it must
        // not hold up the others (the error names the stream, never personal data).
        if (!(error instanceof StreamDamagedError)) throw error;
        this.logger.error(`Recovery cannot settle ${row.reference}: ${error.message}`);
        continue;
      }
      if (outcome === 'failed') report.failed += 1;
      if (outcome === 'failed' || outcome === 'released') report.released += 1;
      if (outcome === 'captured') report.captured += 1;
    }
    if (report.examined > 0) this.logger.log(`Recovery: ${report.failed} failed, ${report.captured} captured, ${report.released} released`);
    return report;
  }

  /**
   * Settles one verification; exposed for tests and operators. Money moves only on a finished
   * state: found or not_found is captured, failed released, and a reservation whose verification
   * was never requested released. A verification still pending here (its terminal event written
   * by the request but not yet readable, or its outcome not established) is left to the next pass.
   */
  async settle(reference: string, wallet: WalletId, now: Date = this.clock.now()): Promise<'failed' | 'captured' | 'released' | 'skipped'> {
    const context: CommandContext = { correlationId: `recovery-${reference}`, actor: SYSTEM_ACTOR };
    let state: VerificationState = await this.streams.load(reference);
    let failedHere = false;
    if (state.status === 'pending') {
      try {
        const finished = await this.streams.finish(reference, state, { type: 'FailVerification', reasonCode: RECOVERED_TIMEOUT, errorMessage: RECOVERED_MESSAGE, at: now }, context);
        state = finished.state;
        failedHere = finished.won;
      } catch (error) {
        if (error instanceof OutcomeNotKnown) return 'skipped';
        throw error;
      }
    }
    switch (state.status) {
      case 'found':
      case 'not_found':
        await this.ledger.capture(wallet, reference, context);
        return 'captured';
      case 'failed':
        await this.ledger.release(wallet, reference, state.reasonCode ?? RECOVERED_TIMEOUT, context);
        return failedHere ? 'failed' : 'released';
      case 'none':
        // A reservation whose verification stream does not exist: nothing may stay held.
        await this.ledger.release(wallet, reference, 'orphaned_reservation', context);
        return 'released';
      default:
        return 'skipped';
    }
  }
}
