import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from './database.js';
import type { JsonObject, RecordedEvent } from '../../src/event-store/event-store.port.js';
import type { Projection, ProjectionContext } from '../../projections/projection.js';
import { pageContext } from '../../projections/runner/projection-runner.js';
import { inTransaction } from '../../src/database/transaction.js';

export interface GivenEvent {
  readonly streamId: string;
  readonly type: string;
  readonly data: JsonObject;
  readonly createdAt?: Date;
  readonly metadata?: JsonObject;
}

let nextPosition = 1_000_000n;

/** Recorded events as the store would deliver them: increasing positions, per-stream revisions. */
export function recorded(events: readonly GivenEvent[]): RecordedEvent[] {
  const revisions = new Map<string, bigint>();
  return events.map((event) => {
    const revision = revisions.get(event.streamId) ?? 0n;
    revisions.set(event.streamId, revision + 1n);
    nextPosition += 1n;
    return {
      id: randomUUID(),
      streamId: event.streamId,
      type: event.type,
      revision,
      position: nextPosition,
      data: event.data,
      metadata: event.metadata ?? {},
      createdAt: event.createdAt ?? new Date('2026-11-01T10:00:00Z'),
    };
  });
}

/** Runs work on one client inside a transaction with the projection's context, as the runner does. */
function inProjectionTransaction(pool: pg.Pool, projection: Projection, work: (context: ProjectionContext) => Promise<void>): Promise<void> {
  return inTransaction(pool, (client) =>
    work({
      table: (name) => {
        if (!projection.tables.includes(name)) throw new Error(`${projection.name} does not own ${name}`);
        return name;
      },
      query: async <T>(sql: string, params?: readonly unknown[]) => (await client.query(sql, params as unknown[])).rows as T[],
    }),
  );
}

/** Applies events through the per-event path (`handle` with one event at a time), in one transaction. */
export async function applyEvents(pool: pg.Pool, projection: Projection, events: readonly RecordedEvent[]): Promise<void> {
  await inProjectionTransaction(pool, projection, async (context) => {
    for (const event of events) await projection.handle([event], context);
  });
}

/** Applies events through `handle` all at once, as a runner's batch, in one transaction. */
export async function applyBatch(pool: pg.Pool, projection: Projection, events: readonly RecordedEvent[]): Promise<void> {
  await inProjectionTransaction(pool, projection, (context) => projection.handle(events, context));
}

/** Applies events as one page of the runner's page path (`handle` with a PageContext, COPY), in one transaction. */
export async function applyPage(pool: pg.Pool, projection: Projection, events: readonly RecordedEvent[]): Promise<void> {
  if (projection.pages !== true) throw new Error(`${projection.name} takes no pages`);
  await inTransaction(pool, (client) =>
    projection.handle(
      events,
      pageContext(client, projection, (table) => table),
    ),
  );
}

/** Every row of a table in a stable order, for "replayed twice, same rows" comparisons. */
export async function rowsOf(pool: pg.Pool, table: string, orderBy: string): Promise<Record<string, unknown>[]> {
  return (await pool.query(`select * from ${table} order by ${orderBy}`)).rows;
}

/**
 * A fresh database for one projection's test file: created before its tests, dropped after them,
 * and the projection's own tables emptied before each test.
 */
export function useProjectionDatabase(projection: Projection): { readonly pool: pg.Pool } {
  let database: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });
  beforeEach(async () => {
    await pool?.query(`truncate ${projection.tables.join(', ')}`);
  });
  return {
    get pool(): pg.Pool {
      if (pool === undefined) throw new Error('the projection database is only there inside tests');
      return pool;
    },
  };
}
