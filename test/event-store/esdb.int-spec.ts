import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EventStoreDBClient } from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { GenericContainer, getContainerRuntimeClient, Wait } from 'testcontainers';
import { EsdbEventStore } from '../../src/event-store/esdb-event-store.js';
import { StreamDamagedError } from '../../src/event-store/event-store.port.js';
import { startEsdbTestServer } from '../esdb-server/esdb-test-server.js';
import { DEFAULT_TEST_READ_LAG_MS, startEsdbTestServerProcess } from '../support/event-store.js';
import { type ContractTarget, describeEventStoreContract } from './event-store.contract.js';

function connect(connectionString: string, stop: () => Promise<void> = async () => undefined): ContractTarget {
  // Two clients, two HTTP/2 connections: the second stands for another process.
  const store = new EsdbEventStore(connectionString);
  const otherStore = new EsdbEventStore(connectionString);
  return {
    store,
    otherStore,
    dispose: async () => {
      await store.close();
      await otherStore.close();
      await stop();
    },
  };
}

/*
 * The adapter over real gRPC and the real @eventstore/db-client, against the in-process test server
 * (test/esdb-server). Where the test server is known to differ from a real node:
 * - positions are byte-like offsets of an in-memory log, not of a real node's chunk files: they
 *   follow the same rules (per-event, commit == prepare, increasing, not dense), not the same values;
 * - idempotent retries with `any` look ids up in a cache of the last 100,000 events, where a real
 *   node's cache is bounded by memory (best effort on both; the contract retries with `no_stream`,
 *   which both servers check against the stream itself);
 * - a slow live subscriber is fed from the log, never "falls behind" into a re-read: same events,
 *   same order;
 * - filter regexes run as JavaScript RegExps, not .NET ones (the adapter's are plain enough for both);
 * - the server writes `$statsCollected` every second (a real node: every 30 s) so that system events
 *   interleave with the contract's own.
 * Like a KurrentDB 25 node it makes the client append through BatchAppend, and its reads trail its
 * writes (the project's default index lag), so the contract holds with an index that is behind.
 */
describeEventStoreContract('esdb (test server)', async () => {
  const server = await startEsdbTestServer({ settings: { readLagMs: DEFAULT_TEST_READ_LAG_MS } });
  return connect(server.connectionString, () => server.stop());
});

describe('EsdbEventStore and key rows', () => {
  it('refuses an append that carries key rows (they cannot share its transaction): nothing is written', async () => {
    const server = await startEsdbTestServer({ settings: { readLagMs: DEFAULT_TEST_READ_LAG_MS } });
    const store = new EsdbEventStore(server.connectionString);
    try {
      const reference = randomUUID().replace(/-/g, '');
      const streamId = `verification-${reference}`;
      const keyRows = { reference, organizationId: 'org', environment: 'test', wrappedKey: 'wrapped', tokens: [] };
      await expect(store.appendMany([{ streamId, events: [{ id: randomUUID(), type: 'Written', data: {} }], expectedRevision: 'no_stream', keyRows }])).rejects.toThrow(RangeError);
      expect(await store.readStream(streamId, { maxCount: 10 })).toEqual([]);
    } finally {
      await store.close();
      await server.stop();
    }
  });
});

/*
 * A read the adapter stops early (ping, headPosition, a bounded readAll) must not stay open in the
 * client: @eventstore/db-client's dispose() waits for every gRPC call it started to end, and a call
 * whose consumer went away after the server had already finished it never ends by itself.
 */
describe('EsdbEventStore reads stopped early', () => {
  it('leave nothing for close() to wait on', async () => {
    // Out of process: a server in this process writes its answer while the client reads, so a
    // read rarely ends before the client stops it, and the test would rarely see the failure.
    const server = await startEsdbTestServerProcess();
    const store = new EsdbEventStore(server.connectionString);
    try {
      const streamId = `order-${randomUUID().replace(/-/g, '')}`;
      const events = Array.from({ length: 20 }, (_, i) => ({ id: randomUUID(), type: 'Placed', data: { schemaVersion: 1, i }, metadata: {} }));
      await store.append(streamId, events, { expectedRevision: 'no_stream' });
      for (let round = 0; round < 50; round++) {
        await store.ping();
        await store.headPosition();
        expect(await store.readAll({ maxCount: 1 })).toHaveLength(1);
        expect(await store.readAll({ direction: 'backwards', maxCount: 2 })).toHaveLength(2);
      }
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        store.close().then(() => 'closed'),
        new Promise<string>((resolveTimeout) => {
          timer = setTimeout(() => resolveTimeout('still waiting after 10 s'), 10_000);
        }),
      ]);
      clearTimeout(timer);
      expect(closed).toBe('closed');
    } finally {
      await server.stop();
    }
  });
});

const KURRENTDB_IMAGE = 'docker.kurrent.io/kurrent-latest/kurrentdb:25.1';

