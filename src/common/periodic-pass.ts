import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Clock } from './clock.js';

/**
 * A background pass run every `intervalMs` (never two at once: a tick that finds one running skips)
 * and on demand, where concurrent callers share the running pass. The timer never holds the
 * process open; `stop` waits for the pass under way.
 */
export class PeriodicPass<R> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<R> | undefined;

  constructor(
    private readonly pass: (now: Date) => Promise<R>,
    private readonly onTickFailure: (error: unknown) => void,
  ) {}

  start(intervalMs: number, now: () => Date): void {
    this.timer = setInterval(() => {
      if (this.running !== undefined) return;
      this.run(now()).catch(this.onTickFailure);
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  run(now: Date): Promise<R> {
    this.running ??= this.pass(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }
}

/**
 * A service whose `pass` runs every `intervalMs` from the application's start until its shutdown
 * (a PeriodicPass tied to the Nest lifecycle), and on demand through `runOnce`.
 */
export abstract class PeriodicSweep<R> implements OnApplicationBootstrap, OnModuleDestroy {
  protected readonly logger: Logger;
  private readonly passes: PeriodicPass<R>;

  /** `context`: the logger's; `name`: the pass's in its messages (`A <name> pass failed; the next one retries`). */
  protected constructor(
    context: string,
    name: string,
    private readonly intervalMs: number,
    private readonly sweepClock: Clock,
  ) {
    this.logger = new Logger(context);
    this.passes = new PeriodicPass<R>(
      (now) => this.pass(now),
      () => this.logger.warn(`A ${name} pass failed; the next one retries`),
    );
  }

  protected abstract pass(now: Date): Promise<R>;

  onApplicationBootstrap(): void {
    this.passes.start(this.intervalMs, () => this.sweepClock.now());
  }

  async onModuleDestroy(): Promise<void> {
    await this.passes.stop();
  }

  /** One pass; `now` lets tests move past the deadline without waiting. Concurrent calls share one pass. */
  runOnce(now: Date = this.sweepClock.now()): Promise<R> {
    return this.passes.run(now);
  }
}
