import { expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { JsonObject } from '../../src/event-store/event-store.port.js';
import { allEvents, useTestEventStore, withoutReadLag } from '../../test/support/event-store.js';
import { describeOnProject } from '../../test/support/store-independent.js';
import type { Projection } from '../projection.js';
import { runUntilCheckpoint } from '../runner/counting.projection.testing.js';
import { ProjectionRunner } from '../runner/projection-runner.js';
import { writeSampleLog } from '../../src/event-store/postgres-sample-log.testing.js';
import { verificationsProjection } from '../verifications/verifications.projection.js';
import { walletLedgerProjection } from '../wallet-ledger/wallet-ledger.projection.js';
import { discardRebuild, rebuildProjection } from './rebuild.js';
import { compareTables } from './verify.js';

const db = useTestEventStore({ poolSize: 8 });

const ORGANIZATION = 'org_fold';
const TEST_WALLET = `wallet-${ORGANIZATION}.test`;
const LIVE_WALLET = `wallet-${ORGANIZATION}.live`;
const paged = (table: string) => `${table}__paged`;
let minute = 0;
/** Each event a minute after the one before, stamped as the service stamps them. */
const nextTime = () => new Date(Date.UTC(2026, 10, 20, 9, minute++)).toISOString();

async function append(streamId: string, type: string, data: JsonObject, metadata: JsonObject = { occurredAt: nextTime() }): Promise<void> {
  await db.store.append(streamId, [{ id: randomUUID(), type, data: { schemaVersion: 1, ...data }, metadata }], { expectedRevision: 'any' });
}

const verification = (reference: string) => `verification-${reference}`;
const requested = (reference: string, overrides: JsonObject = {}) =>
  append(verification(reference), 'VerificationRequested', {
    reference,
    organizationId: ORGANIZATION,
    environment: 'test',
    keyId: 'key_fold',
    scope: 'nin',
    category: 'kyc',
    countryCode: 'NG',
    request: { sealed: `request of ${reference}` },
    priceKobo: 10_000,
    requestedAt: nextTime(),
    ...overrides,
  });
const completed = (reference: string, outcome: 'found' | 'not_found', result?: JsonObject) =>
  append(verification(reference), 'VerificationCompleted', { reference, outcome, ...(result === undefined ? {} : { result }), completedAt: nextTime() });
const failed = (reference: string, reasonCode?: string) =>
  append(verification(reference), 'VerificationFailed', {
    reference,
    errorMessage: 'The provider did not answer',
    ...(reasonCode === undefined ? {} : { reasonCode }),
    failedAt: nextTime(),
  });
const rejected = (reference: string) =>
  append(verification(reference), 'VerificationRejected', { reference, errorMessage: 'Refused', reasonCode: 'scope_not_allowed', rejectedAt: nextTime() });
const erased = (reference: string, erasedAt: string | null) => append(verification(reference), 'VerificationPersonalDataErased', { reference, erasedAt });

const wallet = (stream: string) => ({ organizationId: ORGANIZATION, environment: stream === LIVE_WALLET ? 'live' : 'test' });
const funded = (stream: string, amountKobo: number, metadata?: JsonObject) =>
  append(stream, 'WalletFunded', { ...wallet(stream), fundingReference: `funding-${minute}`, amountKobo }, metadata);
const reserved = (stream: string, reference: string, amountKobo: number, scope?: string) =>
  append(stream, 'WalletFundsReserved', { ...wallet(stream), reference, amountKobo, ...(scope === undefined ? {} : { scope }) });
const debited = (stream: string, reference: string, amountKobo: number) => append(stream, 'WalletDebited', { ...wallet(stream), reference, amountKobo });
const released = (stream: string, reference: string, amountKobo: number) =>
  append(stream, 'WalletReservationReleased', { ...wallet(stream), reference, amountKobo, reason: 'provider_failed' });

/** The odd cases the projections handle, after a sample log of ordinary ones. */
async function writeOddLog(): Promise<void> {
  // Verifications.
  await requested('vrf_erased_before_result');
  await erased('vrf_erased_before_result', nextTime());
  await completed('vrf_erased_before_result', 'found', { firstName: 'sealed' });
  await requested('vrf_erased_twice', { scope: 'bvn' });
  await completed('vrf_erased_twice', 'found', { firstName: 'sealed' });
  await erased('vrf_erased_twice', null);
  await erased('vrf_erased_twice', nextTime());
  await erased('vrf_erased_twice', nextTime());
  await failed('vrf_erased_twice', 'late');
  await completed('vrf_result_first', 'found', { firstName: 'early' });
  await requested('vrf_result_first');
  await failed('vrf_never_requested', 'provider_unavailable');
  await erased('vrf_never_requested', nextTime());
  await erased('vrf_erased_first', nextTime());
  await requested('vrf_erased_first', { scope: 'phone' });
  await requested('vrf_requested_twice', { scope: 'phone' });
  await requested('vrf_requested_twice', { scope: 'bvn', organizationId: 'org_other', priceKobo: 1 });
  await rejected('vrf_requested_twice');
  await requested('vrf_old_events', { scope: 'bank_account' });
  await completed('vrf_old_events', 'not_found');
  await requested('vrf_old_failure', { scope: 'bank_account' });
  await failed('vrf_old_failure');
  await requested('vrf_finished_twice', { scope: 'bank_account', environment: 'live' });
  await completed('vrf_finished_twice', 'not_found', {});
  await completed('vrf_finished_twice', 'found', { firstName: 'second' });
  await requested('vrf_pending', { scope: 'bank_account', environment: 'live' });
  await requested('vrf_erased_pending', { scope: 'bank_account', environment: 'live' });
  await erased('vrf_erased_pending', nextTime());

  // Wallets: a debit of a reservation never made, a reference reserved again after its release,
  // a reservation without a scope (an old event), one reference in two wallets, an event without
  // its time in the metadata, and a reservation left open.
  await funded(TEST_WALLET, 100_000);
  await reserved(TEST_WALLET, 'rsv_1', 1_000, 'nin');
  await debited(TEST_WALLET, 'rsv_unknown', 500);
  await released(TEST_WALLET, 'rsv_1', 500);
  await reserved(TEST_WALLET, 'rsv_2', 2_000, 'bvn');
  await released(TEST_WALLET, 'rsv_2', 2_000);
  await reserved(TEST_WALLET, 'rsv_2', 3_000, 'phone');
  await debited(TEST_WALLET, 'rsv_2', 3_000);
  await reserved(TEST_WALLET, 'rsv_old', 700);
  await debited(TEST_WALLET, 'rsv_old', 700);
  await funded(TEST_WALLET, 5_000, {});
  await funded(LIVE_WALLET, 5_000);
  await reserved(LIVE_WALLET, 'rsv_shared', 100, 'nin');
  await reserved(TEST_WALLET, 'rsv_open', 1_000, 'bvn');
  await debited(TEST_WALLET, 'rsv_shared', 100);
}

/** The projection's events applied event by event (batches of one, no page path) into its live tables. */
async function applyEventByEvent(projection: Projection): Promise<bigint> {
  const events = await allEvents(db.store, { streamCategories: projection.categories });
  const last = events[events.length - 1].position;
  await runUntilCheckpoint(db.pool, new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 1, maxAttempts: 1, pageEvents: 0 }), projection.name, last);
  return last;
}