async function containerRuntimeAvailable(): Promise<boolean> {
  try {
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

const realConnectionString = process.env.EVENTSTORE_CONNECTION_STRING;
if (realConnectionString !== undefined && realConnectionString !== '') {
  describeEventStoreContract('esdb (real EventStoreDB at EVENTSTORE_CONNECTION_STRING)', async () => connect(realConnectionString));
} else if (await containerRuntimeAvailable()) {
  describeEventStoreContract('esdb (KurrentDB in a container)', async () => {
    const container = await new GenericContainer(KURRENTDB_IMAGE)
      .withEnvironment({ KURRENTDB_CLUSTER_SIZE: '1', KURRENTDB_RUN_PROJECTIONS: 'None', KURRENTDB_INSECURE: 'true' })
      .withExposedPorts(2113)
      .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
      .withStartupTimeout(120_000)
      .start();
    return connect(`esdb://${container.getHost()}:${container.getMappedPort(2113)}?tls=false`, async () => {
      await container.stop();
    });
  });
} else {
  process.stderr.write('esdb contract on a real EventStoreDB not run: EVENTSTORE_CONNECTION_STRING is not set and testcontainers finds no Docker engine\n');
}

/*
 * Streams an operator deleted or truncated on EventStoreDB (this service never does): a read of
 * one, or an append to it, fails with StreamDamagedError rather than handing the caller what is
 * left, which it would fold into a wrong state (a wallet without its first events).
 */
describe('EsdbEventStore on deleted and truncated streams', () => {
  const event = (type: string) => ({ id: randomUUID(), type, data: { type }, metadata: {} });
  const stream = (category: string) => `${category}-${randomUUID().replace(/-/g, '')}`;
  let server: Awaited<ReturnType<typeof startEsdbTestServer>>;
  let store: EsdbEventStore;
  let operator: EventStoreDBClient;

  beforeAll(async () => {
    server = await startEsdbTestServer({ statsIntervalMs: 0, settings: { readLagMs: DEFAULT_TEST_READ_LAG_MS } });
    store = new EsdbEventStore(server.connectionString);
    operator = EventStoreDBClient.connectionString(server.connectionString);
  });
  afterAll(async () => {
    await store?.close();
    await operator?.dispose();
    await server?.stop();
  });

  async function written(streamId: string, count: number): Promise<void> {
    await store.append(
      streamId,
      Array.from({ length: count }, (_, i) => event(`E${i}`)),
      { expectedRevision: 'no_stream' },
    );
  }

  it('a stream that never existed still reads as empty, and one read from past a truncation still reads', async () => {
    expect(await store.readStream(stream('fresh'), { maxCount: 10 })).toEqual([]);
    const id = stream('capped');
    await written(id, 5);
    await operator.setStreamMetadata(id, { maxCount: 2 });
    expect((await store.readStream(id, { fromRevision: 3n, maxCount: 10 })).map((e) => e.revision)).toEqual([3n, 4n]);
  });

  it('$maxCount or $tb: a read from the start fails as truncated', async () => {
    const capped = stream('capped');
    await written(capped, 5);
    await operator.setStreamMetadata(capped, { maxCount: 2 });
    await expect(store.readStream(capped, { maxCount: 10 })).rejects.toMatchObject({ code: 'stream_damaged', damage: 'truncated', streamId: capped });
    await expect(store.readStream(capped, { fromRevision: 1n, maxCount: 10 })).rejects.toBeInstanceOf(StreamDamagedError);

    // Every event hidden: the stream exists and reads as nothing (not as "not found").
    const hidden = stream('hidden');
    await written(hidden, 3);
    await operator.setStreamMetadata(hidden, { truncateBefore: 3 });
    await expect(store.readStream(hidden, { maxCount: 10 })).rejects.toMatchObject({ damage: 'truncated' });
  });

  it('a soft delete: reads fail as deleted, and an append to no stream, which would recreate it, fails too', async () => {
    const id = stream('soft');
    await written(id, 3);
    await operator.deleteStream(id);
    await expect(store.readStream(id, { maxCount: 10 })).rejects.toMatchObject({ damage: 'deleted' });
    await expect(store.append(id, [event('Again')], { expectedRevision: 'stream_exists' })).rejects.toMatchObject({ damage: 'deleted' });
    await expect(store.append(id, [event('Again')], { expectedRevision: 'no_stream' })).rejects.toMatchObject({ damage: 'deleted' });
  });

  it('a tombstone: reads and appends fail as tombstoned', async () => {
    const id = stream('hard');
    await written(id, 2);
    await operator.tombstoneStream(id);
    await expect(store.readStream(id, { maxCount: 10 })).rejects.toMatchObject({ damage: 'tombstoned' });
    await expect(store.append(id, [event('Again')], { expectedRevision: 1n })).rejects.toMatchObject({ damage: 'tombstoned' });
  });
});
