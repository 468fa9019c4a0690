import { afterAll, afterEach, beforeAll, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { EsdbEventStore } from '../../src/event-store/esdb-event-store.js';
import { WalletLedger } from '../../src/wallets/wallet-ledger.port.js';
import type { EsdbTestServerControl } from '../esdb-server/control.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { DEFAULT_TEST_READ_LAG_MS, testEventStoreControl, testEventStoreEnv } from '../support/event-store.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { describeOnProject } from '../support/store-independent.js';

const PRICE_KOBO = 10_000;
/** Reads trail acknowledged writes by this much: as a follower serves them, shorter than the kernel's re-reads (about 1.3 s). */
const FOLLOWER_LAG_MS = 400;

/*
 * Reads that trail acknowledged writes (a follower, or a node that has just lost leadership) must
 * make the wallet wait for an event it wrote, never take it for lost and decide on older data.
 */
describeOnProject('esdb', 'Wallet decisions when reads trail acknowledged writes', 'EventStoreDB reads only: PostgreSQL reads see every committed append', () => {
  let app: TestApp;
  let control: EsdbTestServerControl;

  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: '0', SCOPE_PRICES: `nin=${PRICE_KOBO}` } });
    control = (await testEventStoreControl(app.database)) as EsdbTestServerControl;
  });
  afterEach(async () => {
    await control?.configure({ readLagMs: DEFAULT_TEST_READ_LAG_MS, acknowledge: 'indexed' });
    await control?.whenIndexed();
  });
  afterAll(async () => app?.close());

  it('refuses a connection string that prefers a follower or a read-only replica, whose reads trail the writes', async () => {
    const { EVENTSTORE_CONNECTION_STRING: connection } = await testEventStoreEnv(app.database);
    for (const preference of ['follower', 'readOnlyReplica', 'random', 'FOLLOWER']) {
      expect(() => new EsdbEventStore(`${connection}&nodePreference=${preference}`)).toThrow(/nodePreference must be leader/);
    }
    const leader = new EsdbEventStore(`${connection}&nodePreference=leader`);
    await leader.close();
  });

  it('a funding acknowledged before it is readable: the check right after waits for it and is charged once, no false 402', async () => {
    const org = await createOrganization(app);
    const { key } = await issueKey(app, org.id);
    const wallet = { organizationId: org.id, environment: 'test' as const };
    const ledger = app.app.get(WalletLedger);
    // The wallet's fold is held by this instance (a first funding, readable).
    await ledger.fund(wallet, { fundingReference: `first-${randomUUID()}`, amountKobo: 1 }, { correlationId: 'follower-test', actor: SYSTEM_ACTOR });
    await control.whenIndexed();

    await control.configure({ readLagMs: FOLLOWER_LAG_MS, acknowledge: 'written' });
    await ledger.fund(wallet, { fundingReference: `second-${randomUUID()}`, amountKobo: PRICE_KOBO }, { correlationId: 'follower-test', actor: SYSTEM_ACTOR });
    const response = await app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: { 'x-service-key': key } });
    expect({ status: response.status, code: response.body.error?.code }).toEqual({ status: 201, code: undefined });
    expect(response.body.data.charged).toBe(true);

    await control.configure({ readLagMs: DEFAULT_TEST_READ_LAG_MS, acknowledge: 'indexed' });
    await control.whenIndexed();
    const events = await app.eventStore.readStream(`wallet-${org.id}.test`, { maxCount: 100 });
    expect(events.map((event) => event.type)).toEqual(['WalletFunded', 'WalletFunded', 'WalletFundsReserved', 'WalletDebited']);
    expect(await ledger.balance(wallet)).toEqual({ balanceKobo: 1, reservedKobo: 0, availableKobo: 1 });
  });
});
