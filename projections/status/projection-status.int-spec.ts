import { expect, it } from '@jest/globals';
import type pg from 'pg';
import type { EventStore, LogReader } from '../../src/event-store/event-store.port.js';
import { useTestEventStore } from '../../test/support/event-store.js';
import { describeOnProject } from '../../test/support/store-independent.js';
import { appendCounted, checkpointOf, countingProjection, createCountingTable, waitUntil } from '../runner/counting.projection.testing.js';
import { ProjectionRunner } from '../runner/projection-runner.js';
import { readProjectionStatus } from './projection-status.js';

const db = useTestEventStore({ poolSize: 6 });

/** Another pool object over the same sessions: the status keeps its counts per pool, so reads through a new one count from scratch. */
function poolAlias(pool: pg.Pool): pg.Pool {
  return { query: (text: string, values?: unknown[]) => pool.query(text, values) } as unknown as pg.Pool;
}

/** The store, its log reader noting where each count of a projection's lag starts (LogReader.pendingEvents). */
function noteScans(store: EventStore, starts: bigint[]): EventStore {
  const log = store.logReader;
  if (log === undefined) throw new Error('the PostgreSQL store has a log reader');
  const logReader: LogReader = {
    ...log,
    pendingEvents: (categories, window) => {
      starts.push(window.from);
      return log.pendingEvents(categories, window);
    },
  };
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'logReader') return logReader;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describeOnProject(
  'postgres',
  'Given a projection whose category is rare among the events written after its checkpoint',
  'the lag is counted on the PostgreSQL log only (null on EventStoreDB)',
  () => {
    it('counts its events exactly at every status read, each read from the same checkpoint scanning only what was written since the last', async () => {
      const projection = countingProjection('rare-lag');
      const other = countingProjection('busy-lag');
      await createCountingTable(db.pool, projection);
      const starts: bigint[] = [];
      const pool = poolAlias(db.pool);
      const store = noteScans(db.store, starts);
      // Each read's lag beside one counted from scratch (a pool this process has not counted on before).
      const untilVisible = async (position: bigint) => {
        for (const deadline = Date.now() + 30_000; (await db.store.headPosition()) < position;) {
          if (Date.now() > deadline) throw new Error(`the visible head did not reach ${position} within 30 s`);
          await new Promise((resolveWait) => setTimeout(resolveWait, 50));
        }
      };
      const lagNow = async () => {
        const [continued] = await readProjectionStatus(pool, store, [projection]);
        const [fresh] = await readProjectionStatus(poolAlias(db.pool), db.store, [projection]);
        expect(continued.lagEvents).toBe(fresh.lagEvents);
        return continued;
      };

      await appendCounted(db.store, projection.category, { streams: 1, perStream: 3 });
      const firstHead = await appendCounted(db.store, other.category, { streams: 5, perStream: 20 });
      // A read counts on only up to the visible head, which a transaction still open anywhere on the cluster (another suite's) holds back:
      // each read below waits for the head to pass what was just appended.
      await untilVisible(firstHead);
      expect((await lagNow()).lagEvents).toBe(3);
      expect(starts).toEqual([0n]);

      await appendCounted(db.store, other.category, { streams: 10, perStream: 20, firstStream: 5 });
      await untilVisible(await appendCounted(db.store, projection.category, { streams: 1, perStream: 2, firstStream: 1 }));
      const second = await lagNow();
      expect(second).toMatchObject({ lagEvents: 5, lagEventsCapped: false });
      expect(second.lagSeconds).toBeGreaterThanOrEqual(0);
      // The second read went on from the first's head, not from the checkpoint.
      expect(starts[1]).toBeGreaterThanOrEqual(firstHead);

      const runner = new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 100, maxAttempts: 3 });
      runner.start();
      let rareHead: bigint | undefined;
      try {
        rareHead = (await db.store.readAll({ fromPosition: 0n, maxCount: 1_000, filter: { streamCategories: [projection.category] } })).at(-1)?.position;
        await waitUntil(async () => (await checkpointOf(db.pool, projection.name))?.position === rareHead, 10_000, 'the checkpoint to reach the rare events');
      } finally {
        await runner.stop();
      }
      // At the newest event: nothing to count.
      expect((await lagNow()).lagEvents).toBe(0);
      expect(starts).toHaveLength(2);

      const thirdHead = await appendCounted(db.store, other.category, { streams: 5, perStream: 20, firstStream: 15 });
      await untilVisible(thirdHead);
      expect((await lagNow()).lagEvents).toBe(0);
      // The checkpoint moved since the last count: counted again from it.
      expect(starts[2]).toBe(rareHead);
      await untilVisible(await appendCounted(db.store, projection.category, { streams: 1, perStream: 1, firstStream: 2 }));
      const last = await lagNow();
      expect(last.lagEvents).toBe(1);
      expect(last.lagSeconds).toBeGreaterThanOrEqual(0);
      expect(starts[3]).toBeGreaterThanOrEqual(thirdHead);
    });
  },
);
