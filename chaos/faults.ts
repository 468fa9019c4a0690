/**
 * The faults of a chaos run, injected one after another at random moments while the load runs:
 *   - kill -9 of an API process, started again at once (its checks in flight get no answer);
 *   - kill -9 of the projection worker, started again at once;
 *   - PostgreSQL stopped immediately (`pg_ctl stop -m immediate`: every session cut, no
 *     checkpoint), started again after a random pause;
 *   - a session idle in a transaction that holds a transaction id for 10 s (an operator's psql
 *     left open), which holds back the log's visibility bound; it runs beside the next faults;
 *   - a service session's connection dropped mid-append (`pg_terminate_backend` of a backend
 *     running an append function), or, when none is caught within the hunt, of a busy one;
 *   - kill -9 of the webhook receiver (the integrators' endpoint), started again at once: the
 *     deliveries in flight to it get no answer, those sent before it listens again are refused.
 */
import pg from 'pg';
import type { ChaosCluster } from './cluster.js';
import type { ServiceProcess } from './processes.js';
import type { Random } from './random.js';

export const FAULT_KINDS = [
  'kill -9 of an API process',
  'kill -9 of the projection worker',
  'PostgreSQL stopped immediately',
  'a session idle in transaction for 10 s',
  'a connection dropped mid-append',
  'kill -9 of the webhook receiver',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRecord {
  readonly kind: FaultKind;
  /** Milliseconds since the run began. */
  readonly atMs: number;
  /** What exactly happened (which process, how long down, which statement was cut). */
  detail: string;
  /** How long until the harm was undone (the process or the cluster back); undefined while it lasts. */
  recoveredAfterMs?: number;
  /** The fault could not be injected as meant (said in detail). */
  failed?: boolean;
}

export interface FaultContext {
  readonly cluster: ChaosCluster;
  readonly apis: readonly ServiceProcess[];
  readonly worker: ServiceProcess;
  readonly receiver: ServiceProcess;
  /** The harness's own sessions (application_name `chaos`), never a victim. */
  readonly databaseUrl: () => string;
  readonly random: Random;
  readonly runStartedAt: number;
  readonly log: (line: string) => void;
}

const IDLE_IN_TRANSACTION_MS = 10_000;
/** How long the hunt for an append in flight lasts before it settles for any busy service session. */
const APPEND_HUNT_MS = 5_000;
const sleep = (ms: number) => new Promise<void>((wake) => setTimeout(wake, ms));

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'chaos', connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export class FaultInjector {
  readonly faults: FaultRecord[] = [];
  private idle: Promise<void> | undefined;
  private bag: FaultKind[] = [];

  constructor(private readonly context: FaultContext) {}

  /**
   * Injects faults until `endsAt`: a first one after `warmUpMs`, then one every `gapMs` (a random
   * pause in the range) after the previous one was undone. Kinds come from a shuffled bag holding
   * each kind once, so every kind comes up in turn; the pauses of the first round shrink when
   * needed so that every kind comes up once even in a short run, and on a machine so busy that
   * the faults themselves outlast the run (a restart under load takes seconds) the first round
   * still completes, past `endsAt`, 500 ms apart: the load goes on until this returns.
   */
  async run(endsAt: number, warmUpMs: number, gapMs: { min: number; max: number }): Promise<void> {
    const until = () => Date.now() >= endsAt;
    await this.pause(warmUpMs, until);
    for (let injected = 1; injected <= FAULT_KINDS.length || !until(); injected++) {
      await this.inject(this.nextKind());
      let gap = this.context.random.between(gapMs.min, gapMs.max);
      const firstRoundLeft = FAULT_KINDS.length - injected;
      if (firstRoundLeft > 0) gap = Math.min(gap, Math.max(500, (endsAt - Date.now()) / (firstRoundLeft + 1)));
      await this.pause(gap, firstRoundLeft > 0 ? () => false : until);
    }
  }

  /** Waits for the idle session, if one is open, to end. */
  async settle(): Promise<void> {
    await this.idle;
  }

  private nextKind(): FaultKind {
    if (this.bag.length === 0) this.bag = this.context.random.shuffled(FAULT_KINDS);
    let kind = this.bag.shift() as FaultKind;
    // One idle session at a time: if the last one is still open, its turn goes to the back of the bag.
    if (kind === 'a session idle in transaction for 10 s' && this.idle !== undefined && this.bag.length > 0) {
      this.bag.push(kind);
      kind = this.bag.shift() as FaultKind;
    }
    return kind;
  }

  private async pause(ms: number, until: () => boolean): Promise<void> {
    const end = Date.now() + ms;
    while (!until() && Date.now() < end) await sleep(Math.min(250, end - Date.now()));
  }

  private record(kind: FaultKind, detail: string): FaultRecord {
    const fault: FaultRecord = { kind, atMs: Date.now() - this.context.runStartedAt, detail };
    this.faults.push(fault);
    this.context.log(`fault at ${(fault.atMs / 1_000).toFixed(1)} s: ${kind} (${detail})`);
    return fault;
  }

  private recovered(fault: FaultRecord, detail?: string): void {
    fault.recoveredAfterMs = Date.now() - this.context.runStartedAt - fault.atMs;
    if (detail !== undefined) fault.detail = detail;
  }

  async inject(kind: FaultKind): Promise<void> {
    try {
      switch (kind) {
        case 'kill -9 of an API process':
          return await this.killAndRestart(this.context.random.pick(this.context.apis), kind);
        case 'kill -9 of the projection worker':
          return await this.killAndRestart(this.context.worker, kind);
        case 'PostgreSQL stopped immediately':
          return await this.stopPostgres();
        case 'a session idle in transaction for 10 s':
          return this.idleInTransaction();
        case 'a connection dropped mid-append':
          return await this.dropConnection();
        case 'kill -9 of the webhook receiver':
          return await this.killAndRestart(this.context.receiver, kind);
        default: {
          const _exhaustive: never = kind;
          throw new Error(`unknown fault ${String(_exhaustive)}`);
        }
      }
    } catch (error) {
      const fault = this.faults.at(-1);
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      if (fault !== undefined && fault.kind === kind && fault.recoveredAfterMs === undefined) {
        fault.failed = true;
        fault.detail += `; FAILED: ${message}`;
      } else {
        this.faults.push({ kind, atMs: Date.now() - this.context.runStartedAt, detail: `FAILED: ${message}`, failed: true });
      }
      this.context.log(`fault ${kind} failed: ${message}`);
    }
  }

  private async killAndRestart(target: ServiceProcess, kind: FaultKind): Promise<void> {
    const killed = target.pid;
    const fault = this.record(kind, `${target.name}, pid ${killed}`);
    await target.kill9();
    await target.start();
    this.recovered(fault, `${target.name}: pid ${killed} killed, pid ${target.pid} ready`);
  }

  private async stopPostgres(): Promise<void> {
    const downMs = Math.round(this.context.random.between(1_000, 4_000));
    const fault = this.record('PostgreSQL stopped immediately', `down for ${downMs} ms`);
    await this.context.cluster.crash();
    await sleep(downMs);
    await this.context.cluster.restart();
    this.recovered(fault);
  }

  /** Opens the session and returns at once: it stays idle in its transaction beside the next faults. */
  private idleInTransaction(): void {
    const fault = this.record('a session idle in transaction for 10 s', 'holding a transaction id');
    this.idle = withClient(this.context.databaseUrl(), async (client) => {
      await client.query('begin');
      const { rows } = await client.query<{ xid: string }>('select pg_current_xact_id()::text as xid');
      fault.detail = `xid ${rows[0].xid} held`;
      await sleep(IDLE_IN_TRANSACTION_MS);
      await client.query('commit');
      this.recovered(fault, `xid ${rows[0].xid} held ${IDLE_IN_TRANSACTION_MS / 1_000} s, then committed`);
    })
      .catch((error: unknown) => {
        // PostgreSQL stopped under it, say: the session is gone, which ends the fault too.
        this.recovered(fault, `${fault.detail}; the session ended early: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => (this.idle = undefined));
  }

  private async dropConnection(): Promise<void> {
    const fault = this.record('a connection dropped mid-append', 'hunting an append in flight');
    await withClient(this.context.databaseUrl(), async (client) => {
      const busy = `select pid, left(query, 80) as query from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
           and application_name <> 'chaos' and state = 'active'`;
      const deadline = Date.now() + APPEND_HUNT_MS;
      let victim: { pid: number; query: string } | undefined;
      let midAppend = false;
      while (victim === undefined && Date.now() < deadline) {
        const { rows } = await client.query<{ pid: number; query: string }>(`${busy} and query like '%append_event%'`);
        victim = rows[0];
        midAppend = victim !== undefined;
        if (victim === undefined) await sleep(2);
      }
      if (victim === undefined) victim = (await client.query<{ pid: number; query: string }>(busy)).rows[0];
      if (victim === undefined) {
        fault.detail = 'no service session was busy: nothing dropped';
        fault.failed = true;
        return;
      }
      const { rows } = await client.query<{ done: boolean }>('select pg_terminate_backend($1) as done', [victim.pid]);
      const statement = victim.query.replace(/\s+/g, ' ').slice(0, 60);
      fault.detail = `${midAppend ? 'mid-append' : 'no append caught; a busy session'}: backend ${victim.pid} ${rows[0].done ? 'terminated' : 'already gone'} during "${statement}"`;
    });
    this.recovered(fault);
  }
}
