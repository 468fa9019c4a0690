import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import client from 'prom-client';
import { Clock } from '../common/clock.js';
import { PeriodicSweep } from '../common/periodic-pass.js';
import { isEnvironment } from '../common/environment.js';
import { SYSTEM_ACTOR, type CommandContext } from '../common/event.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { isConnectionError } from '../database/connection-errors.js';
import { PG_POOL } from '../database/pool.js';
import { EventStoreUnavailableError, StreamDamagedError } from '../event-store/event-store.port.js';
import { WalletLedger, type WalletId } from '../wallets/wallet-ledger.port.js';
import type { VerificationState } from './verification.decider.js';
import { OutcomeNotKnown, VerificationStreams } from './verification.stream.js';

/** Verifications settled per pass: a bound on one pass's work; the next pass continues. */
const BATCH = 100;
/** The longest wait before a check recovery could not settle is tried again (it doubles from the pass interval up to this). */
const UNSETTLED_RETRY_MAX_MS = 60 * 60_000;

function unsettledGauge(): client.Gauge {
  const name = 'ivl_recovery_unsettled_checks';
  const existing = client.register.getSingleMetric(name);
  if (existing !== undefined) return existing as client.Gauge;
  return new client.Gauge({
    name,
    help: 'Checks the recovery pass cannot settle (a damaged stream, an event it cannot fold), as counted by the last pass; GET /admin/v1/recovery/unsettled lists them',
  });
}
const unsettledChecks = unsettledGauge();

export const RECOVERED_TIMEOUT = 'recovered_timeout';
export const RECOVERED_MESSAGE = 'The check did not finish in time and was abandoned; the wallet was not charged';

export interface RecoveryReport {
  readonly examined: number;
  /** Verifications this pass failed itself (they were still open). */
  readonly failed: number;
  readonly captured: number;
  readonly released: number;
  /** Checks set aside because they cannot be settled, in total after this pass (every instance's). */
  readonly unsettled: number;
}

interface Candidate {
  reference: string;
  organization_id: string;
  environment: string;
}

/** Why a check cannot be settled, for operators: an error code and the damaged stream's id, never a message that could carry personal data. */
function unsettledReason(error: unknown): string {
  if (error instanceof StreamDamagedError) return `${error.code}: ${error.streamId} is ${error.damage}`;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[a-z0-9_]{1,64}$/i.test(code)) return code;
  return error instanceof Error ? error.name : 'unknown';
}

/** A store that does not answer ends the pass (the next one retries everything); any other failure is the check's own. */
function isUnavailable(error: unknown): boolean {
  return error instanceof EventStoreUnavailableError || isConnectionError(error);
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
    // Checks set aside as unsettleable wait for their next attempt: otherwise the oldest of them
    // would fill every batch, and newer checks would never be settled.
    const { rows } = await this.pool.query<Candidate>(
      `with cutoff as (select now() + $1 * interval '1 millisecond' as at)
       (select reference, organization_id, environment from wallet_reservations r, cutoff
         where reserved_at < cutoff.at and not exists (select 1 from verification_recovery_unsettled u where u.reference = r.reference and u.next_attempt_at > $3)
         order by reserved_at limit $2)
       union
       (select reference, organization_id, environment from verifications v, cutoff
         where status = 'pending' and created_at < cutoff.at and not exists (select 1 from verification_recovery_unsettled u where u.reference = v.reference and u.next_attempt_at > $3)
         order by created_at limit $2)`,
      [aheadMs - this.config.verifications.recoveryDeadlineMs, BATCH, now],
    );
    const report = { examined: 0, failed: 0, captured: 0, released: 0, unsettled: 0 };
    const settled: string[] = [];
    for (const row of rows) {
      if (!isEnvironment(row.environment)) continue;
      report.examined += 1;
      let outcome: Awaited<ReturnType<VerificationRecovery['settle']>>;
      try {
        outcome = await this.settle(row.reference, { organizationId: row.organization_id, environment: row.environment }, now);
      } catch (error) {
        if (isUnavailable(error)) throw error;
        // A stream an operator deleted or truncated, or one holding an event the service cannot
        // fold, stays unsettled until it is restored; it must not hold up the others.
        const reason = unsettledReason(error);
        await this.setAside(row, reason, now);
        this.logger.error(`Recovery cannot settle ${row.reference} (${reason}); set aside, tried again later`);
        continue;
      }
      if (outcome !== 'skipped') settled.push(row.reference);
      if (outcome === 'failed') report.failed += 1;
      if (outcome === 'failed' || outcome === 'released') report.released += 1;
      if (outcome === 'captured') report.captured += 1;
    }
    report.unsettled = await this.forgetSettled(settled);
    unsettledChecks.set(report.unsettled);
    if (report.examined > 0) this.logger.log(`Recovery: ${report.failed} failed, ${report.captured} captured, ${report.released} released, ${report.unsettled} cannot be settled`);
    return report;
  }

  /** Records a check this pass could not settle, with the next attempt after a doubling wait. */
  private async setAside(row: Candidate, reason: string, now: Date): Promise<void> {
    const intervalMs = this.config.verifications.recoveryIntervalMs;
    await this.pool.query(
      `insert into verification_recovery_unsettled as u (reference, organization_id, environment, reason, attempts, first_failed_at, last_failed_at, next_attempt_at)
       values ($1, $2, $3, $4, 1, $5, $5, $5::timestamptz + least($6::bigint, $7::bigint) * interval '1 millisecond')
       on conflict (reference) do update set
         reason = excluded.reason,
         attempts = u.attempts + 1,
         last_failed_at = excluded.last_failed_at,
         next_attempt_at = excluded.last_failed_at + least($6::bigint * power(2, least(u.attempts, 20))::bigint, $7::bigint) * interval '1 millisecond'`,
      [row.reference, row.organization_id, row.environment, reason, now, intervalMs, UNSETTLED_RETRY_MAX_MS],
    );
  }

  /**
   * Drops the checks set aside that are settled now (by this pass, once restored, or by their
   * request) and answers how many remain.
   */
  private async forgetSettled(settledNow: readonly string[]): Promise<number> {
    const { rows } = await this.pool.query<{ remaining: string }>(
      `with gone as (
         delete from verification_recovery_unsettled u
          where u.reference = any($1::text[])
             or (not exists (select 1 from wallet_reservations r where r.reference = u.reference)
                 and not exists (select 1 from verifications v where v.reference = u.reference and v.status = 'pending'))
         returning reference)
       select (select count(*) from verification_recovery_unsettled) - (select count(*) from gone) as remaining`,
      [settledNow],
    );
    return Number(rows[0]?.remaining ?? 0);
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
        const finished = await this.streams.finish(
          reference,
          state,
          { type: 'FailVerification', reasonCode: RECOVERED_TIMEOUT, errorMessage: RECOVERED_MESSAGE, at: now },
          context,
        );
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
