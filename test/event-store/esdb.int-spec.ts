import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { GenericContainer, getContainerRuntimeClient, Wait } from 'testcontainers';
import { EsdbEventStore } from '../../src/event-store/esdb-event-store.js';
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
