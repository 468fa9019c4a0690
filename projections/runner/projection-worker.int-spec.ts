import { afterAll, expect, it } from '@jest/globals';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { testEventStoreKind, useTestEventStore } from '../../test/support/event-store.js';
import { actualCounts, appendCounted, checkpointOf, countingProjection, createCountingTable, expectedCounts, waitUntil } from './counting.projection.testing.js';
import { LOCK_NAMESPACE, lockKeySql } from './locks.js';
import { ProjectionWorker } from './projection-worker.js';

const db = useTestEventStore({ poolSize: 8 });

/**
 * A TCP hop between a worker's lock connection and PostgreSQL that can go silent, as a network
 * does when a host is cut off or powered down: nothing more crosses it either way, and neither end
 * is told (no FIN, no RST).
 */
class SilenceableLink {
  private readonly pairs: Array<{ client: Socket; server: Socket }> = [];
  private readonly listener: Server;
  port = 0;

  private constructor(target: { host: string; port: number }) {
    this.listener = createServer((client) => {
      const server = connect(target.port, target.host);
      client.on('error', () => undefined);
      server.on('error', () => undefined);
      client.pipe(server);
      server.pipe(client);
      this.pairs.push({ client, server });
    });
  }

  static async open(target: { host: string; port: number }): Promise<SilenceableLink> {
    const link = new SilenceableLink(target);
    await new Promise<void>((resolveListen) => link.listener.listen(0, '127.0.0.1', resolveListen));
    const address = link.listener.address();
    link.port = typeof address === 'object' && address !== null ? address.port : 0;
    return link;
  }

  /** Every connection open now goes silent; later ones pass. */
  silence(): void {
    for (const { client, server } of this.pairs) {
      client.unpipe(server);
      server.unpipe(client);
      client.pause();
      server.pause();
    }
  }

  async close(): Promise<void> {
    for (const { client, server } of this.pairs) {
      client.destroy();
      server.destroy();
    }
    await new Promise<void>((resolveClose) => this.listener.close(() => resolveClose()));
  }
}

const links: SilenceableLink[] = [];
afterAll(async () => {
  for (const link of links) await link.close();
});

it(`steps down when its checkpoint moved because its lock went to another process while its host was cut off, instead of competing with the new holder (${testEventStoreKind()} event store)`, async () => {
  const url = new URL(db.url);
  const link = await SilenceableLink.open({ host: url.hostname, port: Number(url.port || 5432) });
  links.push(link);
  const linked = new URL(db.url);
  linked.searchParams.delete('host');
  linked.hostname = '127.0.0.1';
  linked.port = String(link.port);

  const live = countingProjection('leader');
  await createCountingTable(db.pool, live);
  // The cut-off worker applies its batches slowly, so that the new holder's land first.
  let cutOff = false;
  const slowed = countingProjection('leader', { before: async () => (cutOff ? new Promise((resolveWait) => setTimeout(resolveWait, 300)) : undefined) });
  // No heartbeat after it became active: only the moved checkpoint can tell it that it lost its lock.
  const options = { runner: { maxBatch: 50, maxAttempts: 3 }, heartbeatMs: 60_000, stoppedPollMs: 60_000, lockTimeoutMs: 500 };
  const first = new ProjectionWorker(db.pool, db.store, linked.toString(), slowed, options);
  const second = new ProjectionWorker(db.pool, db.store, db.url, live, { ...options, heartbeatMs: 100 });
  try {
    first.start();
    const before = await appendCounted(db.store, live.category, { streams: 3, perStream: 4 });
    await waitUntil(
      async () => first.snapshot().role === 'active' && ((await checkpointOf(db.pool, 'leader'))?.position ?? 0n) >= before,
      10_000,
      'the first worker to apply the log',
    );

    // Its host is cut off: the lock connection goes silent, and PostgreSQL ends that session (as its keepalives do) and frees the lock.
    link.silence();
    cutOff = true;
    const { rows } = await db.pool.query<{ ended: boolean }>(
      `select pg_terminate_backend(pid) as ended from pg_locks where locktype = 'advisory' and granted and classid = ${LOCK_NAMESPACE.active}
         and objid = oid(${lockKeySql('$1::text')}::bigint & 4294967295) and objsubid = 2
         and database = (select oid from pg_database where datname = current_database())`,
      ['leader'],
    );
    expect(rows).toEqual([{ ended: true }]);
    second.start();
    await waitUntil(() => second.snapshot().role === 'active', 10_000, 'the second worker to take the lock');

    // New events: both runners apply them; the first finds its checkpoint moved by the second.
    const after = await appendCounted(db.store, live.category, { streams: 3, perStream: 2, firstStream: 3 });
    await waitUntil(() => first.snapshot().role === 'standby', 10_000, 'the cut-off worker to step down');
    await waitUntil(async () => ((await checkpointOf(db.pool, 'leader'))?.position ?? 0n) >= after, 10_000, 'the new holder to apply the new events');
    const last = await appendCounted(db.store, live.category, { streams: 1, perStream: 3, firstStream: 6 });
    await waitUntil(async () => ((await checkpointOf(db.pool, 'leader'))?.position ?? 0n) >= last, 10_000, 'the new holder to go on');
    expect(first.snapshot().role).toBe('standby');
    expect(second.snapshot().role).toBe('active');
    // Each event applied once (the counting projection is not idempotent).
    expect(await actualCounts(db.pool, live.table)).toEqual(await expectedCounts(db.store, live.category));
  } finally {
    await first.stop();
    await second.stop();
  }
});
