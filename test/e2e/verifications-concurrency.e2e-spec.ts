import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { IdGenerator } from '../../src/common/ids.js';
import { Clock } from '../../src/common/clock.js';
import { PG_POOL } from '../../src/database/pool.js';
import type pg from 'pg';
import { EVENT_STORE, type EventStore, type RecordedEvent } from '../../src/event-store/event-store.port.js';
import { RECOVERED_MESSAGE, VerificationRecovery } from '../../src/verifications/recovery.js';
import { OUTCOME_UNKNOWN, OUTCOME_UNKNOWN_MESSAGE, VerificationStreams } from '../../src/verifications/verification.stream.js';
import { WalletLedger } from '../../src/wallets/wallet-ledger.port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { DEFAULT_TEST_READ_LAG_MS, testEventStoreControl } from '../support/event-store.js';
import { describeOnProject } from '../support/store-independent.js';
import type { EsdbTestServerControl } from '../esdb-server/control.js';

const PRICE_KOBO = 10_000;

/** Replays a wallet stream and asserts the available balance is never negative at any event. */
function assertNeverOverdrawn(events: readonly RecordedEvent[]): { balanceKobo: number; reservedKobo: number } {
  let funded = 0;
  let debited = 0;
  const open = new Map<string, number>();
  for (const event of events) {
    const amount = Number(event.data.amountKobo);
    const reference = String(event.data.reference ?? event.data.fundingReference);
    if (event.type === 'WalletFunded') funded += amount;
    if (event.type === 'WalletFundsReserved') open.set(reference, amount);
    if (event.type === 'WalletDebited') {
      debited += amount;
      open.delete(reference);
    }
    if (event.type === 'WalletReservationReleased') open.delete(reference);
    const reserved = [...open.values()].reduce((sum, value) => sum + value, 0);
    expect(funded - debited - reserved).toBeGreaterThanOrEqual(0);
  }
  return { balanceKobo: funded - debited, reservedKobo: [...open.values()].reduce((sum, value) => sum + value, 0) };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((wake) => setTimeout(wake, 25));
  }
}

describe('Concurrent checks on one wallet, across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const env = { SANDBOX_CREDIT_KOBO: '0', SCOPE_PRICES: `nin=${PRICE_KOBO}`, DB_POOL_SIZE: '30' };
    a = await startTestApp({ env });
    b = await startTestApp({ env, database: a.database });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a wallet funded for exactly 10 checks, hit by 100 concurrent requests: exactly 10 charged, 90 × 402, balance 0, never negative', async () => {
    const org = await createOrganization(a);
    const { key } = await issueKey(a, org.id);
    expect((await a.admin('POST', `/admin/v1/organizations/${org.id}/wallets/test/fundings`, { amountKobo: 10 * PRICE_KOBO, reference: 'exactly-ten' })).status).toBe(201);

    const responses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).request('POST', '/v1/nin', { body: { nin: `1234567890${5 + (i % 5)}` }, headers: { 'x-service-key': key } })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(90);
    for (const response of responses.filter((r) => r.status === 402)) {
      expect(response.body.error.details).toEqual({ reference: expect.stringMatching(/^vrf_/), priceKobo: PRICE_KOBO, balanceKobo: expect.any(Number) });
      expect(response.body.error.details.balanceKobo).toBeLessThan(PRICE_KOBO);
    }

    const store = a.app.get<EventStore>(EVENT_STORE);
    const walletEvents = await store.readStream(`wallet-${org.id}.test`, { maxCount: 10_000 });
    expect(assertNeverOverdrawn(walletEvents)).toEqual({ balanceKobo: 0, reservedKobo: 0 });
    expect(walletEvents.filter((event) => event.type === 'WalletDebited')).toHaveLength(10);
    expect(await a.app.get(WalletLedger).balance({ organizationId: org.id, environment: 'test' })).toEqual({ balanceKobo: 0, reservedKobo: 0, availableKobo: 0 });
    const charged = responses.filter((r) => r.status === 201).map((r) => r.body.data.reference as string);
    for (const reference of charged)
      expect(walletEvents.filter((event) => event.data.reference === reference).map((event) => event.type)).toEqual(['WalletFundsReserved', 'WalletDebited']);
    // Both instances wrote the stream; the expected-revision appends kept its hash chain linear.
    const history = await b.admin('GET', `/admin/v1/organizations/${org.id}/wallets/test/history?pageSize=1`);
    expect(history.body.meta).toMatchObject({
      total: walletEvents.length,
      balance: { balanceKobo: 0, reservedKobo: 0 },
      chain: { verified: true, hashedEvents: walletEvents.length, breaks: 0 },
    });

    const listed = await eventually(
      () => b.request('GET', '/v1/verifications?status=found&pageSize=100', { headers: { 'x-service-key': key } }),
      (r) => r.body.meta?.total === 10,
    );
    expect(listed.body.meta.total).toBe(10);
    const failed = await eventually(
      () => a.request('GET', '/v1/verifications?status=failed&pageSize=100', { headers: { 'x-service-key': key } }),
      (r) => r.body.meta?.total === 90,
    );
    expect(failed.body.meta).toEqual({ total: 90, page: 1, pageSize: 100, totalPages: 1 });
  });
});

