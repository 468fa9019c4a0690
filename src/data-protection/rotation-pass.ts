import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { InvariantViolated } from '../common/errors.js';
import { type DataKeys, DEFAULT_CACHE_LIMITS, type IndexKeyVersion } from './data-keys.js';

export interface RetokeniseProgress {
  /** Rows re-keyed by this run. */
  readonly done: number;
  /** done, plus those still under the retiring key. */
  readonly total: number;
}

export interface RetokeniseSummary {
  /** The index key's version every token is under once the pass is over (null: the scope has no keys). */
  readonly version: number | null;
  readonly retokenised: number;
  /** The retiring version was destroyed: the rotation is over. */
  readonly retired: boolean;
  /** Stopped by its signal before the end: run it again to go on. */
  readonly interrupted: boolean;
}

export interface RotationPassOptions {
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: RetokeniseProgress) => void;
}

export const DEFAULT_RETOKENISE_BATCH = 200;
export const MAX_RETOKENISE_BATCH = 2_000;
/** How long after a rotation every instance has dropped the index key it had cached (their cache's lifetime, and a margin). */
export const DEFAULT_SETTLE_MS = DEFAULT_CACHE_LIMITS.ttlMs + 5_000;

/** What one kind of rows does in a rotation pass, under the rotation's current and retiring keys. */
export interface RotationSteps {
  /** Rows still under the retiring key. */
  count(): Promise<number>;
  /** Re-keys the next rows after `cursor` (at most `batchSize`, in one transaction); answers how many and the last one's key, or null when none is left. */
  rekeyAfter(cursor: string, batchSize: number): Promise<{ readonly rows: number; readonly last: string } | null>;
  /** Destroys the retiring key if no row is left under it (checked in the same transaction); false when one appeared meanwhile. */
  retire(): Promise<boolean>;
  /** What a stray row under a retired key is called, for the error after repeated scans. */
  readonly strays: string;
}

/**
 * The pass that ends a rotation of the index key of `scope` (DataKeys.rotateIndexKey): the rows still
 * keyed under the retiring key are re-keyed under the current one, a batch per transaction, in key
 * order, from where a stopped run ended. Once none is left, and every instance has had time to drop
 * the old key from its cache (a straggler written under it is found by one last scan from the start),
 * the retiring key is destroyed. The blind-index tokens of checks and the console's email lookup keys
 * rotate through it (IndexKeyRotation, ContactKeyRotation).
 */
export async function runRotationPass(
  pool: pg.Pool,
  keys: DataKeys,
  scope: string,
  { batchSize = DEFAULT_RETOKENISE_BATCH, signal, onProgress }: RotationPassOptions,
  timing: { readonly settleMs?: number; readonly now?: () => number },
  stepsOf: (rotation: { readonly current: IndexKeyVersion; readonly retiring: IndexKeyVersion }) => RotationSteps,
): Promise<RetokeniseSummary> {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_RETOKENISE_BATCH) throw new RangeError(`batchSize is 1 to ${MAX_RETOKENISE_BATCH}`);
  const rotation = await keys.indexRotation(scope);
  if (rotation === undefined) {
    const { rows } = await pool.query<{ index_version: number }>('select index_version from organization_keys where organization_id = $1', [scope]);
    return { version: rows[0]?.index_version ?? null, retokenised: 0, retired: true, interrupted: false };
  }
  const { current, retiring } = rotation;
  const steps = stepsOf(rotation);
  const now = timing.now ?? Date.now;
  const settledAt = rotation.rotatedAt.getTime() + (timing.settleMs ?? DEFAULT_SETTLE_MS);
  const stopped = (done: number): RetokeniseSummary => ({ version: current.version, retokenised: done, retired: false, interrupted: true });
  let cursor = rotation.cursor ?? '';
  let done = 0;
  let rescans = 0;
  try {
    let total = await steps.count();
    onProgress?.({ done, total });
    for (;;) {
      if (signal?.aborted === true) return stopped(done);
      const batch = await steps.rekeyAfter(cursor, batchSize);
      if (batch !== null) {
        cursor = batch.last;
        done += batch.rows;
        total = Math.max(total, done);
        onProgress?.({ done, total });
        continue;
      }
      // Nothing left past the cursor: wait until no instance can still write under the old key, scan once more from the start, then retire it.
      if (now() < settledAt) {
        try {
          await sleep(settledAt - now(), undefined, { signal });
        } catch {
          return stopped(done);
        }
      }
      if (cursor !== '' && rescans === 0) {
        cursor = '';
        rescans++;
        continue;
      }
      if (await steps.retire()) return { version: current.version, retokenised: done, retired: true, interrupted: false };
      if (++rescans > 3) throw new InvariantViolated(`${steps.strays} under a retired key keep appearing`);
      cursor = '';
    }
  } finally {
    current.key.fill(0);
    retiring.key.fill(0);
  }
}
