import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { allEvents, useTestEventStore, withoutReadLag } from '../../test/support/event-store.js';
import type { Projection } from '../projection.js';
import { runUntilCheckpoint } from '../runner/counting.projection.testing.js';
import { pageContext, ProjectionRunner } from '../runner/projection-runner.js';
import { writeSampleLog } from '../../src/event-store/postgres-sample-log.testing.js';
import { verificationsProjection } from '../verifications/verifications.projection.js';
import { walletLedgerProjection } from '../wallet-ledger/wallet-ledger.projection.js';
import { walletsProjection } from '../wallets/wallets.projection.js';
import { rebuildProjection, type RebuildProgress } from '../rebuild/rebuild.js';
import { shadowTableName } from '../runner/locks.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { inTransaction } from '../../src/database/transaction.js';
import { pageReader } from './event-pages.js';

const db = useTestEventStore({ poolSize: 8 });

/** Each table's primary key, for a stable order. */
const ORDER: Record<string, string> = {
  wallets: 'organization_id, environment',
  wallet_reservations: 'reference',
  wallet_ledger: 'organization_id, environment, event_position',
  verifications: 'reference',
  verification_counts: 'organization_id, environment, scope, status',
};
const PAGE_EVENTS = 97;
const paged = (table: string) => `${table}__paged`;

async function rows(table: string, orderBy: string): Promise<Record<string, unknown>[]> {
  return (await db.pool.query(`select * from ${table} order by ${orderBy}`)).rows;
}

/** A table's indexes, each as its name and definition (the table's name blanked out). */
async function indexDefinitions(table: string): Promise<string[]> {
  const { rows: found } = await db.pool.query<{ definition: string }>(
    `select pg_get_indexdef(i.indexrelid) as definition from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = $1::regclass order by c.relname`,
    [table],
  );
  return found.map(({ definition }) => definition.replace(` ON public.${table} `, ' ON _ '));
}

describe('Given one log applied event by event and page by page', () => {
  it('writes the same rows in every table of wallets, wallet-ledger and verifications, and a page applied twice changes nothing', async () => {
    // The log under test, written with the EventStoreDB test server's index lag off: the runners below read it with the lag on.
    await withoutReadLag(db, async () => {
      await writeSampleLog(db.pool, { organizations: 3, verifications: 240, store: db.store });
      // Erasures: pages must blank the rows they erase, after writing them.
      const requests = (await allEvents(db.store, { streamCategories: ['verification'] })).filter((event) => event.type === 'VerificationRequested').slice(0, 12);
      for (const request of requests) {
        await db.store.append(
          request.streamId,
          [
            {
              id: randomUUID(),
              type: 'VerificationPersonalDataErased',
              data: { schemaVersion: 1, reference: request.data.reference, erasedAt: '2026-11-20T10:00:00.000Z' },
              metadata: { occurredAt: '2026-11-20T10:00:00.000Z' },
            },
          ],
          { expectedRevision: 1n },
        );
      }
    });

    const projections: Projection[] = [walletsProjection, walletLedgerProjection, verificationsProjection];
    for (const projection of projections) {
      const events = await allEvents(db.store, { streamCategories: projection.categories });
      const last = events[events.length - 1].position;
      for (const table of projection.tables) await db.pool.query(`create table ${paged(table)} (like ${table} including all)`);

      // Event by event (no page path, batches of one) into the live tables.
      await runUntilCheckpoint(
        db.pool,
        new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 1, maxAttempts: 1, pageEvents: 0 }, (table) => table, `${projection.name}__one`),
        `${projection.name}__one`,
        last,
      );

      // Page by page into copies of them: pages of 97 events, so that checks, reservations and erasures straddle pages; the tail in batches of one.
      const pages: number[] = [];
      const warnings: string[] = [];
      const logger = { log: () => undefined, warn: (message: string) => warnings.push(message), error: (message: string) => warnings.push(message) };
      const pageRunner = new ProjectionRunner(
        db.pool,
        db.store,
        projection,
        { maxBatch: 1, maxAttempts: 1, pageEvents: PAGE_EVENTS, logger, onBatch: ({ size }) => pages.push(size) },
        paged,
        `${projection.name}__paged`,
      );
      await runUntilCheckpoint(db.pool, pageRunner, `${projection.name}__paged`, last);
      expect(warnings).toEqual([]);
      const inPages = pages.filter((size) => size === PAGE_EVENTS).length * PAGE_EVENTS;
      expect(inPages).toBeGreaterThan(events.length - PAGE_EVENTS);

      // The first table of each holds rows (the sample log closes every reservation it opens, so wallet_reservations is empty).
      expect((await rows(projection.tables[0], ORDER[projection.tables[0]])).length).toBeGreaterThan(0);
      for (const table of projection.tables) expect(await rows(paged(table), ORDER[table])).toEqual(await rows(table, ORDER[table]));

      // The whole log again through handle with a page's context, in pages of 97 read 10 events per statement (chunks
      // straddle pages), over rows that already hold it; the pages hold exactly the store's events.
      const read = pageReader(db.store, projection.categories, 10);
      const reread: RecordedEvent[] = [];
      for (let from = 0n; ;) {
        const page = await read(from, PAGE_EVENTS);
        if (page.length === 0) break;
        reread.push(...page);
        await inTransaction(db.pool, async (client) => projection.handle(page, pageContext(client, projection, paged)));
        from = page[page.length - 1].position;
      }
      expect(reread.map(({ position, streamId, type, data }) => ({ position, streamId, type, data }))).toEqual(
        events.map(({ position, streamId, type, data }) => ({ position, streamId, type, data })),
      );
      for (const table of projection.tables) expect(await rows(paged(table), ORDER[table])).toEqual(await rows(table, ORDER[table]));
    }
  });
});

