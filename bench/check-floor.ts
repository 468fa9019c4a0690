/**
 * The check floor for bench:api: what the database work of one check costs with nothing around it.
 *
 * A check of POST /v1/{scope} writes, on the PostgreSQL store: its request with its data key and
 * the request's blind-index tokens, its wallet reservation, its completion with the result's new
 * tokens, and its capture (appends through the store's group commit, the wallet's own queued and
 * batched per wallet as the wallet ledger does, each batch's append conditioned on the wallet's
 * last event, or confirmed by one read of the wallet stream first where the store cannot condition
 * an append on it), a wallet snapshot every 1,000 wallet events, and the writes of the projections and
 * the subscribers the service runs beside them (the webhooks': the real runners).
 * The floor does exactly that with the service's own pieces (PostgresEventStore, DataKeys,
 * WalletSnapshots, the WorkerPool of the projections and subscribers) on a pool of the service's size, and nothing else:
 * no NestJS, Fastify, key check, rate limit, decider, sealing, provider, log or metric. Its events
 * are one real check's, copied with a fresh reference (same types, same bytes), so every row it
 * writes is the size of the service's. bench:api checks, in the same run, that it writes the
 * same rows per check per table as the service did.
 *
 * Which store transactions a check makes is CHECK_PLANS[plan]: the one place to follow a change
 * of the service's write path.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { monotonicFactory } from 'ulid';
import { DataKeys } from '../src/data-protection/data-keys.js';
import { LocalKeyManagement } from '../src/data-protection/key-management.port.js';
import type { AppendResult, EventStore, EventToAppend, ExpectedRevision, JsonObject, KeyRows } from '../src/event-store/event-store.port.js';
import { PostgresEventStore } from '../src/event-store/postgres-event-store.js';
import { PostgresWalletSnapshots, type WalletSnapshots } from '../src/wallets/wallet-snapshots.js';
import { initialWalletState } from '../src/wallets/wallet.decider.js';
import { isEnvironment } from '../src/common/environment.js';
import { readProjectionStatus } from '../projections/status/projection-status.js';
import { RUNNING } from '../projections/index.js';
import { WorkerPool } from '../projections/runner/worker-pool.js';

/** A check's four events, by role. */
export type CheckPart = 'request' | 'reservation' | 'completion' | 'capture';
const WALLET_PARTS: ReadonlySet<CheckPart> = new Set(['reservation', 'capture']);

/**
 * The store transactions of one check, in order, each naming the events it commits together.
 * A transaction with a wallet event goes through the wallet's queue (batched with the other
 * checks' and appended with the wallet's expected revision); the verification's events of that
 * transaction then ride in the same write-set (the store's appendMany). In two-write-sets the
 * data key and the request's tokens ride on the request's append, the result's tokens on the
 * completion's (StreamAppend.keyRows, as the service writes them on PostgreSQL); in four-appends
 * they are written before the first transaction and after the one that holds the completion.
 *   four-appends: request, reservation, completion, capture, each its own append (main today).
 *   two-write-sets: request with reservation, completion with capture (issue 21 item 5 on
 *     PostgreSQL: an atomic append of several streams).
 */
export const CHECK_PLANS = {
  'four-appends': [['request'], ['reservation'], ['completion'], ['capture']],
  'two-write-sets': [
    ['request', 'reservation'],
    ['completion', 'capture'],
  ],
} as const satisfies Record<string, readonly (readonly CheckPart[])[]>;
export type CheckPlanName = keyof typeof CHECK_PLANS;
for (const [name, plan] of Object.entries(CHECK_PLANS)) {
  const parts = plan.flat().sort();
  if (parts.join() !== ['capture', 'completion', 'request', 'reservation'].join()) throw new Error(`invariant: check plan ${name} must write each of the four events once`);
  if (plan.some((transaction) => transaction.filter((part) => WALLET_PARTS.has(part)).length > 1))
    throw new Error(`invariant: check plan ${name} puts two wallet events of one check in one transaction`);
}
export function isCheckPlan(name: string): name is CheckPlanName {
  return Object.hasOwn(CHECK_PLANS, name);
}

/**
 * The plan the service built from this code follows on `store`: a check written as two write-sets
 * where the store appends several streams in one transaction (`multiStreamAppends: 'atomic'`),
 * otherwise as four appends. bench:api checks the guess: a floor that commits more per check than
 * the service is not the service's floor.
 */
export function servicePlan(store: EventStore): CheckPlanName {
  return (store as { readonly multiStreamAppends?: string }).multiStreamAppends === 'atomic' ? 'two-write-sets' : 'four-appends';
}