const CRASH_DEADLINE_MS = 60_000;
const crashContext = { correlationId: 'crash-test', actor: SYSTEM_ACTOR };

/** One app with its recovery, an organization and a key; recovery runs only when a test says so. */
interface CrashRig {
  readonly app: TestApp;
  readonly store: EventStore;
  readonly recovery: VerificationRecovery;
  readonly streams: VerificationStreams;
  readonly ledger: WalletLedger;
  readonly org: { readonly id: string };
  readonly key: string;
}

async function startCrashRig(env: Record<string, string> = {}): Promise<CrashRig> {
  const app = await startTestApp({ env: { RECOVERY_DEADLINE_MS: String(CRASH_DEADLINE_MS), RECOVERY_INTERVAL_MS: '3600000', ...env } });
  const org = await createOrganization(app);
  return {
    app,
    store: app.app.get<EventStore>(EVENT_STORE),
    recovery: app.app.get(VerificationRecovery),
    streams: app.app.get(VerificationStreams),
    ledger: app.app.get(WalletLedger),
    org,
    key: (await issueKey(app, org.id)).key,
  };
}

const walletStream = (rig: CrashRig) => `wallet-${rig.org.id}.test`;
const walletOf = (rig: CrashRig) => ({ organizationId: rig.org.id, environment: 'test' as const });
/** A time past the recovery deadline of everything started until now. */
const pastDeadline = () => new Date(Date.now() + CRASH_DEADLINE_MS + 1_000);

/** What a handler has written when it is killed right after reserving: the request and the reservation. */
async function killedAfterReserve(rig: CrashRig): Promise<string> {
  const reference = rig.app.app.get(IdGenerator).reference();
  await rig.streams.request(
    {
      type: 'RequestVerification',
      data: {
        reference,
        organizationId: rig.org.id,
        environment: 'test',
        keyId: 'key_crashed',
        scope: 'nin',
        category: 'kyc',
        countryCode: 'NG',
        request: { nin: '12345678905' },
        priceKobo: PRICE_KOBO,
        requestedAt: new Date().toISOString(),
      },
    },
    crashContext,
  );
  expect(await rig.ledger.reserve(walletOf(rig), { reference, amountKobo: PRICE_KOBO, scope: 'nin' }, crashContext)).toEqual({ reserved: true });
  return reference;
}

/** The types of a stream's events, those of one reference only when given. */
const typesOf = async (rig: CrashRig, streamId: string, reference?: string) =>
  (await rig.store.readStream(streamId, { maxCount: 10_000 })).filter((event) => reference === undefined || event.data.reference === reference).map((event) => event.type);

