/** Length of the sliding window over which events/s is computed. */
export const RATE_WINDOW_MS = 10_000;
const BUCKET_MS = 1_000;
const BUCKETS = RATE_WINDOW_MS / BUCKET_MS;

export type RunnerState = 'starting' | 'catching_up' | 'running' | 'stopped';

/** Live figures of one runner: events/s over a sliding window, last event applied, state. */
export class RunnerMetrics {
  private readonly counts = new Array<number>(BUCKETS).fill(0);
  private readonly bucketIds = new Array<number>(BUCKETS).fill(-1);
  private readonly startedAtMs: number;
  state: RunnerState = 'starting';
  position = 0n;
  eventsApplied = 0;
  lastEventAt: Date | undefined;
  lastBatchSize = 0;
  error: { message: string; position: bigint } | undefined;

  constructor(private readonly now: () => number = Date.now) {
    this.startedAtMs = now();
  }

  recordBatch(events: number, lastPosition: bigint, lastEventAt: Date, caughtUp: boolean): void {
    const bucket = Math.floor(this.now() / BUCKET_MS);
    const slot = bucket % BUCKETS;
    if (this.bucketIds[slot] !== bucket) {
      this.bucketIds[slot] = bucket;
      this.counts[slot] = 0;
    }
    this.counts[slot] += events;
    this.eventsApplied += events;
    this.position = lastPosition;
    this.lastEventAt = lastEventAt;
    this.lastBatchSize = events;
    this.state = caughtUp ? 'running' : 'catching_up';
  }

  recordStop(message: string, position: bigint): void {
    this.state = 'stopped';
    this.error = { message, position };
  }

  /** Events per second over the last RATE_WINDOW_MS (or since start, when younger). */
  eventsPerSecond(): number {
    const nowMs = this.now();
    const current = Math.floor(nowMs / BUCKET_MS);
    let total = 0;
    for (let slot = 0; slot < BUCKETS; slot++) {
      if (this.bucketIds[slot] > current - BUCKETS) total += this.counts[slot];
    }
    const windowMs = Math.min(RATE_WINDOW_MS, Math.max(BUCKET_MS, nowMs - this.startedAtMs));
    return (total * 1000) / windowMs;
  }
}