interface TemplateEvent {
  readonly type: string;
  readonly data: JsonObject;
  readonly metadata: JsonObject;
}

/** One real check of the service, as bench:api read it back from the service's database. */
export interface CheckTemplate {
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: string;
  readonly walletStream: string;
  /** The organization's stream and the wallet's funding, copied first so that the projections see what they saw in the service. */
  readonly setup: readonly { readonly streamId: string; readonly events: readonly TemplateEvent[] }[];
  readonly events: Readonly<Record<CheckPart, TemplateEvent>>;
  /** The check's blind-index tokens, those of its request first. */
  readonly requestTokens: readonly string[];
  readonly resultTokens: readonly string[];
  /** The service's answer to the check. */
  readonly answer: { readonly status: number; readonly contentType: string; readonly body: string };
}

/** The wallet ledger's batch bound, confirming read (where the store needs one) and snapshot interval (src/wallets/wallet-ledger.ts). */
const WALLET_MAX_BATCH = 200;
const WALLET_PAGE_SIZE = 1_000;
const WALLET_SNAPSHOT_EVERY = 1_000n;
/** How long the floor waits for its projections to catch up with the copied setup. */
const SETUP_CATCH_UP_MS = 60_000;

interface StreamAppend {
  readonly streamId: string;
  readonly events: readonly EventToAppend[];
  readonly expectedRevision: ExpectedRevision;
  readonly expectedEventId?: string;
}

/** The store's multi-stream append, where the store has one (issue 21 item 5). */
type WithAppendMany = EventStore & { appendMany?: (appends: readonly StreamAppend[]) => Promise<AppendResult[]> };

interface WalletWrite {
  readonly walletEvents: readonly EventToAppend[];
  /** The verification's events committed with them, in the same write-set. */
  readonly alongside?: StreamAppend;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One wallet's writes as the wallet ledger makes them: queued, one batch at a time (at most 200),
 * each batch appended with the revision it holds in one append, conditioned on the id of the event
 * there (or, on a store that cannot check it, confirmed by a read of the stream from that revision
 * first); a snapshot every 1,000 events, in the background.
 */
class WalletWriter {
  private readonly pending: WalletWrite[] = [];
  private draining = false;
  private snapshotRevision: bigint;

  constructor(
    private readonly store: WithAppendMany,
    private readonly snapshots: WalletSnapshots,
    private readonly template: CheckTemplate,
    private revision: bigint,
    private lastEventId: string,
  ) {
    this.snapshotRevision = revision;
  }

