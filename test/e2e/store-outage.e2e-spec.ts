import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/database/embedded-postgres.js';
import { ProjectionWaiter } from '../../src/read-models/projection-waiter.js';
import { VerificationRecovery } from '../../src/verifications/recovery.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { allEvents, DEFAULT_TEST_READ_LAG_MS } from '../support/event-store.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { describeOnProject } from '../support/store-independent.js';
import { startEsdbTestServer, type EsdbTestServer } from '../esdb-server/esdb-test-server.js';

const CREDIT_KOBO = 1_000_000;
const NIN_PRICE_KOBO = 10_000;
/** Checks in flight when PostgreSQL goes away: half of them held at the provider, with their price reserved. */
const IN_FLIGHT = 12;
/** The sandbox answers a NIN ending in 3 only after this (a timeout): those checks are mid-flight, money reserved, when the cluster stops. */
const PROVIDER_TIMEOUT_MS = 2_000;
const RECOVERY_WAIT_MS = 45_000;

/** Reservations written to the test wallets so far, from the event log. */
async function reservations(app: TestApp): Promise<number> {
  return (await allEvents(app.eventStore)).filter((event) => event.type === 'WalletFundsReserved').length;
}

const FINISHED = new Set(['VerificationCompleted', 'VerificationFailed', 'VerificationRejected']);

/** What the event log says about every check and the test wallet's reservations. */
async function settlement(app: TestApp) {
  const events = await allEvents(app.eventStore);
  const verifications = new Map<string, string[]>();
  for (const event of events.filter((recorded) => recorded.streamId.startsWith('verification-'))) {
    const reference = event.streamId.slice('verification-'.length);
    verifications.set(reference, [...(verifications.get(reference) ?? []), event.type]);
  }
  const wallet = events.filter((event) => event.streamId.startsWith('wallet-') && event.streamId.endsWith('.test'));
  const referencesOf = (type: string) => wallet.filter((event) => event.type === type).map((event) => String(event.data.reference));
  const reserved = referencesOf('WalletFundsReserved');
  const debited = referencesOf('WalletDebited');
  const released = referencesOf('WalletReservationReleased');
  const completed = [...verifications].filter(([, types]) => types.includes('VerificationCompleted')).map(([reference]) => reference);
  const settled = [...verifications.values()].every((types) => types.some((type) => FINISHED.has(type))) && debited.length + released.length === reserved.length;
  return { verifications, reserved, debited, released, completed, settled };
}

function expectUnavailable(response: TestResponse): void {
  expect({ status: response.status, body: response.body }).toMatchObject({ status: 503, body: { status: false, error: { code: 'service_unavailable' } } });
}

async function until<T>(what: string, attempt: () => Promise<T | undefined>, timeoutMs = RECOVERY_WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await attempt().catch(() => undefined);
    if (result !== undefined) return result;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((wait) => setTimeout(wait, 200));
  }
}

interface Outage {
  /** Stops the store under the running service. */
  stop(): Promise<void>;
  /** Brings it back, with what it held. */
  start(): Promise<void>;
  /** What must answer 503 while it is down (beyond a check). */
  whileDown(): Promise<void>;
}

/**
 * The store goes away under a running service with checks in flight and comes back: requests get
 * 503 in the envelope meanwhile, never a 500; the service serves again without a restart; and once
 * the recovery pass ran no verification is left open and no money is held or half-moved.
 */
