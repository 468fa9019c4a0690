import { describe, expect, it } from '@jest/globals';
import { expectedLagEvents, testEventStoreKind, useTestEventStore } from '../../test/support/event-store.js';
import { readProjectionStatus } from '../status/projection-status.js';
import { actualCounts, appendCounted, checkpointOf, countingProjection, createCountingTable, expectedCounts, waitUntil } from './counting.projection.testing.js';
import { ProjectionRunner, ProjectionStoppedError } from './projection-runner.js';
import { ProjectionWorker } from './projection-worker.js';

const db = useTestEventStore({ poolSize: 10 });

describe('Given a backlog of 1,200 events', () => {
  it('catches up in batches of at most maxBatch, each committing rows and checkpoint together', async () => {
    const projection = countingProjection('batching');
    await createCountingTable(db.pool, projection);
    const head = await appendCounted(db.store, projection.category, { streams: 40, perStream: 30 });
    const batches: number[] = [];
    const runner = new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 100, maxAttempts: 3, onBatch: ({ size }) => batches.push(size) });
    runner.start();
    await waitUntil(async () => (await checkpointOf(db.pool, 'batching'))?.position === head, 20_000, 'the checkpoint to reach the head');
    await runner.stop();

    expect(Math.max(...batches)).toBeLessThanOrEqual(100);
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(1_200);
    // Catch-up means large batches, not event by event.
    expect(batches.length).toBeLessThan(40);
    expect(await actualCounts(db.pool, projection.table)).toEqual(await expectedCounts(db.store, projection.category));
    expect(await checkpointOf(db.pool, 'batching')).toMatchObject({ state: 'running', eventsProcessed: 1_200, position: head });
  });
});

describe('When one read brings several events while the runner is live', () => {
  it('applies them in one batch, not the first alone and then the rest', async () => {
    const projection = countingProjection('burst');
    await createCountingTable(db.pool, projection);
    const batches: number[] = [];
    const runner = new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 100, maxAttempts: 3, onBatch: ({ size }) => batches.push(size) });
    runner.start();
    const first = await appendCounted(db.store, projection.category, { streams: 1, perStream: 1 });
    await waitUntil(async () => (await checkpointOf(db.pool, 'burst'))?.position === first, 10_000, 'the first event');
    // One append: one transaction, visible and read together.
    const head = await appendCounted(db.store, projection.category, { streams: 1, perStream: 25, firstStream: 1 });
    await waitUntil(async () => (await checkpointOf(db.pool, 'burst'))?.position === head, 10_000, 'the 25 events');
    await runner.stop();

    expect(await actualCounts(db.pool, projection.table)).toEqual({ 'burst-0': 1, 'burst-1': 25 });
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(26);
    if (testEventStoreKind() === 'postgres') {
      expect(batches).toEqual([1, 25]);
    } else {
      // The EventStoreDB test server (a process of its own) streams a read in gRPC frames that can
      // arrive further apart than the runner waits for them: not event by event, at most a few batches.
      expect(batches.length).toBeLessThanOrEqual(5);
    }
  });
});

describe('When a handler keeps throwing at one event in the middle of a batch', () => {
  it('retries a bounded number of times, keeps the events before it, and stops at it with the error recorded', async () => {
    const attempts: number[] = [];
    const projection = countingProjection('poisoned', {
      fail: (event) => {
        if (event.data.poison !== true) return false;
        attempts.push(Date.now());
        return true;
      },
    });
    await createCountingTable(db.pool, projection);
    await appendCounted(db.store, projection.category, { streams: 10, perStream: 30, data: (stream, index) => ({ poison: stream === 5 && index === 0 }) });
    // readAll gives the log's stable prefix: an append's events can stay hidden for a moment behind
    // an older transaction still committing (on PostgreSQL, the NOTIFY that announces appends).
    let log: Awaited<ReturnType<typeof db.store.readAll>> = [];
    await waitUntil(
      async () => (log = await db.store.readAll({ maxCount: 10_000, filter: { streamCategories: [projection.category] } })).length === 300,
      5_000,
      'the 300 events to be readable',
    );
    const [poison] = log.filter((event) => event.data.poison === true);
    const before = log.filter((event) => event.position < poison.position);

    const runner = new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 100, maxAttempts: 3, retryBaseMs: 5 });
    runner.start();
    const failure = await runner.finished.then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(failure).toBeInstanceOf(ProjectionStoppedError);
    expect((failure as ProjectionStoppedError).position).toBe(poison.position);
    // One attempt inside the failed batch, then maxAttempts on its own.
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.length).toBeLessThanOrEqual(4);
    const checkpoint = await checkpointOf(db.pool, 'poisoned');
    expect(checkpoint).toMatchObject({ state: 'stopped', failedPosition: poison.position, position: before[before.length - 1].position });
    expect(checkpoint?.error).toContain('Counted at position');
    expect(checkpoint?.error).toContain('failed after 3 attempts');
    // Exactly the events before it, once each: the failed batch left nothing behind, nor did the culprit.
    const counts = await actualCounts(db.pool, projection.table);
    expect(Object.values(counts).reduce((sum, count) => sum + count, 0)).toBe(before.length);
    expect(counts['poisoned-5']).toBeUndefined();

    const [status] = await readProjectionStatus(db.pool, db.store, [projection]);
    expect(status).toMatchObject({
      name: 'poisoned',
      state: 'stopped',
      error: { failedPosition: poison.position.toString() },
      lagEvents: expectedLagEvents(db.store, 300 - before.length),
    });
  });

  it('a failure that goes away on retry loses and doubles nothing', async () => {
    let failures = 0;
    const projection = countingProjection('transient', { fail: (event) => event.data.flaky === true && failures++ < 2 });
    await createCountingTable(db.pool, projection);
    const head = await appendCounted(db.store, projection.category, { streams: 10, perStream: 50, data: (stream, index) => ({ flaky: stream === 3 && index === 20 }) });
    const runner = new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 100, maxAttempts: 5, retryBaseMs: 5 });
    runner.start();
    await waitUntil(async () => (await checkpointOf(db.pool, 'transient'))?.position === head, 20_000, 'the checkpoint to reach the head');
    await runner.stop();
    expect(failures).toBe(3);
    expect(await actualCounts(db.pool, projection.table)).toEqual(await expectedCounts(db.store, projection.category));
    expect((await checkpointOf(db.pool, 'transient'))?.state).toBe('running');
  });
});