/**
 * A rebuild over a log with an event the projection refuses: the fold declines, and its warning is
 * answered. The page path replays the log then, and stops at the event (the rebuild fails, and its
 * shadow is dropped) unless it lies beyond the live position the swap brings the shadow to.
 */
async function declinedRebuild(projection: Projection): Promise<string[]> {
  // The fold goes up to the visible head: wait until the events just appended are visible (a transaction of another suite on the cluster can hold them back).
  await allEvents(db.store);
  const warnings: string[] = [];
  const logger = { log: () => undefined, warn: (message: string) => warnings.push(message), error: () => undefined };
  const folded = await rebuildProjection(db.pool, db.store, db.url, projection, { logger, maxAttempts: 1 }).then(
    (result) => result.eventsFoldedInDatabase,
    () => 0,
  );
  expect(folded).toBe(0);
  await discardRebuild(db.pool, db.url, projection);
  return warnings.filter((warning) => warning.includes('not folded in the database'));
}

describeOnProject('postgres', 'Given a log of ordinary and odd cases, rebuilt from zero on the PostgreSQL log', 'the fold runs over the PostgreSQL events table', () => {
  it('folds it inside the database into exactly the rows of the event-by-event fold, and of the page path, in every table', async () => {
    await writeSampleLog(db.pool, { organizations: 2, verifications: 40, store: db.store });
    await writeOddLog();

    for (const projection of [walletLedgerProjection, verificationsProjection]) {
      const last = await applyEventByEvent(projection);
      const events = (await allEvents(db.store, { streamCategories: projection.categories })).length;

      // Verified strictly: the rebuilt tables are compared with the live ones (event by event) before the swap, and any difference refuses it.
      const warnings: string[] = [];
      const logger = { log: () => undefined, warn: (message: string) => warnings.push(message), error: (message: string) => warnings.push(message) };
      const result = await rebuildProjection(db.pool, db.store, db.url, projection, { verify: true, strict: true, logger });
      expect(warnings).toEqual([]);
      expect(result).toMatchObject({ outcome: 'swapped', eventsFoldedInDatabase: events, eventsApplied: events });
      expect(result.differences?.map(({ onlyLive, onlyRebuilt }) => onlyLive + onlyRebuilt)).toEqual(projection.tables.map(() => 0));

      // The page path, in pages of 97 events, into copies: the same rows as the folded tables now live (the odd
      // erasures, out of their order in a log the service writes, included).
      for (const table of projection.tables) await db.pool.query(`create table ${paged(table)} (like ${table} including all)`);
      await runUntilCheckpoint(
        db.pool,
        new ProjectionRunner(db.pool, db.store, projection, { maxBatch: 1, maxAttempts: 1, pageEvents: 97 }, paged, `${projection.name}__paged`),
        `${projection.name}__paged`,
        last,
      );
      for (const table of projection.tables) {
        const difference = await compareTables(db.pool, table, paged(table));
        expect({ table, onlyLive: difference.onlyLive, onlyRebuilt: difference.onlyRebuilt, keys: difference.sampleKeys }).toEqual({
          table,
          onlyLive: 0,
          onlyRebuilt: 0,
          keys: [],
        });
      }
    }

    // The odd cases came out as event-by-event application leaves them (the comparisons above say the fold agrees).
    const { rows: verifications } = await db.pool.query<{
      reference: string;
      status: string;
      request: unknown;
      result: unknown;
      organization_id: string;
      erased: boolean;
      charged: boolean;
      reason_code: string | null;
    }>(
      `select reference, status, request, result, organization_id, personal_data_erased_at is not null as erased, charged, reason_code from verifications where key_id = 'key_fold'`,
    );
    const byReference = new Map(verifications.map((row) => [row.reference, row]));
    expect(byReference.get('vrf_erased_before_result')).toMatchObject({ status: 'found', request: {}, result: { firstName: 'sealed' }, erased: true });
    expect(byReference.get('vrf_erased_twice')).toMatchObject({ status: 'found', request: {}, result: {}, erased: true });
    expect(byReference.get('vrf_result_first')).toMatchObject({ status: 'pending', result: {} });
    expect(byReference.has('vrf_never_requested')).toBe(false);
    expect(byReference.get('vrf_erased_first')).toMatchObject({ status: 'pending', erased: false });
    expect(byReference.get('vrf_requested_twice')).toMatchObject({ status: 'failed', organization_id: ORGANIZATION, reason_code: 'scope_not_allowed' });
    expect(byReference.get('vrf_old_failure')).toMatchObject({ status: 'failed', reason_code: null, charged: false });
    expect(byReference.get('vrf_finished_twice')).toMatchObject({ status: 'not_found', result: {}, charged: true });
    const { rows: counts } = await db.pool.query<{ status: string; count: string }>(
      `select status, count from verification_counts where organization_id = $1 and environment = 'live' and scope = 'bank_account' order by status`,
      [ORGANIZATION],
    );
    expect(counts).toEqual([
      { status: 'not_found', count: '1' },
      { status: 'pending', count: '2' },
    ]);
    const { rows: closes } = await db.pool.query<{ reference: string; scope: string | null }>(
      `select reference, scope from wallet_ledger where organization_id = $1 and entry_type in ('debit', 'release') order by event_position`,
      [ORGANIZATION],
    );
    expect(closes).toEqual([
      { reference: 'rsv_unknown', scope: null },
      { reference: 'rsv_1', scope: 'nin' },
      { reference: 'rsv_2', scope: 'bvn' },
      { reference: 'rsv_2', scope: 'phone' },
      { reference: 'rsv_old', scope: null },
      { reference: 'rsv_shared', scope: null },
    ]);
  });

  it('stops at the visible head: an event committed late below an event committed before it is replayed after the fold, not skipped', async () => {
    // An append left open takes its position now; one committed after it lies above it, and hides behind the open one from every reader.
    const late = await db.pool.connect();
    let lateOpen = true;
    try {
      await late.query('begin');
      const lateEvent = {
        id: randomUUID(),
        type: 'WalletFunded',
        data: { schemaVersion: 1, ...wallet(TEST_WALLET), fundingReference: 'funding-late', amountKobo: 1_000 },
        metadata: { occurredAt: nextTime() },
      };
      const [appended] = (await late.query<{ last_position: string }>('select last_position from append_events($1, -2, $2::jsonb)', [TEST_WALLET, JSON.stringify([lateEvent])]))
        .rows;
      await funded(LIVE_WALLET, 2_000);
      const committedAfter = (await db.pool.query<{ position: string }>(`select max(position) as position from events where stream_id = $1`, [LIVE_WALLET])).rows[0].position;
      expect(BigInt(committedAfter)).toBeGreaterThan(BigInt(appended.last_position));

      // The rebuild folds and is interrupted at its first report after the fold: its checkpoint is the head the fold stopped at.
      const controller = new AbortController();
      const interrupted = await rebuildProjection(db.pool, db.store, db.url, walletLedgerProjection, {
        signal: controller.signal,
        onProgress: ({ eventsDone }) => {
          if (eventsDone > 0) controller.abort();
        },
      });
      expect(interrupted).toMatchObject({ outcome: 'interrupted' });
      expect(interrupted.eventsFoldedInDatabase).toBeGreaterThan(0);
      expect(interrupted.position).toBeLessThan(BigInt(appended.last_position));
      await late.query('commit');
      lateOpen = false;

      // Both events reach the live tables event by event and the shadow through the resumed runner; the comparison is strict.
      await applyEventByEvent(walletLedgerProjection);
      const resumed = await rebuildProjection(db.pool, db.store, db.url, walletLedgerProjection, { verify: true, strict: true });
      expect(resumed).toMatchObject({ outcome: 'swapped', resumedFrom: interrupted.position, eventsFoldedInDatabase: 0 });
      expect(resumed.differences?.map(({ onlyLive, onlyRebuilt }) => onlyLive + onlyRebuilt)).toEqual([0]);
      const { rows } = await db.pool.query(`select reference from wallet_ledger where event_position in ($1, $2) order by event_position`, [
        appended.last_position,
        committedAfter,
      ]);
      expect(rows).toEqual([{ reference: 'funding-late' }, { reference: expect.stringMatching(/^funding-/) }]);
    } finally {
      if (lateOpen) await late.query('rollback').catch(() => undefined);
      late.release();
    }
  });

  it('folds in one part, beside its check, when the pool has no session to spare for a second', async () => {
    const small = new pg.Pool({ connectionString: db.url, max: 2 });
    small.on('error', () => undefined);
    try {
      for (const projection of [walletLedgerProjection, verificationsProjection]) {
        const events = (await allEvents(db.store, { streamCategories: projection.categories })).length;
        // Compared with the live tables, which the two-part fold of the test before wrote (and event by event agreed with).
        const result = await rebuildProjection(small, db.store, db.url, projection, { verify: true, strict: true });
        expect(result).toMatchObject({ outcome: 'swapped', eventsFoldedInDatabase: events });
      }
    } finally {
      await small.end();
    }
  });

  it('declines what it cannot reproduce exactly, and the rebuild then replays the whole log through the page path', async () => {
    // A field the page path writes as JavaScript prints it: the fold declines, the page path rebuilds.
    await requested('vrf_numeric_key', { keyId: 42 });
    await applyEventByEvent(verificationsProjection);
    const warnings: string[] = [];
    const logger = { log: () => undefined, warn: (message: string) => warnings.push(message), error: (message: string) => warnings.push(message) };
    // Verified strictly against the live rows, which event-by-event application wrote.
    const result = await rebuildProjection(db.pool, db.store, db.url, verificationsProjection, { logger, verify: true, strict: true });
    expect(result).toMatchObject({ outcome: 'swapped', eventsFoldedInDatabase: 0 });
    expect(result.eventsApplied).toBeGreaterThan(0);
    expect(warnings).toEqual(['verifications: the log is replayed through the page path, not folded in the database: a request field that is not text']);
    expect((await db.pool.query(`select key_id from verifications where reference = 'vrf_numeric_key'`)).rows).toEqual([{ key_id: '42' }]);

    // What handle refuses (and the page path then stops at) is declined too.
    const declined = (projection: Projection, reason: string) => [`${projection.name}: the log is replayed through the page path, not folded in the database: ${reason}`];
    await append('wallet-org_fold_empty.test', 'WalletDebited', { organizationId: 'org_fold_empty', environment: 'test', reference: 'rsv_none', amountKobo: 100 });
    expect(await declinedRebuild(walletLedgerProjection)).toEqual(declined(walletLedgerProjection, 'a wallet would show a negative figure'));
    await debited('wallet-org_fold_empty.test', 'rsv_none', 100);
    expect(await declinedRebuild(walletLedgerProjection)).toEqual(declined(walletLedgerProjection, 'an event naming another wallet than its stream'));
    await append(verification('vrf_unknown_type'), 'VerificationTeleported', { reference: 'vrf_unknown_type' });
    expect(await declinedRebuild(verificationsProjection)).toEqual(declined(verificationsProjection, 'an unknown event type'));
  });
});

describeOnProject('esdb', 'Given a rebuild on EventStoreDB', 'the fold in the database needs the PostgreSQL log', () => {
  it('replays the log through the page path', async () => {
    await withoutReadLag(db, () => writeSampleLog(db.pool, { organizations: 1, verifications: 10, store: db.store }));
    await applyEventByEvent(walletLedgerProjection);
    const result = await rebuildProjection(db.pool, db.store, db.url, walletLedgerProjection, { verify: true, strict: true });
    expect(result).toMatchObject({ outcome: 'swapped', eventsFoldedInDatabase: 0 });
    expect(result.eventsApplied).toBeGreaterThan(0);
  });
});