async function outageScenario(app: TestApp, key: Record<string, string>, outage: Outage): Promise<void> {
  expect((await app.request('POST', '/v1/nin', { headers: key, body: { nin: '12345678905' } })).status).toBe(201);

  // Checks in flight as the store stops: the slow ones hold a reservation at that moment; the
  // others are anywhere in their run. Each completes or answers 503, never 500; a slow one answers
  // 502 (not charged) only when its failure was recorded after all (an append whose answer the
  // outage cut, read back from the store).
  const reservedBefore = await reservations(app);
  const inFlight = Array.from({ length: IN_FLIGHT }, (_, i) => app.request('POST', '/v1/nin', { headers: key, body: { nin: `1234567890${i % 2 === 0 ? 3 : 5}` } }));
  await until('the slow checks to reserve their price', async () => ((await reservations(app)) - reservedBefore >= IN_FLIGHT / 2 ? true : undefined), PROVIDER_TIMEOUT_MS);
  await outage.stop();
  const answers = await Promise.all(inFlight);
  for (const answer of answers) {
    expect([201, 502, 503]).toContain(answer.status);
    if (answer.status === 503) expectUnavailable(answer);
  }

  // Down: a check says so in the envelope, and readiness too; the liveness check still answers.
  expectUnavailable(await app.request('POST', '/v1/nin', { headers: key, body: { nin: '12345678905' } }));
  await outage.whileDown();
  expect((await app.request('GET', '/health/ready')).status).toBe(503);
  expect((await app.request('GET', '/v1/health')).status).toBe(200);

  await outage.start();

  // Back without a restart of the service.
  await until('a check to succeed again', async () => {
    const response = await app.request('POST', '/v1/nin', { headers: key, body: { nin: '12345678905' } });
    return response.status === 201 ? response : undefined;
  });
  expect((await app.request('GET', '/health/ready')).status).toBe(200);

  // The projection workers resumed on their own too; once they caught up, the recovery pass (run
  // now as if past its deadline) finds the checks the outage cut and settles them.
  // (Each projection's checkpoint moves with the events of its own streams only.)
  const before = await allEvents(app.eventStore);
  const lastOf = (prefix: string) => before.filter((event) => event.streamId.startsWith(prefix)).reduce((last, event) => (event.position > last ? event.position : last), 0n);
  const waiter = app.app.get(ProjectionWaiter);
  expect(await waiter.waitFor(['verifications'], lastOf('verification-'), RECOVERY_WAIT_MS)).toBe(true);
  expect(await waiter.waitFor(['wallets'], lastOf('wallet-'), RECOVERY_WAIT_MS)).toBe(true);
  await app.app.get(VerificationRecovery).runOnce(new Date(Date.now() + 60 * 60_000));

  // Readers see the log up to the oldest transaction still running (a projection batch, say), so
  // the recovery's last appends show a moment later: read until the log settles, then judge it.
  let log = await settlement(app);
  for (const deadline = Date.now() + 10_000; !log.settled && Date.now() < deadline;) {
    await new Promise((wait) => setTimeout(wait, 100));
    log = await settlement(app);
  }
  // Every verification finished once; every reservation captured or released exactly once; captured exactly the completed ones.
  for (const [reference, types] of log.verifications) {
    expect({ reference, finished: types.filter((type) => FINISHED.has(type)).length }).toEqual({ reference, finished: 1 });
  }
  expect([...log.debited, ...log.released].sort()).toEqual([...log.reserved].sort());
  expect([...log.debited].sort()).toEqual([...log.completed].sort());
  expect(new Set(log.reserved).size).toBe(log.reserved.length);
  // What each client was told agrees with the log: 201 charged, 502 not charged.
  for (const answer of answers.filter((a) => a.status === 201)) expect(log.debited).toContain(answer.body.data.reference);
  for (const answer of answers.filter((a) => a.status === 502)) expect(log.released).toContain(answer.body.error.details.reference);

  // And the read model, once the projections caught up, shows the same money.
  const expectedBalance = CREDIT_KOBO - NIN_PRICE_KOBO * log.completed.length;
  const balance = await until('the wallet read model to catch up', async () => {
    const response = await app.request('GET', '/v1/wallet', { headers: key });
    return response.status === 200 && response.body.data.reservedKobo === 0 && response.body.data.balanceKobo === expectedBalance ? response.body.data : undefined;
  });
  expect(balance).toMatchObject({ balanceKobo: expectedBalance, reservedKobo: 0, availableKobo: expectedBalance });
  process.stderr.write(
    `\n[outage] in flight: ${answers.filter((answer) => answer.status === 201).length} completed, ${answers.filter((answer) => answer.status === 503).length} answered 503; ${log.verifications.size} verifications, ${log.released.length} reservations released\n`,
  );
}

/** On a cluster of its own, so stopping it touches no other test. It holds the read models and, on this project, the event log. */
describeOnProject('postgres', 'When PostgreSQL goes away and comes back', 'the esdb project runs its own outage test, of EventStoreDB', () => {
  let dataDir: string;
  let port: number;
  let postgres: EmbeddedPostgresHandle;
  let app: TestApp;
  let key: Record<string, string>;

  const start = () => startEmbeddedPostgres({ dataDir, port, database: 'ledger', ephemeral: false });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ledger-outage-'));
    port = await freePort();
    postgres = await start();
    const database: TestDatabase = { url: postgres.url, name: 'ledger', drop: async () => undefined };
    app = await startTestApp({ database, env: { SANDBOX_CREDIT_KOBO: String(CREDIT_KOBO), PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS) } });
    const organization = await createOrganization(app);
    key = { 'x-service-key': (await issueKey(app, organization.id)).key };
  });
  afterAll(async () => {
    await app?.close();
    await postgres?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers 503 in the envelope while it is down, serves again on its own, and leaves no money held once recovery ran', () =>
    outageScenario(app, key, {
      stop: () => postgres.stop(),
      start: async () => {
        postgres = await start();
      },
      whileDown: async () => {
        expectUnavailable(await app.request('GET', '/v1/verifications', { headers: key }));
        expectUnavailable(await app.request('GET', '/v1/wallet', { headers: key }));
        expectUnavailable(await app.admin('POST', '/admin/v1/organizations', { name: 'During the outage', email: 'down@example.com' }));
      },
    }));
});

/** An EventStoreDB test server of its own, stopped and restarted on its port with its log; PostgreSQL (read models) stays up. */
describeOnProject('esdb', 'When EventStoreDB goes away and comes back', 'the postgres project stops PostgreSQL, which holds its event log, in its own outage test', () => {
  let server: EsdbTestServer;
  let database: TestDatabase;
  let app: TestApp;
  let key: Record<string, string>;

  beforeAll(async () => {
    server = await startEsdbTestServer({ statsIntervalMs: 0, settings: { readLagMs: DEFAULT_TEST_READ_LAG_MS } });
    database = await createTestDatabase();
    app = await startTestApp({
      database,
      env: {
        EVENT_STORE: 'esdb',
        EVENTSTORE_CONNECTION_STRING: server.connectionString,
        SANDBOX_CREDIT_KOBO: String(CREDIT_KOBO),
        PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
      },
    });
    const organization = await createOrganization(app);
    key = { 'x-service-key': (await issueKey(app, organization.id)).key };
  });
  afterAll(async () => {
    await app?.close();
    await server?.stop();
    await database?.drop();
  });

  it('answers 503 in the envelope while it is down, serves again on its own, and leaves no money held once recovery ran', () =>
    outageScenario(app, key, {
      stop: () => server.stop(),
      start: async () => {
        server = await startEsdbTestServer({ statsIntervalMs: 0, port: server.port, log: server.log, settings: { readLagMs: DEFAULT_TEST_READ_LAG_MS } });
      },
      whileDown: async () => {
        expectUnavailable(await app.admin('POST', '/admin/v1/organizations', { name: 'During the outage', email: 'down@example.com' }));
      },
    }));
});