describe("When the checkpoint moves under a batch in flight (as a rebuild's swap moves it)", () => {
  it('rolls the batch back, rows and all, and resumes from the moved checkpoint', async () => {
    let head = 0n;
    let moved = false;
    const projection = countingProjection('moved', {
      before: async (event) => {
        if (event.data.move !== true || moved) return;
        moved = true;
        // Another session moves the row, as a swap does, while this batch is open.
        await db.pool.query('update projection_checkpoints set position = $2 where name = $1', ['moved', head.toString()]);
      },
    });
    await createCountingTable(db.pool, projection);
    head = await appendCounted(db.store, projection.category, { streams: 10, perStream: 10, data: (stream, index) => ({ move: stream === 5 && index === 0 }) });
    const committed: number[] = [];
    const runner = new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 1_000, maxAttempts: 3, onBatch: ({ size }) => committed.push(size) });
    runner.start();
    try {
      await waitUntil(() => moved, 20_000, 'the batch that moves the checkpoint');
      // The batch that saw the move committed nothing: only the batches before it are counted.
      await waitUntil(async () => (await checkpointOf(db.pool, 'moved'))?.position === head, 5_000, 'the moved checkpoint');
      await new Promise((resolveWait) => setTimeout(resolveWait, 200));
      const counts = await actualCounts(db.pool, projection.table);
      expect(counts['moved-5']).toBeUndefined();
      expect(Object.values(counts).reduce((sum, count) => sum + count, 0)).toBe(committed.reduce((sum, size) => sum + size, 0));

      // Still running, from the moved checkpoint: later events are applied, once each.
      const next = await appendCounted(db.store, projection.category, { streams: 1, perStream: 3, firstStream: 20 });
      await waitUntil(async () => (await checkpointOf(db.pool, 'moved'))?.position === next, 10_000, 'the events after the move');
      expect((await actualCounts(db.pool, projection.table))['moved-20']).toBe(3);
      expect((await checkpointOf(db.pool, 'moved'))?.state).toBe('running');
    } finally {
      await runner.stop();
    }
  });
});

describe('Given two workers for one projection (advisory lock)', () => {
  it('only one applies; when it stops the other takes over within seconds, and nothing is lost or doubled', async () => {
    const projection = countingProjection('locked');
    await createCountingTable(db.pool, projection);
    const options = { runner: { maxBatch: 50, maxAttempts: 3 }, heartbeatMs: 100, stoppedPollMs: 500 };
    const first = new ProjectionWorker(db.pool, db.store, db.url, projection, options);
    const second = new ProjectionWorker(db.pool, db.store, db.url, projection, options);
    first.start();
    second.start();
    try {
      await waitUntil(() => first.isActive || second.isActive, 5_000, 'a worker to take the lock');
      await new Promise((resolveWait) => setTimeout(resolveWait, 300));
      expect([first.isActive, second.isActive].filter(Boolean)).toHaveLength(1);
      const [active, standby] = first.isActive ? [first, second] : [second, first];

      let head = await appendCounted(db.store, projection.category, { streams: 20, perStream: 25, perAppend: 5 });
      await waitUntil(async () => (await checkpointOf(db.pool, 'locked'))?.position === head, 20_000, 'catch-up');
      expect(standby.isActive).toBe(false);
      expect(standby.snapshot().role).toBe('standby');
      const [status] = await readProjectionStatus(db.pool, db.store, [projection]);
      expect(status).toMatchObject({ state: 'running', lagEvents: 0, lagSeconds: 0, worker: { pid: process.pid } });

      await active.stop();
      const takeoverMs = await waitUntil(() => standby.isActive, 5_000, 'the standby to take over');
      expect(takeoverMs).toBeLessThan(3_000);
      head = await appendCounted(db.store, projection.category, { streams: 20, perStream: 5, firstStream: 10 });
      await waitUntil(async () => (await checkpointOf(db.pool, 'locked'))?.position === head, 20_000, 'catch-up after the takeover');
      await standby.stop();

      expect(await actualCounts(db.pool, projection.table)).toEqual(await expectedCounts(db.store, projection.category));
      const [idle] = await readProjectionStatus(db.pool, db.store, [projection]);
      expect(idle).toMatchObject({ state: 'idle', worker: null, eventsPerSecond: null });
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });
});
