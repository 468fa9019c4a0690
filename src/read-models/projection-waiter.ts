import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { PG_POOL } from '../database/pool.js';

const POLL_MS = 5;
/** How long an HTTP answer waits for the read models to show its own write, unless told otherwise. */
export const PROJECTION_WAIT_MS = 2_000;

interface Waiter {
  readonly names: readonly string[];
  readonly position: bigint;
  readonly deadline: number;
  /** The number of checkpoint queries started before this waiter came: only a later one may time it out. */
  readonly after: number;
  readonly resolve: (reached: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Read-your-writes across processes: after appending at `position`, a handler waits until the
 * projections it reads from have applied it, so the next read (on any instance) sees the change.
 *
 * A projection's checkpoint is the position of the last event it applied and only moves forwards,
 * so the highest checkpoint seen here answers, with no query, every wait for a position at or
 * below it (most reads). The others share one poll of `projection_checkpoints` every 5 ms, however
 * many are waiting.
 *
 * Only moves forwards, that is, while PostgreSQL keeps what it acknowledged: projection batches
 * commit asynchronously, so a crash of the server can lose the last one, rows and checkpoint
 * together. A crash ends every connection, so whenever a connection of the pool fails or a new one
 * is made, the checkpoints seen so far are forgotten and the next wait reads them again.
 */
@Injectable()
export class ProjectionWaiter {
  private readonly seen = new Map<string, bigint>();
  private readonly waiters = new Set<Waiter>();
  private queries = 0;
  private polling = false;
  /** Counts the times the checkpoints seen were forgotten: a poll started before one of them does not remember what it read. */
  private generation = 0;

  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {
    const forget = () => this.forget();
    pool.on('connect', (client) => {
      forget();
      client.on('error', forget);
      client.on('end', forget);
    });
    pool.on('error', forget);
  }

  /** The checkpoints seen may belong to a server that has since lost them: read them again. */
  private forget(): void {
    this.generation += 1;
    this.seen.clear();
  }

  /** True when every named projection reached `position` within `timeoutMs` (checked at least once, even for 0). */
  waitFor(names: readonly string[], position: bigint, timeoutMs = PROJECTION_WAIT_MS): Promise<boolean> {
    if (this.reached(names, position)) return Promise.resolve(true);
    return new Promise<boolean>((resolve, reject) => {
      this.waiters.add({ names, position, deadline: Date.now() + timeoutMs, after: this.queries, resolve, reject });
      void this.poll();
    });
  }

  /** True when every named projection is known, with no query, to have reached `position`: a read need not wait at all. */
  reached(names: readonly string[], position: bigint): boolean {
    return names.every((name) => (this.seen.get(name) ?? -1n) >= position);
  }

  /** One loop per process while anyone waits: read every checkpoint, settle the waiters it answers, pause, again. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      while (this.waiters.size > 0) {
        const query = ++this.queries;
        const generation = this.generation;
        let rows: { name: string; position: string }[];
        try {
          ({ rows } = await this.pool.query<{ name: string; position: string }>('select name, position from projection_checkpoints'));
        } catch (error) {
          this.forget();
          for (const waiter of this.waiters) waiter.reject(error);
          this.waiters.clear();
          return;
        }
        // Read across a lost connection, the answer may come from before the loss: the next poll reads again.
        if (generation === this.generation) {
          for (const row of rows) {
            const position = BigInt(row.position);
            if (position > (this.seen.get(row.name) ?? -1n)) this.seen.set(row.name, position);
          }
        }
        const now = Date.now();
        for (const waiter of this.waiters) {
          const reached = this.reached(waiter.names, waiter.position);
          if (reached || (now >= waiter.deadline && query > waiter.after)) {
            this.waiters.delete(waiter);
            waiter.resolve(reached);
          }
        }
        if (this.waiters.size > 0) await new Promise((wake) => setTimeout(wake, POLL_MS));
      }
    } finally {
      this.polling = false;
    }
  }
}
