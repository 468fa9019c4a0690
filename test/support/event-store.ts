import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll } from '@jest/globals';
import pg from 'pg';
import { EsdbEventStore } from '../../src/event-store/esdb-event-store.js';
import type { EventStore, ReadAllOptions, RecordedEvent } from '../../src/event-store/event-store.port.js';
import { InstrumentedEventStore } from '../../src/event-store/instrumented-event-store.js';
import { PostgresEventStore } from '../../src/event-store/postgres-event-store.js';
import { type EsdbTestServerControl, remoteControl } from '../esdb-server/control.js';
import { createTestDatabase, type TestDatabase } from './database.js';

export type TestEventStoreKind = 'postgres' | 'esdb';

/**
 * Which event store this jest project runs on: the `integration-esdb` project sets
 * TEST_EVENT_STORE=esdb in a per-file setup (test/support/esdb-project.setup.ts), the
 * `integration` project leaves it unset.
 */
export function testEventStoreKind(): TestEventStoreKind {
  return process.env.TEST_EVENT_STORE === 'esdb' ? 'esdb' : 'postgres';
}

// One EventStoreDB test server per test database, as the postgres store keeps its log in the
// database: every app instance, CLI and worker on one database shares it, it outlives them (a
// fresh instance reads what a closed one wrote), and it stops when the database is dropped. No test
// sees another test's log. Each server runs in a process of its own (test/esdb-server/serve.ts,
// compiled by the global setup), so that it neither slows with the jest worker (whose heap grows
// with every test file's modules) nor slows the test file it serves.
export interface TestServerProcess {
  readonly connectionString: string;
  /** Switches the node's behaviour (read lag, acknowledgement, slow writes, appends that time out) and scavenges: test/esdb-server/control.ts. */
  readonly control: EsdbTestServerControl;
  stop(): Promise<void>;
}

const servers = new Map<string, Promise<TestServerProcess>>();
const SERVER_START_TIMEOUT_MS = 30_000;
const SERVER_STOP_TIMEOUT_MS = 5_000;

/**
 * How far reads trail writes on the project's test servers unless a test says otherwise: a
 * KurrentDB node's reads see only what its index holds, and the service must be correct when the
 * index is behind (the winner of a race not yet readable by the loser, a subscription behind an
 * append). TEST_ESDB_READ_LAG_MS overrides it (0 turns the lag off).
 */
export const DEFAULT_TEST_READ_LAG_MS = 30;

function testReadLagMs(): string {
  const configured = process.env.TEST_ESDB_READ_LAG_MS;
  return configured === undefined || configured === '' ? String(DEFAULT_TEST_READ_LAG_MS) : configured;
}

/** An EventStoreDB test server in a child process (as a real node is to the app: another process). */
export function startEsdbTestServerProcess(): Promise<TestServerProcess> {
  const script = process.env.TEST_ESDB_SERVER_SCRIPT;
  if (script === undefined) {
    return Promise.reject(new Error("TEST_ESDB_SERVER_SCRIPT is unset: the integration projects' global setup compiles the EventStoreDB test server"));
  }
  const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ESDB_TEST_READ_LAG_MS: testReadLagMs() } });
  const remote = remoteControl((line) => child.stdin.write(`${line}\n`));
  const exited = new Promise<void>((resolveExit) =>
    child.once('exit', () => {
      remote.fail(new Error('the EventStoreDB test server has exited'));
      resolveExit();
    }),
  );
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), SERVER_STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
  };
  // A control call to a server that has just exited must not crash the worker (EPIPE).
  child.stdin.on('error', () => undefined);
  return new Promise<TestServerProcess>((resolveStart, rejectStart) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      void stop();
      rejectStart(new Error(`the EventStoreDB test server did not start: ${why}`));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => fail(`it exited (${signal ?? code})`);
    const timer = setTimeout(() => fail(`no port within ${SERVER_START_TIMEOUT_MS} ms`), SERVER_START_TIMEOUT_MS);
    child.on('error', (error) => fail(error.message));
    child.once('exit', onExit);
    // The first line is the port; every later one answers a control call.
    const lines = createInterface({ input: child.stdout });
    let started = false;
    lines.on('line', (line) => {
      if (started) {
        remote.receive(line);
        return;
      }
      started = true;
      clearTimeout(timer);
      child.off('exit', onExit);
      const { port } = JSON.parse(line) as { port: number };
      resolveStart({ connectionString: `esdb://127.0.0.1:${port}?tls=false`, control: remote.control, stop });
    });
  });
}

function serverFor(database: Pick<TestDatabase, 'name'>): Promise<TestServerProcess> {
  let server = servers.get(database.name);
  if (server === undefined) {
    server = startEsdbTestServerProcess();
    servers.set(database.name, server);
  }
  return server;
}

/** Called by TestDatabase.drop(). */
export async function stopTestEventStoreOf(databaseName: string): Promise<void> {
  const server = servers.get(databaseName);
  if (server === undefined) return;
  servers.delete(databaseName);
  await (await server).stop();
}

/**
 * The control of this test database's EventStoreDB test server, or undefined on the postgres
 * project: a test switches read lag, acknowledgement, slow writes and appends that time out, or
 * scavenges, for the store every process of that database shares.
 */
