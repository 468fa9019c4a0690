import pg from 'pg';
import { isConnectionError } from './connection-errors.js';

/**
 * A few sessions kept beside a pool for one kind of statement, handed over at once when one is
 * idle.
 *
 * `pg.Pool` hands an idle session over a tick later (`process.nextTick`, then its queue, then a
 * promise), and a tick scheduled from a promise's continuation runs only once every continuation
 * queued by then has run. Under load that is most of a turn of the event loop, and doubling the
 * pool's size does not shorten it, whereas a session kept here is handed over at once (bench:api,
 * docs/benchmarks.md, shows the wallet's queue this feeds). The appends are what a wallet's commands wait on one batch after
 * the other, so that wait was paid once per batch by every check.
 *
 * At most `max` sessions are kept (the callers' concurrency: the group commit's batches in flight).
 * A call made while all of them are busy (a failed batch retried append by append) takes a session
 * from the pool instead. A session whose connection failed is closed and replaced by the next call;
 * one that errors while idle is dropped at once, never crashing the process.
 */
export class KeptSessions {
  private readonly idle: pg.Client[] = [];
  /** Sessions whose connection reported an error: closed when their call ends, never reused. */
  private readonly failed = new WeakSet<pg.Client>();
  private open = 0;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly max: number,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('max must be a positive integer');
  }

  /** Runs `work` on a kept session (or, all of them busy, a pooled one), which no other call uses meanwhile. */
  async use<T>(work: (session: pg.ClientBase) => Promise<T>): Promise<T> {
    const kept = this.idle.pop() ?? (this.open < this.max && !this.closed ? await this.connect() : undefined);
    const session = kept ?? (await this.pool.connect());
    let broken = false;
    try {
      return await work(session);
    } catch (error) {
      broken = isConnectionError(error);
      throw error;
    } finally {
      if (kept === undefined) (session as pg.PoolClient).release(broken);
      else if (broken || this.closed || this.failed.has(kept)) this.drop(kept);
      else this.idle.push(kept);
    }
  }

  /** Closes the idle sessions; one in use is closed when its call ends. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((session) => this.end(session)));
  }

  private async connect(): Promise<pg.Client> {
    this.open += 1;
    // The pool's own settings: the same server, credentials and session options.
    const session = new pg.Client(this.pool.options);
    session.on('error', () => {
      this.failed.add(session);
      // Lost while idle: drop it; the next call opens another (one in a call is dropped when the call ends).
      const at = this.idle.indexOf(session);
      if (at >= 0) {
        this.idle.splice(at, 1);
        this.drop(session);
      }
    });
    try {
      await session.connect();
    } catch (error) {
      this.open -= 1;
      await session.end().catch(() => undefined);
      throw error;
    }
    return session;
  }

  private drop(session: pg.Client): void {
    this.open -= 1;
    void this.end(session);
  }

  private async end(session: pg.Client): Promise<void> {
    await session.end().catch(() => undefined);
  }
}
