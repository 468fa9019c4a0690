import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import pg from 'pg';
import { runMigrations } from '../../src/database/data-source.js';
import { freePort, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/database/embedded-postgres.js';
import { PositionEpochError } from '../../src/database/position-epoch.js';
import { PostgresEventStore } from '../../src/event-store/postgres-event-store.js';
import { rebuildProjection } from '../../projections/rebuild/rebuild.js';
import { ProjectionRunner } from '../../projections/runner/projection-runner.js';
import {
  actualCounts,
  appendCounted,
  checkpointOf,
  countingProjection,
  createCountingTable,
  expectedCounts,
  waitUntil,
} from '../../projections/runner/counting.projection.testing.js';
import { withDatabase } from '../support/database-url.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { describeOnProject } from '../support/store-independent.js';

/**
 * The PostgreSQL log moved to another cluster. PostgreSQL's own pg_dump cannot dump the newer
 * server the tests run on (the embedded binaries ship without one, and a Debian pg_dump 15 refuses
 * a version 18 server), so the dump is made as pg_dump makes its data section, table by table, and
 * restored onto the schema the migrations build: what matters to the log is that its rows, positions
 * included, arrive in a cluster whose transaction-id counter is far behind them.
 */
async function dumpAndRestore(source: pg.Pool, target: { url: string; pool: pg.Pool }): Promise<void> {
  const targetUrl = target.url;
  await runMigrations(targetUrl);
  // The test projection's table, which no migration creates.
  await createCountingTable(target.pool, { table: 'moved_counts' });
  const client = new pg.Client({ connectionString: targetUrl });
  await client.connect();
  try {
    const { rows: tables } = await source.query<{ name: string }>(
      `select tablename as name from pg_tables where schemaname = 'public' and tablename <> 'schema_migrations' order by tablename`,
    );
    await client.query('begin');
    for (const { name } of tables) {
      const ident = pg.escapeIdentifier(name);
      const { rows } = await source.query<{ data: unknown[] }>(`select coalesce(json_agg(t), '[]'::json) as data from ${ident} t`);
      // The restore replaces what the migrations seeded (the epoch's row).
      await client.query(`delete from ${ident}`);
      await client.query(`insert into ${ident} select * from json_populate_recordset(null::${ident}, $1::json)`, [JSON.stringify(rows[0].data)]);
    }
    await client.query('commit');
  } finally {
    await client.end();
  }
}

/** Moves the source cluster's transaction-id counter on by `count` (subtransactions that write each take one). */
async function burnTransactionIds(pool: pg.Pool, count: number): Promise<void> {
  await pool.query(`do $$
    begin
      create temporary table burn (n int) on commit drop;
      for i in 1..${count} loop
        begin
          insert into burn values (i);
        exception when others then null;
        end;
      end loop;
    end $$`);
}

async function nextTransactionId(pool: pg.Pool): Promise<bigint> {
  const { rows } = await pool.query<{ next: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as next');
  return BigInt(rows[0].next);
}

describeOnProject('postgres', 'The PostgreSQL event log restored into another cluster', 'positions come from PostgreSQL transaction ids on the PostgreSQL log only', () => {
  let source: TestDatabase;
  let sourcePool: pg.Pool;
  let sourceStore: PostgresEventStore;
  let cluster: EmbeddedPostgresHandle;
  let clusterDir: string;
  const closers: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    source = await createTestDatabase();
    sourcePool = new pg.Pool({ connectionString: source.url, max: 4 });
    sourceStore = new PostgresEventStore({ pool: sourcePool, connectionString: source.url });
    clusterDir = resolve('.data', 'test', `moved-${process.pid}-${randomBytes(4).toString('hex')}`);
    cluster = await startEmbeddedPostgres({ dataDir: clusterDir, port: await freePort(), database: 'postgres', ephemeral: true });
  });

  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await sourceStore?.close();
    await sourcePool?.end();
    await source?.drop();
    await cluster?.stop();
    await rm(clusterDir, { recursive: true, force: true });
  });

  /** A fresh database on the fresh cluster, and a pool and store on it, closed after the suite. */
  async function freshDatabase(): Promise<{ url: string; pool: pg.Pool; store: PostgresEventStore }> {
    const name = `restored_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = withDatabase(cluster.url, name);
    const pool = new pg.Pool({ connectionString: url, max: 6 });
    pool.on('error', () => undefined);
    const store = new PostgresEventStore({ pool, connectionString: url });
    closers.push(async () => {
      await store.close();
      await pool.end();
    });
    return { url, pool, store };
  }

  it('reads the old log, appends after it, resumes subscriptions from their checkpoints and rebuilds in order, once a start has raised the epoch', async () => {
    const projection = countingProjection('moved');
    await createCountingTable(sourcePool, projection);
    await burnTransactionIds(sourcePool, 5_000);
    const lastBefore = await appendCounted(sourceStore, projection.category, { streams: 5, perStream: 4, perAppend: 2 });
    const runner = new ProjectionRunner(sourcePool, sourceStore, projection, { maxBatch: 100, maxAttempts: 2 });
    runner.start();
    await waitUntil(async () => ((await checkpointOf(sourcePool, projection.name))?.position ?? 0n) >= lastBefore, 10_000, 'the projection to apply the log');
    await runner.stop();
    const countsBefore = await expectedCounts(sourceStore, projection.category);

    const target = await freshDatabase();
    await dumpAndRestore(sourcePool, target);
    // The fresh cluster's counter is far behind the log it received.
    expect((await nextTransactionId(target.pool)) * 1_000_000n).toBeLessThan(lastBefore);

    const said: string[] = [];
    await runMigrations(target.url, { log: (message) => said.push(message) });
    expect(said.join('\n')).toMatch(/position epoch raised/);

    // Reads and the head see the old log.
    expect(await target.store.headPosition()).toBe(lastBefore);
    expect(await expectedCounts(target.store, projection.category)).toEqual(countsBefore);

    // New events come after every old one, in the order they were written.
    const firstNew = await target.store.append(`${projection.category}-0`, [{ id: randomUUID(), type: 'Counted', data: { n: 100 } }], { expectedRevision: 3n });
    expect(firstNew.position).toBeGreaterThan(lastBefore);
    const lastNew = await appendCounted(target.store, projection.category, { streams: 2, perStream: 3, firstStream: 5 });
    expect(lastNew).toBeGreaterThan(firstNew.position);
    const all = await target.store.readAll({ maxCount: 1_000, filter: { streamCategories: [projection.category] } });
    expect(all).toHaveLength(20 + 1 + 6);
    expect(all.map((event) => event.position)).toEqual([...all.map((event) => event.position)].sort((a, b) => (a < b ? -1 : 1)));
    expect(all.slice(20).map((event) => event.data.n)).toEqual([100, 0, 1, 2, 0, 1, 2]);

    // The projection resumes from its restored checkpoint and applies exactly the new events.
    const resumed = new ProjectionRunner(target.pool, target.store, projection, { maxBatch: 100, maxAttempts: 2 });
    resumed.start();
    await waitUntil(async () => ((await checkpointOf(target.pool, projection.name))?.position ?? 0n) >= lastNew, 10_000, 'the projection to apply the new events');
    await resumed.stop();
    const countsAfter = await expectedCounts(target.store, projection.category);
    expect(countsAfter).toEqual({ ...countsBefore, 'moved-0': 5, 'moved-5': 3, 'moved-6': 3 });
    expect(await actualCounts(target.pool, projection.table)).toEqual(countsAfter);

    // A rebuild replays the whole log, old and new, and finds the live table right.
    const rebuilt = await rebuildProjection(target.pool, target.store, target.url, projection, { verify: true });
    expect(rebuilt).toMatchObject({ outcome: 'swapped', eventsApplied: 27, position: lastNew });
    expect(rebuilt.differences).toEqual([{ table: projection.table, onlyLive: 0, onlyRebuilt: 0, sampleKeys: [] }]);
    expect(await actualCounts(target.pool, projection.table)).toEqual(countsAfter);
  });

  it('raises the epoch from the append itself in a process that was running when its database was replaced, and never fails it with an unhandled error', async () => {
    // A process appending on the source records its newest append as the log's floor (at most every 5 s).
    const writer = new PostgresEventStore({ pool: sourcePool, connectionString: source.url });
    const written = await writer.append(`moved-source-${randomUUID()}`, [{ id: randomUUID(), type: 'Counted', data: { n: 0 } }], { expectedRevision: 'no_stream' });
    await writer.close();
    await waitUntil(
      async () => BigInt((await sourcePool.query<{ floor: string }>('select floor_position as floor from event_log_epoch')).rows[0].floor) >= written.position,
      5_000,
      'the floor to be recorded',
    );
    const target = await freshDatabase();
    await dumpAndRestore(sourcePool, target);
    const [{ newest }] = (await sourcePool.query<{ newest: string }>('select max(position) as newest from events')).rows;

    // No start-up check here: the first append finds its positions behind the log.
    const appended = await target.store.append(`moved-late-${randomUUID()}`, [{ id: randomUUID(), type: 'Counted', data: { n: 0 } }], { expectedRevision: 'no_stream' });
    expect(appended.position).toBeGreaterThan(BigInt(newest));
    const { rows } = await target.pool.query<{ epoch: string; raised: boolean }>('select epoch, raised_at is not null as raised from event_log_epoch');
    expect(rows).toEqual([{ epoch: expect.stringMatching(/^[1-9]\d*$/), raised: true }]);
    expect(await target.store.headPosition()).toBe(appended.position);
  });

  it('refuses to start, saying why, when no epoch can place new positions above the log', async () => {
    const database = await createTestDatabase();
    try {
      const pool = new pg.Pool({ connectionString: database.url, max: 1 });
      // A log whose newest position is at the top of the 64-bit range.
      await pool.query(`insert into events (position, stream_id, revision, event_id, type, data, metadata) values (9223372036000000000, 'top-1', 0, $1, 'Top', '{}', '{}')`, [
        randomUUID(),
      ]);
      await pool.end();
      const starting = runMigrations(database.url);
      await expect(starting).rejects.toBeInstanceOf(PositionEpochError);
      await expect(starting).rejects.toThrow(/positions are behind its events .* could not be placed above them: the log's newest position leaves no room/);
    } finally {
      await database.drop();
    }
  });
});
