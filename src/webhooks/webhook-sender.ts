import type pg from 'pg';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../common/clock.js';
import { inTransaction } from '../database/transaction.js';
import type { EndpointSealing } from './endpoint-sealing.js';
import { nextAttemptAt, MAX_ATTEMPTS } from './retry-schedule.js';
import { safePost, systemResolve, type PostPolicy, type PostResult, type Resolve } from './safe-post.js';

export interface SenderOptions extends PostPolicy {
  readonly concurrencyPerEndpoint: number;
  /** Deliveries in flight at once in this instance, all endpoints together. */
  readonly maxInFlight: number;
  /** How often the sender looks for due deliveries. */
  readonly pollMs: number;
  /** A number in [0, 1) for the retry jitter. */
  readonly random: () => number;
  readonly resolve?: Resolve;
  /** Called once a delivery failed for good and its endpoint had no success since it was made: the endpoint has been failing for days. */
  readonly onEndpointFailing?: (endpointId: string) => Promise<void>;
  readonly log?: (message: string) => void;
}

/**
 * A claim holds a delivery for this long: past it (the instance died mid-send) the delivery is due
 * again, and the attempt counts as made. Longer than any send (the timeout) with room to record.
 */
const CLAIM_MARGIN_MS = 30_000;

interface Claimed {
  readonly id: string;
  readonly endpoint_id: string;
  readonly organization_id: string;
  readonly message_id: string;
  readonly body: string;
  readonly attempts: number;
  readonly created_at: Date;
  readonly target: string;
  readonly secrets: readonly { secretId: string; secret: string; validUntil: string | null }[];
}

/**
 * Sends due deliveries. Several instances may run it side by side: each claim takes its rows with
 * `FOR UPDATE SKIP LOCKED` and pushes their next attempt past the claim's lease in the same
 * statement, so a delivery is sent by one instance per attempt; an instance that dies mid-send
 * leaves it due again once the lease ends (at least once). Per endpoint, at most
 * `concurrencyPerEndpoint` sends are in flight in this instance.
 */
