import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../common/clock.js';
import { prepared } from '../database/prepared.js';
import type { EndpointSealing, EndpointTarget, SealedSecret } from './endpoint-sealing.js';
import { nextAttemptAt, MAX_ATTEMPTS } from './retry-schedule.js';
import { safePost, systemResolve, type PostPolicy, type PostResult, type Resolve } from './safe-post.js';

export interface SenderOptions extends PostPolicy {
  /** Requests in flight at once to one endpoint, all instances together: one instance at a time holds an endpoint. */
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
  /** How long an ended attempt waits for others to share its recording statement (RECORD_LINGER_MS unless given). */
  readonly recordLingerMs?: number;
}

/**
 * Past a claim's lease (the instance died mid-send) a delivery is due again, and the attempt counts
 * as made; past an endpoint's lease another instance may take the endpoint. Both leave room to
 * record after the longest send (the timeout).
 */
const CLAIM_MARGIN_MS = 30_000;
/** A send starts only while its endpoint's lease and its delivery's claim outlast it by this much. */
const START_MARGIN_MS = 5_000;
/**
 * Claimed deliveries that may wait here for a room, per room of their endpoint: so many that a
 * finished send's successor starts at once, without waiting on the database; as many as the
 * endpoint answers within a second at its recent pace, at least one and at most this.
 */
const MAX_WAITING_PER_ROOM = 7;

/**
 * An attempt that ended waits up to this long for others to share its recording statement.
 * Recorded as soon as the previous statement ended, a backlog's attempts went about five to a
 * statement, and each statement cost PostgreSQL about as much CPU as five more attempts in it
 * would (a probe of bench:webhooks: some 1 ms a statement beside 0.2 ms an attempt), CPU taken
 * from the sends on the same cores. The send's successor does not wait for this (it waits claimed
 * for the room), nor does any delivery's arrival; only the attempt's row shows up later.
 */
const RECORD_LINGER_MS = 25;
/** So many attempts waiting are recorded at once, without lingering further. */
const RECORD_AT_ONCE = 64;

/**
 * How long an endpoint's opened target and secrets are kept for its next sends. The entry is keyed
 * by the sealed values themselves, so an edited URL or a rotated secret is opened anew at once; an
 * offboarded organization's deliveries are never claimed (the claim reads its keys' row), so a kept
 * entry is never used for one.
 */
const OPENED_TTL_MS = 60_000;
const OPENED_MAX = 1_000;

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

/** A claimed delivery and when its claim ends (ms). */
interface Waiting {
  readonly delivery: Claimed;
  readonly claimedUntil: number;
}

/** This instance's part of an endpoint: its lease, its sends in flight, and the claimed deliveries waiting for a room. */
interface Endpoint {
  heldUntil: number;
  inFlight: number;
  readonly waiting: Waiting[];
  /** The endpoint's recent answer time (ms, moving average): how many claimed deliveries may wait for it. */
  latencyMs: number;
}

interface ToRecord {
  readonly delivery: Claimed;
  readonly attemptedAt: Date;
  readonly result: PostResult;
  readonly status: 'succeeded' | 'failed' | 'pending';
  readonly next: Date | null;
  readonly settle: (recorded: boolean) => void;
  readonly fail: (error: unknown) => void;
}

type ClaimedRow = Omit<Claimed, 'created_at'> & { created_at: string };

const claimedColumns = 'c.id::text as id, c.endpoint_id, e.organization_id, c.message_id, c.body, c.attempts, c.created_at, e.target, e.secrets';

/**
 * Sends due deliveries. Several instances may run it side by side. An endpoint is sent to by one
 * instance at a time, the holder of its lease (`webhook_endpoint_leases`), which keeps at most
 * `concurrencyPerEndpoint` requests to it in flight: so the bound holds across instances. Each claim
 * takes its rows with `FOR UPDATE SKIP LOCKED` and pushes their next attempt past the claim's lease
 * in the same statement, so a delivery is sent by one instance per attempt; an instance that dies
 * mid-send leaves it due again once the lease ends (at least once), and its endpoints free once
 * their leases end.
 */