describe('Crash safety and recovery', () => {
  let rig: CrashRig;
  let app: TestApp;
  let store: EventStore;
  let recovery: VerificationRecovery;
  let streams: VerificationStreams;
  let ledger: WalletLedger;
  let org: { id: string };
  let key: string;
  const context = crashContext;

  beforeAll(async () => {
    rig = await startCrashRig();
    ({ app, store, recovery, streams, ledger, org, key } = rig);
  });
  afterAll(async () => app?.close());

  it('judges staleness by the database clock: an instance whose own clock runs ahead fails no check still within its deadline', async () => {
    const reference = await killedAfterReserve(rig);
    const pool = app.app.get<symbol, pg.Pool>(PG_POOL);
    // In the read model recovery reads, reserved just now.
    await eventually(
      async () => (await pool.query('select 1 from wallet_reservations where reference = $1', [reference])).rowCount,
      (count) => count === 1,
    );
    const clock = app.app.get(Clock);
    const ownNow = clock.now;
    clock.now = () => new Date(Date.now() + CRASH_DEADLINE_MS + 5_000);
    try {
      await recovery.runOnce();
    } finally {
      clock.now = ownNow;
    }
    expect(await typesOf(rig, `verification-${reference}`)).toEqual(['VerificationRequested']);
    expect(await typesOf(rig, walletStream(rig), reference)).toEqual(['WalletFundsReserved']);
    // Past the deadline (as a test moves time: an explicit time, the same distance ahead of the database's), it is settled.
    await recovery.runOnce(pastDeadline());
    expect(await typesOf(rig, `verification-${reference}`)).toEqual(['VerificationRequested', 'VerificationFailed']);
  });

  const wallet = () => walletOf(rig);
  const later = pastDeadline;

  async function recoverUntil(reference: string): Promise<void> {
    await eventually(
      async () => {
        await recovery.runOnce(later());
        return (await streams.load(reference)).status;
      },
      (status) => status !== 'pending',
    );
  }

  it('a handler killed between reserving and calling the provider: recovery fails the check, uncharged, and releases the money', async () => {
    const before = await ledger.balance(wallet());
    const reference = await killedAfterReserve(rig);
    expect((await ledger.balance(wallet())).reservedKobo).toBe(before.reservedKobo + PRICE_KOBO);
    // Not yet past the deadline: nothing happens.
    await recovery.runOnce(new Date());
    expect((await streams.load(reference)).status).toBe('pending');

    await recoverUntil(reference);
    expect(await typesOf(rig, `verification-${reference}`)).toEqual(['VerificationRequested', 'VerificationFailed']);
    const failed = (await store.readStream(`verification-${reference}`, { maxCount: 10 }))[1];
    expect(failed.data.reasonCode).toBe('recovered_timeout');
    expect(await typesOf(rig, `wallet-${org.id}.test`, reference)).toEqual(['WalletFundsReserved', 'WalletReservationReleased']);
    expect(await ledger.balance(wallet())).toEqual(before);

    const got = await eventually(
      () => app.request('GET', `/v1/verifications/${reference}`, { headers: { 'x-service-key': key } }),
      (r) => r.status === 200,
    );
    expect(got.body.data).toMatchObject({ status: 'failed', charged: false, errorMessage: expect.stringContaining('not charged') });

    // A second pass, and a late request trying to finish it, change nothing.
    await recovery.runOnce(later());
    const late = await streams.finish(
      reference,
      { ...(await streams.load(reference)), status: 'pending' } as never,
      { type: 'CompleteVerification', outcome: 'found', result: {}, at: new Date() },
      context,
    );
    expect(late.won).toBe(false);
    expect(late.state.status).toBe('failed');
    expect(await typesOf(rig, `verification-${reference}`)).toEqual(['VerificationRequested', 'VerificationFailed']);
    expect(await typesOf(rig, `wallet-${org.id}.test`, reference)).toEqual(['WalletFundsReserved', 'WalletReservationReleased']);
  });

  it('a handler killed after completing but before capturing: recovery captures, exactly once', async () => {
    const before = await ledger.balance(wallet());
    const reference = await killedAfterReserve(rig);
    const pending = await streams.load(reference);
    expect((await streams.finish(reference, pending, { type: 'CompleteVerification', outcome: 'not_found', result: {}, at: new Date() }, context)).won).toBe(true);
    await eventually(
      async () => {
        await recovery.runOnce(later());
        return typesOf(rig, `wallet-${org.id}.test`, reference);
      },
      (types) => types.includes('WalletDebited'),
    );
    await recovery.settle(reference, wallet(), later());
    expect(await typesOf(rig, `wallet-${org.id}.test`, reference)).toEqual(['WalletFundsReserved', 'WalletDebited']);
    expect((await ledger.balance(wallet())).balanceKobo).toBe(before.balanceKobo - PRICE_KOBO);
  });

  it('when the request and the recovery race to finish one verification, exactly one terminal event is written', async () => {
    const reference = await killedAfterReserve(rig);
    const pending = await streams.load(reference);
    const [request, recovered] = await Promise.all([
      streams.finish(reference, pending, { type: 'CompleteVerification', outcome: 'found', result: { firstName: 'Ada' }, at: new Date() }, context),
      recovery.settle(reference, wallet(), later()),
    ]);
    const types = await typesOf(rig, `verification-${reference}`);
    expect(types).toHaveLength(2);
    const winner = types[1];
    expect(request.won).toBe(winner === 'VerificationCompleted');
    expect(recovered).toBe(winner === 'VerificationCompleted' ? 'captured' : 'failed');
    // The money follows the winner.
    const walletTypes = await typesOf(rig, `wallet-${org.id}.test`, reference);
    expect(walletTypes).toEqual(['WalletFundsReserved', winner === 'VerificationCompleted' ? 'WalletDebited' : 'WalletReservationReleased']);
  });
});