describe('When a rebuild replays in pages what the live runner applied event by event', () => {
  it('finds no difference in any table and swaps', async () => {
    await withoutReadLag(db, () => writeSampleLog(db.pool, { organizations: 1, verifications: 60, store: db.store }));
    const projections: Projection[] = [walletsProjection, walletLedgerProjection, verificationsProjection];
    for (const projection of projections) {
      for (const table of projection.tables) await db.pool.query(`truncate ${table}`);
      await db.pool.query('delete from projection_checkpoints where name = $1', [projection.name]);
      const events = await allEvents(db.store, { streamCategories: projection.categories });
      await runUntilCheckpoint(
        db.pool,
        new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 1, maxAttempts: 1, pageEvents: 0 }),
        projection.name,
        events[events.length - 1].position,
      );

      const pages: number[] = [];
      const indexesBefore = await Promise.all(projection.tables.map(indexDefinitions));
      // Looked at while the replay runs: the shadow tables hold only their unique indexes then.
      const shadowIndexes: Promise<string[][]>[] = [];
      const onProgress = ({ phase, eventsDone }: RebuildProgress) => {
        pages.push(eventsDone);
        if (phase === 'replaying' && eventsDone > 0 && shadowIndexes.length === 0)
          shadowIndexes.push(Promise.all(projection.tables.map((table) => indexDefinitions(shadowTableName(table)))));
      };
      const result = await rebuildProjection(db.pool, db.store, db.url, projection, { verify: true, strict: true, pageEvents: 20, swapThresholdEvents: 5, onProgress });
      expect(result.outcome).toBe('swapped');
      // The read side's indexes were built after the replay, and the live tables have every index back under its own name.
      expect(shadowIndexes).toHaveLength(1);
      const whileReplaying = await shadowIndexes[0];
      expect(whileReplaying.flat().every((definition) => definition.startsWith('CREATE UNIQUE INDEX'))).toBe(true);
      expect(whileReplaying.flat().length).toBeLessThan(indexesBefore.flat().length);
      expect(await Promise.all(projection.tables.map(indexDefinitions))).toEqual(indexesBefore);
      expect(result.differences?.map(({ onlyLive, onlyRebuilt }) => onlyLive + onlyRebuilt)).toEqual(projection.tables.map(() => 0));
      // Replayed in pages of 20, not event by event.
      expect(pages).toContain(20);
      expect(pages).toContain(40);
    }
  });
});