export class WebhookSender {
  /** This sender's name on the endpoints' leases. */
  private readonly holder = `sender_${randomUUID()}`;
  private readonly endpoints = new Map<string, Endpoint>();
  /** Sends in flight, all endpoints together. */
  private total = 0;
  /** Claimed deliveries waiting for a room, all endpoints together. */
  private waitingCount = 0;
  private timer: NodeJS.Timeout | undefined;
  private claiming: Promise<number> | undefined;
  /** Sends, and claims given back, under way. */
  private readonly work = new Set<Promise<void>>();
  private stopped = false;
  /** Started (not driven by hand through claimAndSend): a recording that leaves rooms empty claims again at once. */
  private running = false;
  /** More work was wanted while a claim was under way: claim again once it ends. */
  private again = false;
  /** Attempts that ended and wait for the next recording statement. */
  private readonly toRecord: ToRecord[] = [];
  /** When the oldest of them ended (performance.now()), and the timer that records them once they have waited RECORD_LINGER_MS. */
  private toRecordSince = 0;
  private lingering: NodeJS.Timeout | undefined;
  private recording: Promise<void> | undefined;
  /** Opened endpoints by id, oldest first: one read of the organization's keys per endpoint and minute, not per send. */
  private readonly opened = new Map<string, { sealed: string; expiresAt: number; value: Promise<{ target: EndpointTarget; secrets: string[] }> }>();

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

  /** Ends the sends under way, gives back what waits unsent, and frees this instance's endpoints for the others at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.running = false;
    clearTimeout(this.timer);
    await this.claiming?.catch(() => undefined);
    for (const endpoint of this.endpoints.values()) this.giveBack(endpoint.waiting.splice(0));
    // Attempts lingering for a fuller batch are recorded now.
    this.flush();
    // A recording under way may still claim deliveries: they are given back as they come.
    await this.settled();
    await this.pool
      .query('delete from webhook_endpoint_leases where holder = $1', [this.holder])
      .catch((error: unknown) => this.options.log?.(`webhook leases not released: ${error instanceof Error ? error.message : String(error)}`));
    this.endpoints.clear();
    this.opened.clear();
  }

  /** Claims what is due and can be sent soon, starts sending it, and answers how many it claimed. */
  claimAndSend(): Promise<number> {
    this.claiming ??= this.afterRecording()
      .then(() => this.claim())
      .finally(() => {
        this.claiming = undefined;
        // Attempts that ended while the claim ran waited for it (one statement at a time).
        this.flush();
        if (this.again) {
          this.again = false;
          this.refill();
        }
      });
    return this.claiming;
  }

  /**
   * The recording statement under way, if any, has ended. This instance's claims and recordings
   * take turns: run side by side, they locked the same endpoints' leases and skipped each other's
   * due rows, so each claimed less than its rooms wanted and set off yet another claim (profiled:
   * a claim for every two or three recordings, each waiting on the other's row locks).
   */
  private async afterRecording(): Promise<void> {
    await this.recording?.catch(() => undefined);
  }

