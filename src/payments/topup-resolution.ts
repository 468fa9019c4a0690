import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { ServiceUnavailable, TopUpNotResolvable, ValidationFailed } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { EventSourcedHandler } from '../event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../event-sourcing/retry.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { PaymentRailFailure } from './payment-rail.port.js';
import { DISMISS_REASONS, topUpDecider, type DismissReason, type Rail, type TopUpCommand, type TopUpState, type VerifiedTransaction } from './topup.decider.js';
import { topUpStream, type TopUpEvent } from './topup.events.js';
import { TOPUPS_PROJECTION, TOPUPS_TABLE } from './topup.read-model.js';
import { TopUps } from './topups.service.js';

/** Top-ups verified with their rail per look at the list, beyond the flagged ones: the most recent unfinished or failed. */
export const ATTENTION_CANDIDATES = 100;
/** Flagged top-ups listed at most (oldest first: the longest waiting). */
const MAX_FLAGGED = 200;

export type Resolution = { readonly action: 'credit' } | { readonly action: 'dismiss'; readonly reason: DismissReason };

/** A top-up that needs an operator, with our figures and the provider's side by side. */
export interface PaymentAttention {
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: string;
  readonly rail: string;
  readonly channel: string;
  /** Ours: flagged, or failed / initiated while the provider settled it. */
  readonly status: string;
  /** flagged: held, nothing credited (amounts or currency disagreed); uncredited: the provider settled it, the wallet was not credited. */
  readonly attention: 'flagged' | 'uncredited';
  readonly flagReason: string | null;
  readonly initiatedKobo: number;
  /** The provider's word now; null for every field when it could not be asked (then `providerStatus` is null too). */
  readonly providerStatus: string | null;
  readonly providerKobo: number | null;
  readonly providerFeesKobo: number | null;
  readonly providerCurrency: string | null;
  readonly providerPaidAt: string | null;
  readonly createdAt: string;
}

/** What a resolution answers: the top-up's state after it. */
export interface ResolvedTopUp {
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: string;
  readonly status: string;
  readonly creditedKobo: number | null;
}

export function resolvedView(state: { reference: string; organizationId: string; environment: string; status: string; paidKobo: number }): ResolvedTopUp {
  return {
    reference: state.reference,
    organizationId: state.organizationId,
    environment: state.environment,
    status: state.status,
    creditedKobo: state.status === 'credited' ? state.paidKobo : null,
  };
}

/** `{action: 'credit'}` or `{action: 'dismiss', reason}` with a reason of the list; every field error at once. */
export function resolutionOf(body: unknown): Resolution {
  const input = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const errors = [];
  for (const field of Object.keys(input)) if (field !== 'action' && field !== 'reason') errors.push({ field, message: `${field} is not a field of a resolution` });
  if (input.action === 'credit') {
    if (input.reason !== undefined) errors.push({ field: 'reason', message: 'reason is given only to dismiss' });
  } else if (input.action === 'dismiss') {
    if (!DISMISS_REASONS.includes(input.reason as DismissReason)) errors.push({ field: 'reason', message: `reason must be one of ${DISMISS_REASONS.join(', ')}` });
  } else errors.push({ field: 'action', message: 'action must be "credit" or "dismiss"' });
  if (errors.length > 0) throw new ValidationFailed(errors);
  return input.action === 'credit' ? { action: 'credit' } : { action: 'dismiss', reason: input.reason as DismissReason };
}

/**
 * The operators' payments reconciliation across organizations: the top-ups that need a person, and
 * their resolution. A resolution is an event on the top-up's stream (`TopUpResolved`); a credit is
 * the provider's settled amount, verified now, credited by the normal path (the wallet funding under
 * the top-up's reference, which credits once whoever asks twice).
 */
@Injectable()
export class TopUpResolutions {
  private readonly handler: EventSourcedHandler<TopUpState, TopUpCommand, TopUpEvent>;