export async function testEventStoreControl(database: Pick<TestDatabase, 'name'>): Promise<EsdbTestServerControl | undefined> {
  if (testEventStoreKind() === 'postgres') return undefined;
  return (await serverFor(database)).control;
}

/**
 * Runs `write` with the EventStoreDB test server's index lag off, then turns it back to the
 * project's: for a fixture a test writes before what it tests, whose appends, one after the other,
 * would each wait for the index before they are acknowledged. Nothing to switch on the postgres project.
 */
export async function withoutReadLag<T>(database: Pick<TestDatabase, 'name'>, write: () => Promise<T>): Promise<T> {
  const control = await testEventStoreControl(database);
  await control?.configure({ readLagMs: 0 });
  try {
    return await write();
  } finally {
    await control?.configure({ readLagMs: Number(testReadLagMs()) });
  }
}

/** Environment that points the app, a CLI or a worker process at the event store of this test database. */
export async function testEventStoreEnv(database: TestDatabase): Promise<Record<string, string>> {
  if (testEventStoreKind() === 'postgres') return { EVENT_STORE: 'postgres' };
  const server = await serverFor(database);
  return { EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: server.connectionString };
}

export interface TestEventStore {
  readonly kind: TestEventStoreKind;
  readonly store: EventStore;
  /** Environment that points a child process at the same store. */
  readonly env: Record<string, string>;
  /** Closes this client; the store itself lives as long as the test database. */
  close(): Promise<void>;
}

/** The adapter this jest project runs on, over the test database (postgres) or its own test server (esdb). */
export async function createTestEventStore(database: TestDatabase, pool: pg.Pool): Promise<TestEventStore> {
  const kind = testEventStoreKind();
  const env = await testEventStoreEnv(database);
  const store: EventStore = kind === 'esdb' ? new EsdbEventStore(env.EVENTSTORE_CONNECTION_STRING as string) : new PostgresEventStore({ pool, connectionString: database.url });
  return { kind, store, env, close: () => store.close() };
}

const PAGE = 1_000;

/** Every event of a stream, oldest first, through the port (works on both stores). */
export async function streamEvents(store: EventStore, streamId: string): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (let from = 0n; ;) {
    const page = await store.readStream(streamId, { fromRevision: from, maxCount: PAGE });
    events.push(...page);
    if (page.length < PAGE) return events;
    from = (page.at(-1) as RecordedEvent).revision + 1n;
  }
}

/**
 * Every application event committed before the call, oldest first (system events are never returned
 * by the port), whichever process wrote it. The PostgreSQL adapter's readAll waits for its own
 * appends only; an event another process has just appended can sit a moment above the visible
 * bound (a transaction open elsewhere in the cluster), so on PostgreSQL this first waits for every
 * committed event to be visible.
 */
export async function allEvents(store: EventStore, filter?: ReadAllOptions['filter']): Promise<RecordedEvent[]> {
  const adapter = store instanceof InstrumentedEventStore ? store.inner : store;
  if (adapter instanceof PostgresEventStore) await adapter.untilCommittedVisible();
  return readWholeLog(store, filter);
}

async function readWholeLog(store: EventStore, filter?: ReadAllOptions['filter']): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  let fromPosition: bigint | undefined;
  for (;;) {
    const page = await store.readAll({ fromPosition, maxCount: PAGE, filter });
    const fresh = fromPosition === undefined ? page : page.filter((event) => event.position > (fromPosition as bigint));
    events.push(...fresh);
    if (page.length < PAGE || fresh.length === 0) return events;
    fromPosition = (fresh.at(-1) as RecordedEvent).position;
  }
}

/** The events whose stream, type, data or metadata contain `text` (a search of the whole log for a leaked secret). */
export function eventsContaining(events: readonly RecordedEvent[], text: string): RecordedEvent[] {
  return events.filter((event) => JSON.stringify([event.streamId, event.type, event.data, event.metadata]).includes(text));
}

/**
 * What a projection status reports as its lag in events when `pending` events are behind: a count
 * exists on PostgreSQL only (bounded SQL over the events table); EventStoreDB has no count between
 * two positions, so there the status reports null and the lag in seconds alone.
 */
export function expectedLagEvents(store: Pick<EventStore, 'kind'>, pending: number): number | null {
  return store.kind === 'postgres' ? pending : null;
}

/**
 * A test database, a pool on it and the event store of this jest project, for the file's tests:
 * created before them, closed and dropped after. Read the fields inside tests only.
 */
export function useTestEventStore(options: { poolSize: number }): { readonly name: string; readonly url: string; readonly pool: pg.Pool; readonly store: EventStore } {
  let database: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  let testStore: TestEventStore | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: options.poolSize });
    // As the service's own pool does: an idle connection the server ends is dropped and the next
    // query opens another. A test fails on its queries, not on an idle connection's end.
    pool.on('error', () => undefined);
    testStore = await createTestEventStore(database, pool);
  });
  afterAll(async () => {
    await testStore?.close();
    await pool?.end();
    await database?.drop();
  });
  const inside = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the test event store is only there inside tests');
    return value;
  };
  return {
    get name() {
      return inside(database).name;
    },
    get url() {
      return inside(database).url;
    },
    get pool() {
      return inside(pool);
    },
    get store() {
      return inside(testStore).store;
    },
  };
}
