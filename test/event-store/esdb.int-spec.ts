import { GenericContainer, getContainerRuntimeClient, Wait } from 'testcontainers';
import { EsdbEventStore } from '../../src/event-store/esdb-event-store.js';
import { startEsdbTestServer } from '../esdb-server/esdb-test-server.js';
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
 * - ServerFeatures answers UNIMPLEMENTED, so the client appends with Append; a real node of 21.10 or
 *   later makes the client use BatchAppend instead (see the real-node run below);
 * - the server writes `$statsCollected` every second (a real node: every 30 s) so that system events
 *   interleave with the contract's own.
 */
describeEventStoreContract('esdb (test server)', async () => {
  const server = await startEsdbTestServer();
  return connect(server.connectionString, () => server.stop());
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
