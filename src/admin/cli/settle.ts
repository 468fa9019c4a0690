import type { INestApplicationContext } from '@nestjs/common';
import type pg from 'pg';
import { KEY_CACHE_TTL_MS } from '../../auth/key-cache.js';
import type { AppConfig } from '../../config/config.js';
import { CONFIG } from '../../config/runtime.js';
import { PG_POOL } from '../../database/pool.js';
import { ORGANIZATION_PROJECTIONS } from '../../organizations/organization.store.js';
import { ProjectionWaiter } from '../../read-models/projection-waiter.js';
import { PROJECTIONS } from '../../../projections/index.js';
import { readActiveWorkers } from '../../../projections/status/projection-status.js';

export interface Settlement {
  /** in_force: on every instance; no_worker: recorded, applied when a worker runs; behind: a worker runs but did not apply it in time. */
  readonly state: 'in_force' | 'no_worker' | 'behind';
  readonly message: string;
}

/**
 * The CLI runs no projection worker: the service's workers (or `npm run projections`) apply its
 * changes to the read models the key guard reads. So a command that changed an organization waits
 * here until they passed its position, then waits out the key cache's TTL, after which no instance
 * still trusts an authorisation it read before the change.
 */
export async function settle(app: INestApplicationContext, position: bigint): Promise<Settlement> {
  const pool = app.get<symbol, pg.Pool>(PG_POOL);
  // As long as an operator's change over HTTP waits (OPERATOR_CHANGE_WAIT_MS).
  const waitMs = app.get<symbol, AppConfig>(CONFIG).admin.changeWaitMs;
  const waiter = new ProjectionWaiter(pool);
  const at = `position ${position}`;
  if (!(await waiter.waitFor(ORGANIZATION_PROJECTIONS, position, 0))) {
    const workers = await readActiveWorkers(
      pool,
      PROJECTIONS.filter((projection) => (ORGANIZATION_PROJECTIONS as readonly string[]).includes(projection.name)),
    );
    if (workers.size < ORGANIZATION_PROJECTIONS.length) {
      return {
        state: 'no_worker',
        message:
          `Recorded (${at}). No projection worker is running for ${ORGANIZATION_PROJECTIONS.join(' and ')} (the service is stopped, ` +
          'or runs with RUN_PROJECTIONS=false and no `npm run projections`): the change takes effect as soon as one runs and applies it.',
      };
    }
    if (!(await waiter.waitFor(ORGANIZATION_PROJECTIONS, position, waitMs))) {
      return {
        state: 'behind',
        message:
          `Recorded (${at}), but the read models did not apply it within ${waitMs / 1_000} s: the service may act on the ` +
          'previous state until they do. See `npm run projections:status`; repeating the command is safe.',
      };
    }
  }
  await new Promise((wake) => setTimeout(wake, KEY_CACHE_TTL_MS));
  return {
    state: 'in_force',
    message: `In force on every instance of the service (read models at ${at}; an instance trusts what it read about a key for at most ${KEY_CACHE_TTL_MS} ms, waited out here).`,
  };
}