  write(walletEvents: readonly EventToAppend[], alongside?: StreamAppend): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ walletEvents, alongside, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, WALLET_MAX_BATCH);
        try {
          await this.writeBatch(batch);
          for (const write of batch) write.resolve();
        } catch (error) {
          for (const write of batch) write.reject(error);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private async writeBatch(batch: readonly WalletWrite[]): Promise<void> {
    const streamId = this.template.walletStream;
    const conditioned = (this.store as { readonly expectedEventIds?: string }).expectedEventIds === 'checked';
    if (!conditioned) await this.store.readStream(streamId, { direction: 'forwards', fromRevision: this.revision, maxCount: WALLET_PAGE_SIZE });
    const condition = conditioned ? { expectedEventId: this.lastEventId } : {};
    const events = batch.flatMap((write) => write.walletEvents);
    const alongside = batch.flatMap((write) => (write.alongside === undefined ? [] : [write.alongside]));
    if (alongside.length === 0) {
      await this.store.append(streamId, events, { expectedRevision: this.revision, ...condition });
    } else {
      if (this.store.appendMany === undefined) throw new Error('this plan needs the store’s appendMany, which this branch does not have');
      await this.store.appendMany([{ streamId, events, expectedRevision: this.revision, ...condition }, ...alongside]);
    }
    this.revision += BigInt(events.length);
    this.lastEventId = events[events.length - 1].id;
    if (this.revision - this.snapshotRevision >= WALLET_SNAPSHOT_EVERY) this.snapshot();
  }

  /** A snapshot row of the wallet's size as the ledger writes it (its state is not the fold's: nothing reads it here). */
  private snapshot(): void {
    const { organizationId, environment } = this.template;
    if (!isEnvironment(environment)) throw new Error(`unknown environment ${environment}`);
    const revision = this.revision;
    this.snapshotRevision = revision;
    void this.snapshots
      .save({ streamId: this.template.walletStream, revision, link: randomBytes(32).toString('hex'), state: initialWalletState(organizationId, environment) })
      .catch(() => undefined);
  }
}

/** The template's event with `reference` in place of the template's (same length: `vrf_` and a ULID). */
function eventOf(template: TemplateEvent, from: string, to: string): EventToAppend {
  const swap = (value: JsonObject) => JSON.parse(JSON.stringify(value).replaceAll(from, to)) as JsonObject;
  return { id: randomUUID(), type: template.type, data: swap(template.data), metadata: swap(template.metadata) };
}

export interface CheckFloor {
  /** The plan it follows. */
  readonly plan: CheckPlanName;
  /** Writes one check; answers the service's answer to it. */
  check(): Promise<{ status: number; contentType: string; body: string }>;
  /** True once every projection has applied everything in the floor's log. */
  caughtUp(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The floor on `pool` (a migrated database of its own), following `planName` (`auto`: the
 * service's, servicePlan): copies the template's setup, starts the projections and waits until
 * they have applied it.
 */
export async function startCheckFloor(pool: pg.Pool, databaseUrl: string, template: CheckTemplate, planName: CheckPlanName | 'auto'): Promise<CheckFloor> {
  const store: WithAppendMany = new PostgresEventStore({ pool, connectionString: databaseUrl });
  const chosen = planName === 'auto' ? servicePlan(store) : planName;
  const plan = CHECK_PLANS[chosen];
  let walletEventId: string | undefined;
  for (const { streamId, events } of template.setup) {
    const copies = events.map((event) => ({ id: randomUUID(), ...event }));
    await store.append(streamId, copies, { expectedRevision: 'no_stream' });
    if (streamId === template.walletStream) walletEventId = copies.at(-1)?.id;
  }
  const walletRevision = BigInt(template.setup.find((stream) => stream.streamId === template.walletStream)?.events.length ?? 0) - 1n;
  if (walletRevision < 0n || walletEventId === undefined) throw new Error('the template has no funding of its wallet');
  const keys = new DataKeys(pool, new LocalKeyManagement(randomBytes(32)));
  const wallet = new WalletWriter(store, new PostgresWalletSnapshots(pool), template, walletRevision, walletEventId);
  const workers = new WorkerPool(pool, store, databaseUrl, RUNNING);
  workers.start();
  const caughtUp = async () => (await readProjectionStatus(pool, store, RUNNING)).every((status) => status.lagEvents === 0);
  const deadline = Date.now() + SETUP_CATCH_UP_MS;
  while (!(await caughtUp())) {
    if (Date.now() > deadline) throw new Error('the check floor’s projections did not catch up with its setup');
    await new Promise((wake) => setTimeout(wake, 100));
  }

  const ulid = monotonicFactory();
  const { organizationId, environment } = template;
  return {
    plan: chosen,
    caughtUp,
    async check() {
      const reference = `vrf_${ulid()}`;
      const streamId = `verification-${reference}`;
      // Key rows ride on the write-sets where a check's events share a transaction with its wallet's (the service's keyRows); otherwise they are committed on their own.
      const keysAlongside = chosen === 'two-write-sets';
      let keyRows: KeyRows | undefined;
      if (keysAlongside) keyRows = (await keys.make(organizationId, environment, reference, () => template.requestTokens)).rows;
      else await keys.create(organizationId, environment, reference, () => template.requestTokens);
      let revision: ExpectedRevision = 'no_stream';
      for (const transaction of plan) {
        const parts = transaction as readonly CheckPart[];
        const ownEvents = parts.filter((part) => !WALLET_PARTS.has(part)).map((part) => eventOf(template.events[part], template.reference, reference));
        const walletEvents = parts.filter((part) => WALLET_PARTS.has(part)).map((part) => eventOf(template.events[part], template.reference, reference));
        const resultTokens = parts.includes('completion') && template.resultTokens.length > 0;
        if (keysAlongside && resultTokens) keyRows = await keys.tokenRows(organizationId, environment, reference, () => template.resultTokens);
        const own =
          ownEvents.length === 0 ? undefined : { streamId, events: ownEvents, expectedRevision: revision, ...(keysAlongside && keyRows !== undefined ? { keyRows } : {}) };
        if (own !== undefined) keyRows = undefined;
        if (walletEvents.length > 0) await wallet.write(walletEvents, own);
        else if (own !== undefined) await store.append(streamId, own.events, { expectedRevision: own.expectedRevision });
        if (own !== undefined) revision = (revision === 'no_stream' ? -1n : (revision as bigint)) + BigInt(ownEvents.length);
        if (!keysAlongside && resultTokens) await keys.index(organizationId, environment, reference, () => template.resultTokens);
      }
      return { ...template.answer, body: template.answer.body.replaceAll(template.reference, reference) };
    },
    async close() {
      await workers.stop();
      await (store as PostgresEventStore).close();
    },
  };
}
