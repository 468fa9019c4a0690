import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { PG_POOL } from '../database/pool.js';

const POLL_MS = 5;
/** How long an HTTP answer waits for the read models to show its own write, unless told otherwise. */
export const PROJECTION_WAIT_MS = 2_000;

/**
 * Read-your-writes across processes: after appending at `position`, a handler waits until the
 * projections it reads from have applied it, so the next read (on any instance) sees the change.
 */
@Injectable()
export class ProjectionWaiter {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  /** True when every named projection reached `position` within `timeoutMs`. */
  async waitFor(names: readonly string[], position: bigint, timeoutMs = PROJECTION_WAIT_MS): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await this.pool.query<{ behind: string }>(
        'select count(*) as behind from unnest($1::text[]) as n(name) left join projection_checkpoints c on c.name = n.name where c.position is null or c.position < $2',
        [names, position.toString()],
      );
      if (Number(rows[0].behind) === 0) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolveWait) => setTimeout(resolveWait, POLL_MS));
    }
  }
}
