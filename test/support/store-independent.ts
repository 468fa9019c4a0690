import { describe } from '@jest/globals';
import { testEventStoreKind, type TestEventStoreKind } from './event-store.js';

/**
 * `describe` for a suite that runs on one jest project only (`integration` is the postgres event
 * store, `integration-esdb` EventStoreDB); on the other it is reported as skipped, with the reason
 * in its title.
 */
export function describeOnProject(kind: TestEventStoreKind, title: string, reason: string, suite: () => void): void {
  if (testEventStoreKind() !== kind) {
    describe.skip(`${title} [skipped on integration${kind === 'postgres' ? '-esdb' : ''}: ${reason}]`, suite);
    return;
  }
  describe(title, suite);
}

/**
 * For a suite whose subject does not depend on the event store (the HTTP surface, the rate
 * limiter): it runs on the `integration` project only, so the run does not pay for it twice.
 */
export function describeOnPostgresProjectOnly(title: string, reason: string, suite: () => void): void {
  describeOnProject('postgres', title, reason, suite);
}
