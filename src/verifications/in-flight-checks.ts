import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';

/** How long shutdown waits for checks in flight, beyond the provider timeout. */
const SHUTDOWN_GRACE_MS = 5_000;

/** Checks in flight in this process, so shutdown lets them finish (bounded) before the stores close. */
@Injectable()
export class InFlightChecks implements BeforeApplicationShutdown {
  private count = 0;
  private waiters: (() => void)[] = [];

  constructor(@Inject(CONFIG) private readonly config: AppConfig) {}

  async track<T>(work: () => Promise<T>): Promise<T> {
    this.count += 1;
    try {
      return await work();
    } finally {
      this.count -= 1;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    }
  }

  get size(): number {
    return this.count;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.count === 0) return;
    const limitMs = this.config.verifications.providerTimeoutMs + SHUTDOWN_GRACE_MS;
    await Promise.race([new Promise<void>((wake) => this.waiters.push(wake)), new Promise<void>((wake) => setTimeout(wake, limitMs).unref())]);
  }
}
