import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EventStoreDBClient } from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { IdGenerator } from '../../src/common/ids.js';
import { VerificationRecovery } from '../../src/verifications/recovery.js';
import { VerificationStreams } from '../../src/verifications/verification.stream.js';
import { WalletLedger } from '../../src/wallets/wallet-ledger.port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { testEventStoreEnv, withoutReadLag } from '../support/event-store.js';
import { createOrganization } from '../support/fixtures.js';

const PRICE_KOBO = 10_000;
const DEADLINE_MS = 60_000;
/** One recovery pass settles at most this many checks (recovery.ts). */
const PASS_BATCH = 100;
const context = { correlationId: 'unsettled-test', actor: SYSTEM_ACTOR };

/**
 * Checks that recovery cannot settle (a wallet stream an operator deleted by hand on EventStoreDB,
 * a verification stream holding an event the service cannot fold on PostgreSQL) must neither fill
 * every pass nor stop it: a newer check left open is still settled, and the stuck ones are
 * counted where operators look (metric, readiness, admin API).
 */
describe('Recovery with checks it cannot settle', () => {
  let app: TestApp;
  let streams: VerificationStreams;
  let ledger: WalletLedger;
  let recovery: VerificationRecovery;
  const pastDeadline = () => new Date(Date.now() + DEADLINE_MS + 1_000);

  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: '0', SCOPE_PRICES: `nin=${PRICE_KOBO}`, RECOVERY_DEADLINE_MS: String(DEADLINE_MS), RECOVERY_INTERVAL_MS: '3600000' } });
    streams = app.app.get(VerificationStreams);
    ledger = app.app.get(WalletLedger);
    recovery = app.app.get(VerificationRecovery);
  });
  afterAll(async () => app?.close());

  /** What a handler killed right after reserving leaves: the request and its reservation. */
  async function killedAfterReserve(organizationId: string): Promise<string> {
    const reference = app.app.get(IdGenerator).reference();
    await streams.request(
      {
        type: 'RequestVerification',
        data: {
          reference,
          organizationId,
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
      context,
    );
    expect(await ledger.reserve({ organizationId, environment: 'test' }, { reference, amountKobo: PRICE_KOBO, scope: 'nin' }, context)).toEqual({ reserved: true });
    return reference;
  }

  async function funded(count: number): Promise<string> {
    const org = await createOrganization(app);
    const funding = await app.admin('POST', `/admin/v1/organizations/${org.id}/wallets/test/fundings`, { amountKobo: count * PRICE_KOBO, reference: `fund-${randomUUID()}` });
    expect(funding.status).toBe(201);
    return org.id;
  }

  /** Damages what recovery needs to settle these checks, as an operator's hand would. */
  async function damage(organizationId: string, references: readonly string[]): Promise<void> {
    if (app.eventStoreKind === 'esdb') {
      const operator = EventStoreDBClient.connectionString((await testEventStoreEnv(app.database)).EVENTSTORE_CONNECTION_STRING as string);
      try {
        await operator.deleteStream(`wallet-${organizationId}.test`);
      } finally {
        await operator.dispose();
      }
      return;
    }
    // The PostgreSQL log refuses deletes; an event the verification decider does not know stops its fold instead.
    for (const reference of references) {
      await app.eventStore.append(`verification-${reference}`, [{ id: randomUUID(), type: 'VerificationTampered', data: { reference }, metadata: {} }], {
        expectedRevision: 'any',
      });
    }
  }

  it('a newer check is still captured past 100 that cannot be settled, and those are reported by metric, readiness and admin API', async () => {
    const stuckOrg = await funded(PASS_BATCH);
    const stuck = await withoutReadLag(app.database, async () => {
      const references: string[] = [];
      for (let i = 0; i < PASS_BATCH; i += 1) references.push(await killedAfterReserve(stuckOrg));
      return references;
    });
    await damage(stuckOrg, stuck);
    // A newer check killed after it completed but before its capture: only its reservation is left open.
    const laterOrg = await funded(1);
    const later = await killedAfterReserve(laterOrg);
    expect((await streams.finish(later, await streams.load(later), { type: 'CompleteVerification', outcome: 'found', result: {}, at: new Date() }, context)).won).toBe(true);
    const laterWallet = async () => (await app.eventStore.readStream(`wallet-${laterOrg}.test`, { maxCount: 10 })).map((event) => event.type);

    // Passes run until the later check is captured, or give up: the read models must first list it.
    // A pass that fails fails the test. The budget is generous: a pass over the 100 takes seconds on a loaded machine.
    const deadline = Date.now() + 60_000;
    while (!(await laterWallet()).includes('WalletDebited') && Date.now() < deadline) {
      await recovery.runOnce(pastDeadline());
      await new Promise((wake) => setTimeout(wake, 100));
    }
    expect((await streams.load(later)).status).toBe('found');
    expect(await laterWallet()).toEqual(['WalletFunded', 'WalletFundsReserved', 'WalletDebited']);

    // The stuck ones are counted, not silently skipped.
    const report = await recovery.runOnce(pastDeadline());
    expect(report.unsettled).toBe(PASS_BATCH);

    const metrics = await fetch(`${app.baseUrl}/metrics`).then((response) => response.text());
    expect(metrics).toMatch(new RegExp(`^ivl_recovery_unsettled_checks ${PASS_BATCH}$`, 'm'));

    const ready = await app.request('GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.data.status).toBe('degraded');
    expect(ready.body.data.checks.recovery).toEqual({ status: 'unsettled', unsettledChecks: PASS_BATCH });
    expect(ready.body.data.reasons).toEqual([expect.stringContaining(`${PASS_BATCH} checks`)]);

    const listed = await app.admin('GET', '/admin/v1/recovery/unsettled?pageSize=100');
    expect(listed.status).toBe(200);
    expect(listed.body.meta.total).toBe(PASS_BATCH);
    expect(listed.body.data.map((row: { reference: string }) => row.reference).sort()).toEqual([...stuck].sort());
    expect(listed.body.data[0]).toEqual({
      reference: expect.any(String),
      organizationId: stuckOrg,
      environment: 'test',
      reason: expect.any(String),
      attempts: expect.any(Number),
      firstFailedAt: expect.any(String),
      lastFailedAt: expect.any(String),
      nextAttemptAt: expect.any(String),
    });
    // The reason names the fault, never the check's personal data.
    expect(JSON.stringify(listed.body)).not.toContain('12345678905');
  });
});
