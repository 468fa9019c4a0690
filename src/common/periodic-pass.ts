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