/**
 * KurrentDB reads see only what its index holds, and an append can commit while its answer is lost.
 * These run on the esdb project, where the test server's control stretches the index lag and makes
 * appends time out; the postgres event log has no index lag, and its lost answers are another
 * suite's (a dropped connection mid-commit).
 */
describeOnProject(
  'esdb',
  'Settling behind a lagging index, and appends whose outcome is unknown',
  "it stretches the EventStoreDB test server's index lag and times its appends out",
  () => {
    let rig: CrashRig;
    let control: EsdbTestServerControl;
    const walletStream = () => `wallet-${rig.org.id}.test`;
    const headers = () => ({ 'x-service-key': rig.key });

    beforeAll(async () => {
      rig = await startCrashRig({ PROVIDER_TIMEOUT_MS: '1500' });
      control = (await testEventStoreControl(rig.app.database)) as EsdbTestServerControl;
    });
    afterEach(async () => {
      await control.clearFaults();
      await control.configure({ readLagMs: DEFAULT_TEST_READ_LAG_MS, acknowledge: 'indexed' });
      // What a test wrote under a longer lag would hold up the next one's reads (the index keeps log order).
      await control.whenIndexed();
    });
    afterAll(async () => rig?.app.close());

    /** The reference of the next reservation a request makes in this wallet. */
    async function nextReservation(): Promise<string> {
      const known = new Set((await rig.store.readStream(walletStream(), { maxCount: 10_000 })).map((event) => String(event.data.reference)));
      const reserved = await eventually(
        async () =>
          (await rig.store.readStream(walletStream(), { maxCount: 10_000 })).filter((event) => event.type === 'WalletFundsReserved' && !known.has(String(event.data.reference))),
        (events) => events.length > 0,
      );
      expect(reserved).toHaveLength(1);
      return String(reserved[0].data.reference);
    }

    it('recovery refused by a request whose completion it cannot read yet captures the charge; it never releases it', async () => {
      const reference = await killedAfterReserve(rig);
      const pending = await rig.streams.load(reference);
      await control.configure({ readLagMs: 500 });
      // The request's completion is written at once and readable 500 ms later.
      const request = rig.streams.finish(reference, pending, { type: 'CompleteVerification', outcome: 'found', result: {}, at: new Date() }, crashContext);
      await sleep(50);
      expect(await rig.recovery.settle(reference, walletOf(rig), pastDeadline())).toBe('captured');
      expect((await request).won).toBe(true);
      expect(await typesOf(rig, `verification-${reference}`)).toEqual(['VerificationRequested', 'VerificationCompleted']);
      expect(await typesOf(rig, walletStream(), reference)).toEqual(['WalletFundsReserved', 'WalletDebited']);
    });

    it('a terminal event that stays unreadable through the re-reads: recovery moves no money and settles it on a later pass', async () => {
      const reference = await killedAfterReserve(rig);
      const pending = await rig.streams.load(reference);
      // Longer than the re-reads (about 2.5 s), so acknowledged on write: a node waiting that long
      // for its index would answer its own 2 s commit timeout instead.
      await control.configure({ readLagMs: 4_000, acknowledge: 'written' });
      expect((await rig.streams.finish(reference, pending, { type: 'CompleteVerification', outcome: 'not_found', result: {}, at: new Date() }, crashContext)).won).toBe(true);
      expect(await rig.recovery.settle(reference, walletOf(rig), pastDeadline())).toBe('skipped');
      expect(await typesOf(rig, walletStream(), reference)).toEqual(['WalletFundsReserved']);
      await control.configure({ readLagMs: DEFAULT_TEST_READ_LAG_MS, acknowledge: 'indexed' });
      // Everything written under the long lag (the node's own stats events too) readable before the next pass.
      await control.whenIndexed();
      expect((await rig.streams.load(reference)).status).toBe('not_found');
      expect(await rig.recovery.settle(reference, walletOf(rig), pastDeadline())).toBe('captured');
      expect(await typesOf(rig, walletStream(), reference)).toEqual(['WalletFundsReserved', 'WalletDebited']);
    });

    it('a request refused by recovery answers by the winner (502, not charged), never 201 pending', async () => {
      // Digit 3: the sandbox holds the check until the provider timeout (1.5 s); recovery fails it
      // meanwhile, readable only 2.5 s later, after the request's own terminal append was refused.
      const inFlight = rig.app.request('POST', '/v1/nin', { body: { nin: '12345678903' }, headers: headers() });
      const reference = await nextReservation();
      // Acknowledged on write: a node waiting 2.5 s for its index would answer its 2 s commit timeout.
      await control.configure({ readLagMs: 2_500, acknowledge: 'written' });
      const recovered = rig.recovery.settle(reference, walletOf(rig), pastDeadline());
      const response = await inFlight;
      expect({ status: response.status, error: response.body.error }).toMatchObject({
        status: 502,
        error: { code: 'provider_failed', message: RECOVERED_MESSAGE, details: { reference } },
      });
      expect(await recovered).toBe('failed');
      await control.whenIndexed();
      expect(await typesOf(rig, `verification-${reference}`)).toEqual(['VerificationRequested', 'VerificationFailed']);
      expect(await typesOf(rig, walletStream(), reference)).toEqual(['WalletFundsReserved', 'WalletReservationReleased']);
    });

    it('a completion that commits but times out: the request reads it back and answers 201, charged, as the wallet holds it', async () => {
      await control.failAppends({ outcome: 'commit-then-timeout', eventType: 'VerificationCompleted' });
      const response = await rig.app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: headers() });
      expect(response.status).toBe(201);
      expect(response.body.data).toMatchObject({ status: 'found', charged: true });
      const reference = response.body.data.reference as string;
      expect(await typesOf(rig, `verification-${reference}`)).toEqual(['VerificationRequested', 'VerificationCompleted']);
      expect(await typesOf(rig, walletStream(), reference)).toEqual(['WalletFundsReserved', 'WalletDebited']);
      expect(await control.clearFaults()).toBe(0);
    });

    it('a completion that times out unwritten: the check is failed in its place, released, and the client told 503 (not charged) with the reference', async () => {
      await control.failAppends({ outcome: 'timeout-without-commit', eventType: 'VerificationCompleted' });
      const response = await rig.app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: headers() });
      expect({ status: response.status, code: response.body.error?.code, message: response.body.error?.message }).toEqual({
        status: 503,
        code: 'service_unavailable',
        message: OUTCOME_UNKNOWN_MESSAGE,
      });
      const reference = response.body.error.details.reference as string;
      const events = await rig.store.readStream(`verification-${reference}`, { maxCount: 10 });
      expect(events.map((event) => [event.type, event.data.reasonCode])).toEqual([
        ['VerificationRequested', undefined],
        ['VerificationFailed', OUTCOME_UNKNOWN],
      ]);
      expect(await typesOf(rig, walletStream(), reference)).toEqual(['WalletFundsReserved', 'WalletReservationReleased']);
      const shown = await eventually(
        () => rig.app.request('GET', `/v1/verifications/${reference}`, { headers: headers() }),
        (r) => r.status === 200,
      );
      expect(shown.body.data).toMatchObject({ status: 'failed', charged: false });
    });

    it('a reservation that commits but whose answer is lost: 503 with the reference, the check failed and its price released', async () => {
      await control.failAppends({ outcome: 'commit-then-timeout', eventType: 'WalletFundsReserved' });
      const response = await rig.app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: headers() });
      expect({ status: response.status, code: response.body.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
      const reference = response.body.error.details.reference as string;
      expect(reference).toMatch(/^vrf_/);
      await control.whenIndexed();
      expect(await typesOf(rig, `verification-${reference}`)).toEqual(['VerificationRequested', 'VerificationFailed']);
      expect(await typesOf(rig, walletStream(), reference)).toEqual(['WalletFundsReserved', 'WalletReservationReleased']);
      const shown = await eventually(
        () => rig.app.request('GET', `/v1/verifications/${reference}`, { headers: headers() }),
        (r) => r.status === 200,
      );
      expect(shown.body.data).toMatchObject({ status: 'failed', charged: false });
    });
  },
);