  /**
   * Rooms stayed empty after a recording: they go to other due deliveries now rather than at the
   * next poll. A failed send is due again only seconds later, so this never spins.
   */
  private refill(): void {
    if (!this.running) return;
    if (this.claiming !== undefined) {
      this.again = true;
      return;
    }
    void this.claimAndSend().catch((error: unknown) => this.options.log?.(`webhook claim failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  /** Every send started so far, and every one claimed meanwhile, has been recorded (tests, stop). */
  async settled(): Promise<void> {
    while (this.work.size > 0 || this.recording !== undefined) await Promise.all([...this.work, this.recording]);
  }

  /** How many more deliveries of this endpoint this instance may hold claimed: its rooms and those that may wait for them. */
  private roomFor(endpointId: string): number {
    const endpoint = this.endpoints.get(endpointId);
    const perRoom = Math.min(MAX_WAITING_PER_ROOM, Math.max(1, Math.floor(1_000 / Math.max(1, endpoint?.latencyMs ?? 0))));
    const window = this.options.concurrencyPerEndpoint * (1 + perRoom);
    return Math.max(0, window - (endpoint === undefined ? 0 : endpoint.inFlight + endpoint.waiting.length));
  }

  /** How many more deliveries this instance may hold claimed, all endpoints together. */
  private totalRoom(): number {
    return Math.max(0, this.options.maxInFlight * (1 + MAX_WAITING_PER_ROOM) - this.total - this.waitingCount);
  }

  /** A lease that outlasts a send started now, with room to record it: the endpoint's, and a delivery's (which may first wait one send's length for a room). */
  private leases(now: Date): { endpointUntil: Date; deliveryUntil: Date } {
    return {
      endpointUntil: new Date(now.getTime() + this.options.timeoutMs + CLAIM_MARGIN_MS),
      deliveryUntil: new Date(now.getTime() + 2 * this.options.timeoutMs + CLAIM_MARGIN_MS),
    };
  }

  /**
   * One statement: takes (or keeps) the lease of every endpoint with due deliveries that this
   * instance has room for and nobody else holds, and claims their due deliveries, oldest first,
   * as many per endpoint as this instance may hold. Leases are taken in endpoint order, so two
   * instances claiming at once never wait on each other in a circle. Prepared, like the recording:
   * PostgreSQL planned either afresh in about as long as it then took to run it (EXPLAIN ANALYZE),
   * where the service's pool plans a prepared statement once per connection.
   */
  private async claim(): Promise<number> {
    const room = this.totalRoom();
    if (room <= 0 || this.stopped) return 0;
    const now = this.clock.now();
    const { endpointUntil, deliveryUntil } = this.leases(now);
    const rooms = Object.fromEntries([...this.endpoints.keys()].map((endpointId) => [endpointId, this.roomFor(endpointId)]));
    const { rows } = await this.pool.query<{ held: string[]; claimed: ClaimedRow[] }>(
      prepared(
        `with candidates as (
         select e.id
           from webhook_endpoints e
           cross join lateral (
             select min(d.next_attempt_at) as at from webhook_deliveries d where d.endpoint_id = e.id and d.status = 'pending') first
          where e.enabled and e.deleted_at is null and first.at <= $1
            and coalesce(($5::jsonb ->> e.id)::int, $6) > 0
            -- An offboarded organization's endpoints are never sent to (their target and secrets died with its keys).
            and not exists (select 1 from organization_keys o where o.organization_id = e.organization_id and o.destroyed_at is not null)
          order by first.at
          limit $8),
       held as (
         insert into webhook_endpoint_leases as l (endpoint_id, holder, held_until)
         select id, $2, $3 from candidates order by id
         on conflict (endpoint_id) do update set holder = excluded.holder, held_until = excluded.held_until
          where l.holder = excluded.holder or l.held_until <= $1
         returning l.endpoint_id),
       due as (
         select d.id, d.next_attempt_at
           from held h
           cross join lateral (
             select id, next_attempt_at from webhook_deliveries d
              where d.endpoint_id = h.endpoint_id and d.status = 'pending' and d.next_attempt_at <= $1
              order by d.next_attempt_at
              limit coalesce(($5::jsonb ->> h.endpoint_id)::int, $6)
              for update skip locked) d
          order by d.next_attempt_at
          limit $7),
       claimed as (
         update webhook_deliveries d set attempts = d.attempts + 1, next_attempt_at = $4
           from due where d.id = due.id
         returning d.id, d.endpoint_id, d.message_id, d.body, d.attempts, d.created_at)
       select (select coalesce(array_agg(endpoint_id), '{}') from held) as held,
              (select coalesce(jsonb_agg(n), '[]') from (select ${claimedColumns} from claimed c join webhook_endpoints e on e.id = c.endpoint_id) n) as claimed`,
        [now, this.holder, endpointUntil, deliveryUntil, JSON.stringify(rooms), this.roomFor(''), room, this.options.maxInFlight],
      ),
    );
    this.hold(rows[0].held, endpointUntil);
    this.take(rows[0].claimed, deliveryUntil);
    return rows[0].claimed.length;
  }

  /** Notes the leases just taken or renewed. */
  private hold(endpointIds: readonly string[], until: Date): void {
    for (const endpointId of endpointIds) {
      const endpoint = this.endpoints.get(endpointId);
      if (endpoint === undefined) this.endpoints.set(endpointId, { heldUntil: until.getTime(), inFlight: 0, waiting: [], latencyMs: 0 });
      else endpoint.heldUntil = Math.max(endpoint.heldUntil, until.getTime());
    }
  }

  /** Queues claimed deliveries behind their endpoints' rooms and starts what fits; once stopping, gives them back. */
  private take(rows: readonly ClaimedRow[], claimedUntil: Date): void {
    const claimed = rows.map((row): Waiting => ({ delivery: { ...row, created_at: new Date(row.created_at) }, claimedUntil: claimedUntil.getTime() }));
    if (this.stopped) {
      this.giveBack(claimed);
      return;
    }
    for (const entry of claimed) {
      const endpoint = this.endpoints.get(entry.delivery.endpoint_id);
      // Claimed only for endpoints whose lease the same statement took or renewed: anything else is a defect, reported and undone.
      if (endpoint === undefined) {
        this.options.log?.(`webhook delivery ${entry.delivery.id} was claimed for an endpoint this sender does not hold`);
        this.giveBack([entry]);
        continue;
      }
      endpoint.waiting.push(entry);
      this.waitingCount++;
    }
    this.pump();
  }

  /**
   * Starts waiting deliveries in free rooms. A send starts only while its endpoint's lease outlasts
   * it (its timeout) with a margin, so no other instance sends to the endpoint meanwhile; what can no
   * longer start in time is given back.
   */
  private pump(): void {
    const now = this.clock.now().getTime();
    const needs = now + this.options.timeoutMs + START_MARGIN_MS;
    for (const [endpointId, endpoint] of this.endpoints) {
      if (endpoint.heldUntil < needs) this.giveBack(this.unqueue(endpoint, endpoint.waiting.length));
      while (endpoint.waiting.length > 0 && endpoint.inFlight < this.options.concurrencyPerEndpoint && this.total < this.options.maxInFlight) {
        const [next] = this.unqueue(endpoint, 1);
        if (next.claimedUntil < needs) this.giveBack([next]);
        else this.startSend(endpoint, next.delivery);
      }
      if (endpoint.inFlight === 0 && endpoint.waiting.length === 0 && (endpoint.heldUntil < now || this.endpoints.size > OPENED_MAX)) this.endpoints.delete(endpointId);
    }
  }

  private unqueue(endpoint: Endpoint, count: number): Waiting[] {
    const taken = endpoint.waiting.splice(0, count);
    this.waitingCount -= taken.length;
    return taken;
  }

  /** Undoes claims that were never sent: the deliveries are due again now, their attempt not counted. */
  private giveBack(entries: readonly Waiting[]): void {
    if (entries.length === 0) return;
    const done = this.pool
      .query(
        `update webhook_deliveries d set attempts = d.attempts - 1, next_attempt_at = $3
           from unnest($1::bigint[], $2::int[]) as g(id, attempt)
          where d.id = g.id and d.attempts = g.attempt and d.status = 'pending'`,
        [entries.map((entry) => entry.delivery.id), entries.map((entry) => entry.delivery.attempts), this.clock.now()],
      )
      .then(
        () => undefined,
        (error: unknown) => this.options.log?.(`webhook claims not given back (due again when they end): ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => this.work.delete(done));
    this.work.add(done);
  }

  /** Sends a claimed delivery in one of its endpoint's rooms; the attempt is recorded with others that ended meanwhile. */
  private startSend(endpoint: Endpoint, row: Claimed): void {
    endpoint.inFlight++;
    this.total++;
    const send = this.send(endpoint, row)
      .catch((error: unknown) => this.options.log?.(`webhook delivery ${row.id} could not be recorded: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => this.work.delete(send));
    this.work.add(send);
  }

  private async send(endpoint: Endpoint, delivery: Claimed): Promise<void> {
    const attemptedAt = this.clock.now();
    let result: PostResult;
    try {
      result = await this.post(delivery, attemptedAt);
    } finally {
      // The room is free as soon as the request is over; its successor starts before the attempt is recorded.
      // Not sent (the endpoint could not be opened): the claim's lease makes it due later.
      endpoint.inFlight--;
      this.total--;
      this.pump();
    }
    endpoint.latencyMs = endpoint.latencyMs === 0 ? result.latencyMs : 0.8 * endpoint.latencyMs + 0.2 * result.latencyMs;
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const next = succeeded ? null : nextAttemptAt(delivery.attempts, attemptedAt, this.options.random());
    const status = succeeded ? 'succeeded' : next === null ? 'failed' : 'pending';
    const recorded = await new Promise<boolean>((settle, fail) => {
      if (this.toRecord.length === 0) this.toRecordSince = performance.now();
      this.toRecord.push({ delivery, attemptedAt, result, status, next, settle, fail });
      this.flush();
    });
    if (recorded && status === 'failed' && this.options.onEndpointFailing !== undefined) {
      const { rows } = await this.pool.query<{ failing: boolean }>(
        "select not exists (select 1 from webhook_deliveries where endpoint_id = $1 and status = 'succeeded' and finished_at >= $2) as failing",
        [delivery.endpoint_id, delivery.created_at],
      );
      if (rows[0].failing) await this.options.onEndpointFailing(delivery.endpoint_id);
    }
  }

  /**
   * Records every attempt that ended since the last statement, in one statement (one round trip,
   * all or nothing, however many sends ended together); while the sender runs, the same statement
   * renews the lease of their endpoints and claims what may wait for their rooms, so a backlog
   * costs one statement per batch of sends, off the sends' path. One statement is in flight at a
   * time, a claim's included; attempts that end meanwhile wait for the next. The oldest waiting
   * attempt lingers up to RECORD_LINGER_MS for company, unless the sender is stopping.
   */
  private flush(): void {
    if (this.recording !== undefined || this.claiming !== undefined || this.toRecord.length === 0) return;
    const waited = performance.now() - this.toRecordSince;
    const linger = this.options.recordLingerMs ?? RECORD_LINGER_MS;
    if (waited < linger && this.toRecord.length < RECORD_AT_ONCE && !this.stopped) {
      this.lingering ??= setTimeout(() => {
        this.lingering = undefined;
        this.flush();
      }, linger - waited);
      return;
    }
    clearTimeout(this.lingering);
    this.lingering = undefined;
    const batch = this.toRecord.splice(0, 256);
    this.recording = this.recordBatch(batch).finally(() => {
      this.recording = undefined;
      this.flush();
    });
  }

  private async recordBatch(batch: readonly ToRecord[]): Promise<void> {
    const handOn = this.running && !this.stopped;
    const now = this.clock.now();
    const finishedAt = now;
    const { endpointUntil, deliveryUntil } = this.leases(now);
    const endpointIds = handOn ? [...new Set(batch.map((entry) => entry.delivery.endpoint_id))] : [];
    const asked = endpointIds.map((endpointId) => this.roomFor(endpointId));
    let result: { recorded: string[]; renewed: string[]; claimed: ClaimedRow[] };
    try {
      const { rows } = await this.pool.query<{ recorded: string[]; renewed: string[]; claimed: ClaimedRow[] }>(
        prepared(
          `with results as (
           select * from unnest($1::bigint[], $2::int[], $3::text[], $4::timestamptz[], $5::int[], $6::timestamptz[], $7::timestamptz[], $8::int[], $9::text[], $10::text[], $11::text[])
             as r(id, attempt, status, next_attempt_at, status_code, finished_at, attempted_at, latency_ms, outcome, error_code, excerpt)),
         updated as (
           -- When another instance took a delivery again after this claim's lease ran out, nothing is
           -- updated: its attempt is the one on record.
           update webhook_deliveries d
              set status = r.status, next_attempt_at = r.next_attempt_at, last_status_code = r.status_code, finished_at = r.finished_at
             from results r
            where d.id = r.id and d.attempts = r.attempt and d.status = 'pending'
           returning d.id),
         attempt as (
           insert into webhook_attempts (delivery_id, attempt, attempted_at, latency_ms, status_code, outcome, error_code, response_excerpt)
           select r.id, r.attempt, r.attempted_at, r.latency_ms, r.status_code, r.outcome, r.error_code, r.excerpt
             from results r join updated u on u.id = r.id
           on conflict (delivery_id, attempt) do nothing),
         renewed as (
           -- A lease another instance is busy taking is not waited for: it is renewed next time.
           update webhook_endpoint_leases l set held_until = $15
             from (select endpoint_id from webhook_endpoint_leases
                    where holder = $16 and endpoint_id = any($12::text[])
                    order by endpoint_id
                    for update skip locked) mine
            where l.endpoint_id = mine.endpoint_id
           returning l.endpoint_id),
         rooms as (
           select r.endpoint_id, r.room from unnest($12::text[], $17::int[]) as r(endpoint_id, room)
            where r.room > 0 and r.endpoint_id in (select endpoint_id from renewed)),
         due as (
           select d.id
             from rooms
             join webhook_endpoints e on e.id = rooms.endpoint_id and e.enabled and e.deleted_at is null
             cross join lateral (
               select id from webhook_deliveries d
                where d.endpoint_id = rooms.endpoint_id and d.status = 'pending' and d.next_attempt_at <= $13 and d.id <> all($1::bigint[])
                order by d.next_attempt_at
                limit rooms.room
                for update skip locked) d
            where not exists (select 1 from organization_keys o where o.organization_id = e.organization_id and o.destroyed_at is not null)),
         claimed as (
           update webhook_deliveries d set attempts = d.attempts + 1, next_attempt_at = $14
             from due where d.id = due.id
           returning d.id, d.endpoint_id, d.message_id, d.body, d.attempts, d.created_at)
         select (select coalesce(array_agg(id::text), '{}') from updated) as recorded,
                (select coalesce(array_agg(endpoint_id), '{}') from renewed) as renewed,
                (select coalesce(jsonb_agg(n), '[]') from (select ${claimedColumns} from claimed c join webhook_endpoints e on e.id = c.endpoint_id) n) as claimed`,
          [
            batch.map((entry) => entry.delivery.id),
            batch.map((entry) => entry.delivery.attempts),
            batch.map((entry) => entry.status),
            batch.map((entry) => entry.next),
            batch.map((entry) => entry.result.statusCode),
            batch.map((entry) => (entry.status === 'pending' ? null : finishedAt)),
            batch.map((entry) => entry.attemptedAt),
            batch.map((entry) => entry.result.latencyMs),
            batch.map((entry) => (entry.status === 'succeeded' ? 'succeeded' : 'failed')),
            batch.map((entry) => entry.result.errorCode),
            batch.map((entry) => entry.result.excerpt),
            endpointIds,
            now,
            deliveryUntil,
            endpointUntil,
            this.holder,
            asked,
          ],
        ),
      );
      result = rows[0];
    } catch (error) {
      for (const entry of batch) entry.fail(error);
      return;
    }
    this.hold(result.renewed, endpointUntil);
    this.take(result.claimed, deliveryUntil);
    const recorded = new Set(result.recorded);
    for (const entry of batch) entry.settle(recorded.has(String(entry.delivery.id)));
    // What this statement could not claim (an endpoint's backlog is over, or its lease was busy) may go to other endpoints' due deliveries.
    const renewed = new Set(result.renewed);
    const wanted = endpointIds.reduce((sum, endpointId, index) => sum + (renewed.has(endpointId) ? asked[index] : 0), 0);
    if (handOn && (result.claimed.length < wanted || renewed.size < endpointIds.length)) this.refill();
  }

  private async post(delivery: Claimed, at: Date): Promise<PostResult> {
    // The current secret, and the previous one while its overlap lasts: both signatures, space-separated.
    const secrets = delivery.secrets.filter((secret) => secret.validUntil === null || new Date(secret.validUntil) > at);
    const opened = await this.open(delivery, secrets);
    const signatures = opened.secrets.map((plain) => new Webhook(plain).sign(delivery.message_id, at, delivery.body));
    const headers = {
      'webhook-id': delivery.message_id,
      'webhook-timestamp': Math.floor(at.getTime() / 1_000).toString(),
      'webhook-signature': signatures.join(' '),
    };
    return safePost(opened.target.url, headers, delivery.body, this.options, this.options.resolve ?? systemResolve);
  }

  /** The endpoint's target and these secrets opened, from what an earlier send opened when the sealed values are the same. */
  private open(delivery: Claimed, secrets: readonly SealedSecret[]): Promise<{ target: EndpointTarget; secrets: string[] }> {
    const sealed = JSON.stringify([delivery.target, secrets.map((secret) => [secret.secretId, secret.secret])]);
    const now = this.clock.now().getTime();
    const kept = this.opened.get(delivery.endpoint_id);
    if (kept !== undefined && kept.sealed === sealed && kept.expiresAt > now) return kept.value;
    this.opened.delete(delivery.endpoint_id);
    const value = this.sealing.openEndpoint(delivery.organization_id, delivery.endpoint_id, delivery.target, secrets);
    // A failed opening (keys destroyed meanwhile, a value tampered with) is not kept.
    value.catch(() => {
      if (this.opened.get(delivery.endpoint_id)?.value === value) this.opened.delete(delivery.endpoint_id);
    });
    this.opened.set(delivery.endpoint_id, { sealed, expiresAt: now + OPENED_TTL_MS, value });
    if (this.opened.size > OPENED_MAX) this.opened.delete(this.opened.keys().next().value as string);
    return value;
  }
}

export { MAX_ATTEMPTS };