  constructor(
    @Inject(EVENT_STORE) store: EventStore,
    @Inject(Clock) clock: Clock,
    @Inject(IdGenerator) ids: IdGenerator,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(TopUps) private readonly topUps: TopUps,
  ) {
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: linearJitter(10, 5), paging: { pageSize: 100, maxPages: 10 } });
  }

  /** Every flagged top-up, and those of the most recent unfinished or failed ones the provider says it settled; oldest first. */
  async attention(): Promise<PaymentAttention[]> {
    const { rows } = await this.pool.query<{
      reference: string;
      organization_id: string;
      environment: string;
      rail: string;
      channel: string;
      status: string;
      flag_reason: string | null;
      initiated_kobo: string;
      created_at: Date;
    }>(
      `(select * from ${TOPUPS_TABLE} where status = 'flagged' order by created_at limit $1)
       union all
       (select * from ${TOPUPS_TABLE} where status in ('initiated', 'failed') order by created_at desc limit $2)
       order by created_at, reference`,
      [MAX_FLAGGED, ATTENTION_CANDIDATES],
    );
    const found: PaymentAttention[] = [];
    for (const row of rows) {
      const verified = await this.verified(row.rail as Rail, row.reference);
      const settled = verified?.status === 'success';
      if (row.status !== 'flagged' && !settled) continue;
      found.push({
        reference: row.reference,
        organizationId: row.organization_id,
        environment: row.environment,
        rail: row.rail,
        channel: row.channel,
        status: row.status,
        attention: row.status === 'flagged' ? 'flagged' : 'uncredited',
        flagReason: row.flag_reason,
        initiatedKobo: Number(row.initiated_kobo),
        providerStatus: verified === undefined ? null : (verified?.status ?? 'not_found'),
        providerKobo: verified?.amountKobo ?? null,
        providerFeesKobo: verified?.feesKobo ?? null,
        providerCurrency: verified?.currency ?? null,
        providerPaidAt: verified?.paidAt ?? null,
        createdAt: row.created_at.toISOString(),
      });
    }
    return found;
  }

  /** Resolves the top-up as the operator asked: its state after (credited, or dismissed). */
  async resolve(reference: string, resolution: Resolution, context: CommandContext): Promise<TopUpState> {
    const state = await this.topUps.state(reference);
    let command: TopUpCommand;
    if (resolution.action === 'credit') {
      if (state.status !== 'flagged' && state.status !== 'failed' && state.status !== 'initiated') throw new TopUpNotResolvable(`a top-up ${state.status} needs no credit`);
      const rail = this.topUps.rail(state.rail);
      if (!(await rail.configured())) throw new ServiceUnavailable('The payment provider of this top-up is not configured');
      let verified;
      try {
        verified = await rail.verify(reference);
      } catch (error) {
        if (error instanceof PaymentRailFailure) throw new ServiceUnavailable('The payment provider is not answering; try again shortly', { reason: error.reasonCode });
        throw error;
      }
      if (verified === null) throw new TopUpNotResolvable('the provider knows no payment with this reference');
      command = { type: 'ResolveTopUp', resolution: { action: 'credit', verified } };
    } else command = { type: 'ResolveTopUp', resolution };
    const handled = await this.handler.handle({ id: topUpStream(reference), decider: topUpDecider }, command, context);
    if (handled.status === 'conflict') throw new ServiceUnavailable('The top-up is being changed concurrently; try again');
    if (handled.status === 'appended') await this.waiter.waitFor([TOPUPS_PROJECTION], handled.position, 5_000).catch(() => undefined);
    if (handled.folded.state.status !== 'paid') return handled.folded.state;
    // Paid by the resolution: the normal path credits the wallet (once, by the funding reference) and mails the receipt.
    return this.topUps.confirm(reference, null, context);
  }

  private async verified(rail: Rail, reference: string): Promise<VerifiedTransaction | null | undefined> {
    const paymentRail = this.topUps.rail(rail);
    if (!(await paymentRail.configured())) return undefined;
    try {
      return await paymentRail.verify(reference);
    } catch {
      return undefined;
    }
  }
}