describe('Graceful shutdown and the embedded default', () => {
  it('closing the app mid-check lets the in-flight check finish and release its reservation', async () => {
    const database = await createTestDatabase();
    const app = await startTestApp({ env: { PROVIDER_TIMEOUT_MS: '1500' }, database });
    let closed = false;
    try {
      const org = await createOrganization(app);
      const { key } = await issueKey(app, org.id);
      const ledger = app.app.get(WalletLedger);
      const before = await ledger.balance({ organizationId: org.id, environment: 'test' });
      // Digit 3: the sandbox hangs until the provider timeout.
      const inFlight = app.request('POST', '/v1/nin', { body: { nin: '12345678903' }, headers: { 'x-service-key': key } });
      await eventually(
        async () => (await ledger.balance({ organizationId: org.id, environment: 'test' })).reservedKobo,
        (reserved) => reserved > 0,
      );
      const closing = app.close();
      closed = true;
      const response = await inFlight;
      await closing;
      expect(response.status).toBe(502);
      const reference = response.body.error.details.reference;
      // The stores are closed with the app: read the outcome through a fresh instance on the same database.
      const reader = await startTestApp({ database });
      try {
        const events = await reader.app.get<EventStore>(EVENT_STORE).readStream(`verification-${reference}`, { maxCount: 10 });
        expect(events.map((event) => event.type)).toEqual(['VerificationRequested', 'VerificationFailed']);
        expect(await reader.app.get(WalletLedger).balance({ organizationId: org.id, environment: 'test' })).toEqual(before);
      } finally {
        await reader.close();
      }
    } finally {
      if (!closed) await app.close();
      await database.drop();
    }
  });

  it('on the embedded default, live keys of an approved organization run on the sandbox, charged to the live wallet, listed apart from test checks', async () => {
    const app = await startTestApp({ embedded: true });
    try {
      const org = await createOrganization(app, { approved: true });
      const live = await issueKey(app, org.id, { environment: 'live' });
      const test = await issueKey(app, org.id);
      const headers = { 'x-service-key': live.key };
      const unfunded = await app.request('POST', '/v1/bvn', { body: { bvn: '22345678905' }, headers });
      expect(unfunded.status).toBe(402);
      expect(unfunded.body.error.details).toEqual({ reference: expect.any(String), priceKobo: 10_000, balanceKobo: 0 });
      expect((await app.admin('POST', `/admin/v1/organizations/${org.id}/wallets/live/fundings`, { amountKobo: 50_000, reference: 'live-1' })).status).toBe(201);
      const run = await app.request('POST', '/v1/bvn', { body: { bvn: '22345678905' }, headers });
      expect(run.status).toBe(201);
      expect(run.body.data).toMatchObject({ status: 'found', charged: true });
      expect(await app.app.get(WalletLedger).balance({ organizationId: org.id, environment: 'live' })).toEqual({ balanceKobo: 40_000, reservedKobo: 0, availableKobo: 40_000 });
      const liveList = await eventually(
        () => app.request('GET', '/v1/verifications', { headers }),
        (r) => r.body.meta?.total === 2,
      );
      expect(liveList.body.meta.total).toBe(2);
      expect((await app.request('GET', '/v1/verifications', { headers: { 'x-service-key': test.key } })).body.meta.total).toBe(0);
      expect((await app.request('GET', `/v1/verifications/${run.body.data.reference}`, { headers: { 'x-service-key': test.key } })).status).toBe(404);
    } finally {
      await app.close();
    }
  });
});
