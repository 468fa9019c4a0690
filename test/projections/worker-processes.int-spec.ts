import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import type { EventStore } from '../../src/event-store/event-store.port.js';
import { PROJECTIONS } from '../../projections/index.js';
import { rebuildProjection } from '../../projections/rebuild/rebuild.js';
import { checkpointOf, waitUntil } from '../../projections/runner/counting.projection.testing.js';
import { writeSampleLog } from '../../src/event-store/postgres-sample-log.testing.js';
import { readActiveWorkers, readProjectionStatus } from '../../projections/status/projection-status.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createTestEventStore, DEFAULT_TEST_READ_LAG_MS, testEventStoreControl, type TestEventStore } from '../support/event-store.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { DIST, exited } from '../support/processes.js';

// The global setup built dist/ from the current sources.
const CLI = DIST.projections;

let database: TestDatabase;
let pool: pg.Pool;
let testStore: TestEventStore;
let store: EventStore;
let dataDir: string;
const workers: ChildProcess[] = [];
const output = new Map<number, string>();

function startWorker(): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'run'], {
    env: { PATH: process.env.PATH, ...testStore.env, DATABASE_URL: database.url, DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY, DATA_DIR: dataDir, DB_POOL_SIZE: '6' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid ?? 0;
  output.set(pid, '');
  const collect = (chunk: Buffer) => output.set(pid, `${output.get(pid) ?? ''}${chunk.toString()}`.slice(-20_000));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  workers.push(child);
  return child;
}

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 10 });
  testStore = await createTestEventStore(database, pool);
  store = testStore.store;
  dataDir = await mkdtemp(join(tmpdir(), 'ledger-workers-'));
});

afterAll(async () => {
  for (const child of workers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(workers.map(exited));
  await testStore.close();
  await pool.end();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

// The waits below are bounded on their own (30 s to start, 10 s to take over, 90 s to catch up),
// which already sum past the project's 120 s test timeout; with the sample log and the five rebuilds,
// this is the whole test's bound.
const TEST_TIMEOUT_MS = 240_000;

describe('Given two worker processes on a backlog', () => {
  it(
    'after kill -9 of the active one mid-batch, the standby takes over within seconds and the rows equal a clean rebuild',
    async () => {
      expect(PROJECTIONS.length).toBeGreaterThan(0);
      // The backlog is written with the EventStoreDB test server's index lag off: its thousands of
      // appends, one after the other, would each wait for it. The workers then read it with the lag on.
      // On EventStoreDB half as long: read with that lag, it still takes the workers seconds, where the
      // full size made this suite take over four minutes beside the rest of `npm test` on a slow machine.
      const control = await testEventStoreControl(database);
      await control?.configure({ readLagMs: 0 });
      const { lastPosition } = await writeSampleLog(pool, { organizations: 20, verifications: store.kind === 'esdb' ? 1_500 : 3_000, store });
      await control?.configure({ readLagMs: DEFAULT_TEST_READ_LAG_MS });
      const first = startWorker();
      const second = startWorker();
      const pids = [first.pid, second.pid];

      // Mid-catch-up of the largest projection: some events applied, most not. Polled on PostgreSQL
      // alone: the full status also reads the event log for the lag, which this wait does not need.
      const target = 'verifications';
      const positionOf = async (name: string) => (await checkpointOf(pool, name))?.position ?? 0n;
      let victimPid = 0;
      await waitUntil(
        async () => {
          const pid = (await readActiveWorkers(pool, PROJECTIONS)).get(target);
          if (pid == null || (await positionOf(target)) === 0n) return false;
          victimPid = pid;
          return true;
        },
        30_000,
        `a worker to start applying ${target}`,
      );
      const positionAtKill = await positionOf(target);
      expect(positionAtKill).toBeLessThan(lastPosition);
      const victim = workers.find((child) => child.pid === victimPid);
      expect(victim).toBeDefined();
      victim?.kill('SIGKILL');
      await exited(victim as ChildProcess);
      const survivorPid = pids.find((pid) => pid !== victimPid);

      // Measured on the lock holders alone: the full status also computes lag, whose cost depends on
      // the event store (a client-side scan on EventStoreDB) and is not part of the takeover.
      const takeoverMs = await waitUntil(
        async () => {
          const active = await readActiveWorkers(pool, PROJECTIONS);
          return PROJECTIONS.every((projection) => active.get(projection.name) === survivorPid);
        },
        10_000,
        'the standby to take every projection over',
      );
      expect(takeoverMs).toBeLessThan(5_000);
      await waitUntil(
        async () => (await readProjectionStatus(pool, store, PROJECTIONS)).every((status) => BigInt(status.position) >= lastPosition || status.lagEvents === 0),
        90_000,
        'the survivor to catch up',
        250,
      );
      const statuses = await readProjectionStatus(pool, store, PROJECTIONS);
      expect(statuses.map((status) => [status.name, status.state, status.lagEvents])).toEqual(PROJECTIONS.map((projection) => [projection.name, 'running', 0]));

      const survivor = workers.find((child) => child.pid === survivorPid) as ChildProcess;
      survivor.kill('SIGTERM');
      await exited(survivor);
      expect({ code: survivor.exitCode, output: survivor.exitCode === 0 ? '' : output.get(survivorPid ?? 0) }).toEqual({ code: 0, output: '' });

      // A clean replay of the whole log into shadow tables must match what the workers left, row for row.
      for (const projection of PROJECTIONS) {
        const result = await rebuildProjection(pool, store, database.url, projection, { verify: true, strict: true, maxBatch: 1_000 });
        const differing = (result.differences ?? []).filter((difference) => difference.onlyLive > 0 || difference.onlyRebuilt > 0);
        expect({ projection: projection.name, differing }).toEqual({ projection: projection.name, differing: [] });
        expect(result.outcome).toBe('swapped');
      }
    },
    TEST_TIMEOUT_MS,
  );
});