export class WebhookSender {
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private timer: NodeJS.Timeout | undefined;
  private claiming: Promise<number> | undefined;
  private readonly sends = new Set<Promise<void>>();
  private stopped = false;
  /** Started (not driven by hand through claimAndSend): a finished send claims its room's next delivery at once. */
  private running = false;
  /** A send finished while a claim was under way: claim again once it ends. */
  private again = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly sealing: EndpointSealing,
    private readonly options: SenderOptions,
  ) {
    if (!Number.isInteger(options.concurrencyPerEndpoint) || options.concurrencyPerEndpoint < 1) throw new RangeError('concurrencyPerEndpoint must be at least 1');
    if (!Number.isInteger(options.maxInFlight) || options.maxInFlight < 1 || options.maxInFlight > 1_000) throw new RangeError('maxInFlight must be 1 to 1000');
  }

  start(): void {
    this.stopped = false;
    this.running = true;
    const tick = () => {
      if (this.stopped) return;
      void this.claimAndSend()
        .catch((error: unknown) => this.options.log?.(`webhook claim failed: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.options.pollMs).unref();
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.running = false;
    clearTimeout(this.timer);
    await this.claiming?.catch(() => undefined);
    await Promise.all([...this.sends]);
  }

  /** Claims what is due and can be sent now, starts sending it, and answers how many it claimed. */
  claimAndSend(): Promise<number> {
    this.claiming ??= this.claim().finally(() => {
      this.claiming = undefined;
      if (this.again) {
        this.again = false;
        this.refill();
      }
    });
    return this.claiming;
  }

  /**
   * A send finished: its room goes to the next due delivery now rather than at the next poll, or an
   * endpoint with a backlog would get at most `concurrencyPerEndpoint` sends per poll however fast
   * it answers. A failed send is due again only seconds later, so this never spins.
   */
  private refill(): void {
    if (!this.running) return;
    if (this.claiming !== undefined) {
      this.again = true;
      return;
    }
    void this.claimAndSend().catch((error: unknown) => this.options.log?.(`webhook claim failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  /** Every send started so far has been recorded (tests). */
  async settled(): Promise<void> {
    while (this.sends.size > 0) await Promise.all([...this.sends]);
  }

  private async claim(): Promise<number> {
    const room = this.options.maxInFlight - this.total;
    if (room <= 0) return 0;
    const now = this.clock.now();
    // What each busy endpoint may still take; the others take up to the limit.
    const capacity = Object.fromEntries([...this.inFlight].map(([endpointId, count]) => [endpointId, Math.max(0, this.options.concurrencyPerEndpoint - count)]));
    const lease = new Date(now.getTime() + this.options.timeoutMs + CLAIM_MARGIN_MS);
    const { rows } = await this.pool.query<Claimed>(
      `with due as (
         select d.id, d.next_attempt_at
           from webhook_endpoints e
           cross join lateral (
             select id, next_attempt_at from webhook_deliveries d
              where d.endpoint_id = e.id and d.status = 'pending' and d.next_attempt_at <= $1
              order by d.next_attempt_at
              limit coalesce(($3::jsonb ->> e.id)::int, $4)
              for update skip locked) d
          where e.enabled and e.deleted_at is null
            -- An offboarded organization's endpoints are never sent to (their target and secrets died with its keys).
            and not exists (select 1 from organization_keys o where o.organization_id = e.organization_id and o.destroyed_at is not null)
          order by d.next_attempt_at
          limit $2),
       claimed as (
         update webhook_deliveries d set attempts = d.attempts + 1, next_attempt_at = $5
           from due where d.id = due.id
         returning d.id, d.endpoint_id, d.message_id, d.body, d.attempts, d.created_at)
       select c.id, c.endpoint_id, e.organization_id, c.message_id, c.body, c.attempts, c.created_at, e.target, e.secrets
         from claimed c join webhook_endpoints e on e.id = c.endpoint_id`,
      [now, room, JSON.stringify(capacity), this.options.concurrencyPerEndpoint, lease],
    );
    for (const row of rows) {
      this.inFlight.set(row.endpoint_id, (this.inFlight.get(row.endpoint_id) ?? 0) + 1);
      this.total++;
      const send = this.send(row)
        .catch((error: unknown) => this.options.log?.(`webhook delivery ${row.id} could not be recorded: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => {
          this.sends.delete(send);
          const left = (this.inFlight.get(row.endpoint_id) ?? 1) - 1;
          if (left <= 0) this.inFlight.delete(row.endpoint_id);
          else this.inFlight.set(row.endpoint_id, left);
          this.total--;
          this.refill();
        });
      this.sends.add(send);
    }
    return rows.length;
  }

  private async send(delivery: Claimed): Promise<void> {
    const attemptedAt = this.clock.now();
    const result = await this.post(delivery, attemptedAt);
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const next = succeeded ? null : nextAttemptAt(delivery.attempts, attemptedAt, this.options.random());
    const status = succeeded ? 'succeeded' : next === null ? 'failed' : 'pending';
    const recorded = await inTransaction(this.pool, async (client) => {
      const updated = await client.query(
        `update webhook_deliveries set status = $3, next_attempt_at = $4, last_status_code = $5, finished_at = $6 where id = $1 and attempts = $2 and status = 'pending'`,
        [delivery.id, delivery.attempts, status, next, result.statusCode, status === 'pending' ? null : this.clock.now()],
      );
      // Another instance took it again after this claim's lease ran out: its attempt is the one on record.
      if (updated.rowCount === 0) return false;
      await client.query(
        `insert into webhook_attempts (delivery_id, attempt, attempted_at, latency_ms, status_code, outcome, error_code, response_excerpt)
         values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict (delivery_id, attempt) do nothing`,
        [delivery.id, delivery.attempts, attemptedAt, result.latencyMs, result.statusCode, succeeded ? 'succeeded' : 'failed', result.errorCode, result.excerpt],
      );
      return true;
    });
    if (recorded && status === 'failed' && this.options.onEndpointFailing !== undefined) {
      const { rows } = await this.pool.query<{ failing: boolean }>(
        "select not exists (select 1 from webhook_deliveries where endpoint_id = $1 and status = 'succeeded' and finished_at >= $2) as failing",
        [delivery.endpoint_id, delivery.created_at],
      );
      if (rows[0].failing) await this.options.onEndpointFailing(delivery.endpoint_id);
    }
  }

  private async post(delivery: Claimed, at: Date): Promise<PostResult> {
    // The current secret, and the previous one while its overlap lasts: both signatures, space-separated.
    const secrets = delivery.secrets.filter((secret) => secret.validUntil === null || new Date(secret.validUntil) > at);
    const opened = await this.sealing.openEndpoint(delivery.organization_id, delivery.endpoint_id, delivery.target, secrets);
    const signatures = opened.secrets.map((plain) => new Webhook(plain).sign(delivery.message_id, at, delivery.body));
    const headers = {
      'webhook-id': delivery.message_id,
      'webhook-timestamp': Math.floor(at.getTime() / 1_000).toString(),
      'webhook-signature': signatures.join(' '),
    };
    return safePost(opened.target.url, headers, delivery.body, this.options, this.options.resolve ?? systemResolve);
  }
}

export { MAX_ATTEMPTS };
