import { describe, expect, it } from '@jest/globals';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import {
  applyEvents,
  recorded,
  rowsOf,
  type GivenEvent,
  useProjectionDatabase,
  applyBatch as applyBatchThroughHarness,
  applyPage as applyPageThroughHarness,
} from '../../test/support/projection-harness.js';
import { verificationsProjection } from './verifications.projection.js';

const org = 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 1, 10, minutes)).toISOString();

function requested(reference: string, minutes = 0, scope = 'nin'): GivenEvent {
  return {
    streamId: `verification-${reference}`,
    type: 'VerificationRequested',
    data: {
      schemaVersion: 1,
      reference,
      organizationId: org,
      environment: 'test',
      keyId: 'key_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
      scope,
      category: 'kyc',
      countryCode: 'NG',
      request: { nin: '12345678905' },
      priceKobo: 10_000,
      requestedAt: at(minutes),
    },
  };
}
const completed = (reference: string, outcome: 'found' | 'not_found', result: Record<string, string> = {}): GivenEvent => ({
  streamId: `verification-${reference}`,
  type: 'VerificationCompleted',
  data: { schemaVersion: 1, reference, outcome, result, completedAt: at(1) },
});
const failed = (reference: string): GivenEvent => ({
  streamId: `verification-${reference}`,
  type: 'VerificationFailed',
  data: { schemaVersion: 1, reference, reasonCode: 'provider_error', errorMessage: 'The provider could not complete the check', failedAt: at(1) },
});
const rejected = (reference: string): GivenEvent => ({
  streamId: `verification-${reference}`,
  type: 'VerificationRejected',
  data: { schemaVersion: 1, reference, reasonCode: 'insufficient_balance', errorMessage: 'balance too low', priceKobo: 10_000, balanceKobo: 5, rejectedAt: at(1) },
});

/** A request of another organization or environment than the other helpers'. */
function requestedBy(reference: string, organizationId: string, environment: string, minutes: number, scope = 'nin'): GivenEvent {
  const event = requested(reference, minutes, scope);
  return { ...event, data: { ...event.data, organizationId, environment } };
}

const erased = (reference: string, erasedAt = at(5)): GivenEvent => ({
  streamId: `verification-${reference}`,
  type: 'VerificationPersonalDataErased',
  data: { schemaVersion: 1, reference, erasedAt },
});

describe('verifications projection', () => {
  const db = useProjectionDatabase(verificationsProjection);

  const apply = (events: readonly GivenEvent[]) => applyEvents(db.pool, verificationsProjection, recorded(events));
  const applyBatch = (events: readonly RecordedEvent[]) => applyBatchThroughHarness(db.pool, verificationsProjection, events);
  const applyPage = (events: readonly RecordedEvent[]) => applyPageThroughHarness(db.pool, verificationsProjection, events);
  const state = async () => ({
    rows: await rowsOf(db.pool, 'verifications', 'reference'),
    counts: await rowsOf(db.pool, 'verification_counts', 'organization_id, environment, scope, status'),
  });
  const counts = async () =>
    (await db.pool.query<{ scope: string; status: string; count: string }>('select scope, status, count from verification_counts order by scope, status')).rows.map(
      (c) => `${c.scope}/${c.status}=${c.count}`,
    );
  const row = async (reference: string) => (await db.pool.query('select * from verifications where reference = $1', [reference])).rows[0];

  it('given a request, then a pending, uncharged row with the request and price', async () => {
    await apply([requested('vrf_a')]);
    expect(await row('vrf_a')).toMatchObject({
      organization_id: org,
      environment: 'test',
      scope: 'nin',
      category: 'kyc',
      country_code: 'NG',
      status: 'pending',
      request: { nin: '12345678905' },
      result: {},
      error_message: null,
      price_kobo: '10000',
      charged: false,
      created_at: new Date(at(0)),
      completed_at: null,
    });
  });

  it('given completions, then found and not_found rows are charged with their result', async () => {
    await apply([requested('vrf_a'), completed('vrf_a', 'found', { firstName: 'Ada' }), requested('vrf_b'), completed('vrf_b', 'not_found')]);
    expect(await row('vrf_a')).toMatchObject({ status: 'found', charged: true, result: { firstName: 'Ada' }, completed_at: new Date(at(1)) });
    expect(await row('vrf_b')).toMatchObject({ status: 'not_found', charged: true, result: {} });
  });

  it('given a failure or a rejection, then a failed, uncharged row with the error message and the reason code', async () => {
    await apply([requested('vrf_a'), failed('vrf_a'), requested('vrf_b'), rejected('vrf_b'), requested('vrf_c'), completed('vrf_c', 'found')]);
    expect(await row('vrf_a')).toMatchObject({ status: 'failed', charged: false, error_message: 'The provider could not complete the check', reason_code: 'provider_error' });
    expect(await row('vrf_b')).toMatchObject({ status: 'failed', charged: false, error_message: 'balance too low', reason_code: 'insufficient_balance' });
    expect(await row('vrf_c')).toMatchObject({ status: 'found', reason_code: null });
  });

  it('given a failure in the batch of its request, or in a later one, then the row keeps its reason code', async () => {
    await applyBatch(recorded([requested('vrf_a'), failed('vrf_a'), requested('vrf_b')]));
    await applyBatch(recorded([failed('vrf_b')]));
    expect(await row('vrf_a')).toMatchObject({ status: 'failed', reason_code: 'provider_error' });
    expect(await row('vrf_b')).toMatchObject({ status: 'failed', reason_code: 'provider_error' });
  });

  it('a terminal event never rewrites a finished row', async () => {
    await apply([requested('vrf_a'), completed('vrf_a', 'found', { firstName: 'Ada' })]);
    await apply([failed('vrf_a')]);
    expect(await row('vrf_a')).toMatchObject({ status: 'found', charged: true });
  });

  it('given requests and their outcomes, then the counts per scope and status follow the rows', async () => {
    await apply([
      requested('vrf_a'),
      requested('vrf_b'),
      requested('vrf_c', 0, 'bvn'),
      requested('vrf_d'),
      completed('vrf_a', 'found'),
      completed('vrf_b', 'not_found'),
      failed('vrf_c'),
    ]);
    expect(await counts()).toEqual(['bvn/failed=1', 'bvn/pending=0', 'nin/found=1', 'nin/not_found=1', 'nin/pending=1']);
    // A second terminal event moves no row, so no count either.
    await apply([rejected('vrf_a'), completed('vrf_c', 'found')]);
    expect(await counts()).toEqual(['bvn/failed=1', 'bvn/pending=0', 'nin/found=1', 'nin/not_found=1', 'nin/pending=1']);
  });

  it('replayed twice, same rows and counts', async () => {
    const events = recorded([
      requested('vrf_a', 0),
      completed('vrf_a', 'found', { firstName: 'Ada' }),
      requested('vrf_b', 2, 'bvn'),
      failed('vrf_b'),
      requested('vrf_c', 3),
      rejected('vrf_c'),
      requested('vrf_d', 4),
    ]);
    await applyEvents(db.pool, verificationsProjection, events);
    const once = await state();
    await applyEvents(db.pool, verificationsProjection, events);
    expect(await state()).toEqual(once);
    expect(once.rows.map((r) => r.status)).toEqual(['found', 'failed', 'failed', 'pending']);
    expect(await counts()).toEqual(['bvn/failed=1', 'bvn/pending=0', 'nin/failed=1', 'nin/found=1', 'nin/pending=1']);
  });

  it('a mixed batch all at once gives the same rows and counts as one event at a time, and replayed twice the same again', async () => {
    const events = recorded([
      requested('vrf_a', 0),
      requested('vrf_b', 1, 'bvn'),
      completed('vrf_a', 'found', { firstName: 'Ada' }),
      requested('vrf_c', 2),
      failed('vrf_b'),
      completed('vrf_b', 'found'),
      requested('vrf_d', 3, 'phone'),
      rejected('vrf_c'),
      requested('vrf_e', 4),
      completed('vrf_e', 'not_found'),
      requested('vrf_f', 5, 'bvn'),
    ]);
    // Part of it applied before, as when a batch follows a crash between two batches.
    await applyEvents(db.pool, verificationsProjection, events.slice(0, 3));
    await applyEvents(db.pool, verificationsProjection, events.slice(3));
    const oneByOne = await state();

    await db.pool.query('truncate verifications, verification_counts');
    await applyBatch(events);
    expect(await state()).toEqual(oneByOne);

    await db.pool.query('truncate verifications, verification_counts');
    await applyBatch(events.slice(0, 3));
    await applyBatch(events.slice(3));
    expect(await state()).toEqual(oneByOne);
    await applyBatch(events);
    await applyBatch(events);
    expect(await state()).toEqual(oneByOne);
    expect(oneByOne.rows.map((r) => `${String(r.reference)}:${String(r.status)}`)).toEqual([
      'vrf_a:found',
      'vrf_b:failed',
      'vrf_c:failed',
      'vrf_d:pending',
      'vrf_e:not_found',
      'vrf_f:pending',
    ]);
  });

  it('a broken log (a terminal event before its request, a second request, an erasure before the request or the outcome it follows) gives all at once and as a page the rows and counts of one event at a time', async () => {
    const events = recorded([
      completed('vrf_a', 'found', { firstName: 'Ada' }),
      requested('vrf_a', 0),
      failed('vrf_a'),
      requested('vrf_b', 1, 'bvn'),
      requested('vrf_b', 2, 'bvn'),
      completed('vrf_b', 'not_found'),
    ]);
    const erasedEarly = recorded([
      erased('vrf_c'),
      requested('vrf_c', 3),
      completed('vrf_c', 'found', { firstName: 'Cy' }),
      requested('vrf_d', 4),
      erased('vrf_d'),
      completed('vrf_d', 'found', { firstName: 'Di' }),
    ]);
    await apply([...events, ...erasedEarly]);
    const oneByOne = await state();
    // Not the rows of a log in order: the first terminal event and the erasures found nothing to change.
    expect(oneByOne.rows.map((r) => `${String(r.reference)}:${String(r.status)}:${JSON.stringify(r.request)}:${JSON.stringify(r.result)}`)).toEqual([
      'vrf_a:failed:{"nin":"12345678905"}:{}',
      'vrf_b:not_found:{"nin":"12345678905"}:{}',
      'vrf_c:found:{"nin":"12345678905"}:{"firstName":"Cy"}',
      'vrf_d:found:{}:{"firstName":"Di"}',
    ]);

    for (const applyEach of [applyBatch, applyPage]) {
      await db.pool.query('truncate verifications, verification_counts');
      await applyEach(events);
      await applyEach(erasedEarly);
      expect(await state()).toEqual(oneByOne);
    }
  });

  it('a page of several organizations, environments and scopes as a page: the rows and counts of one event at a time, and applied twice the same', async () => {
    const events = recorded([
      requestedBy('vrf_p1', 'org_b', 'test', 0, 'bvn'),
      requested('vrf_p2', 1),
      requestedBy('vrf_p3', 'org_b', 'live', 2),
      completed('vrf_p1', 'found', { firstName: 'Ada' }),
      requestedBy('vrf_p4', 'org_b', 'test', 3, 'bvn'),
      failed('vrf_p3'),
      requested('vrf_p5', 4, 'phone'),
      completed('vrf_p2', 'not_found'),
      requestedBy('vrf_p6', 'org_b', 'test', 5),
      completed('vrf_p5', 'found', { firstName: 'Bo' }),
    ]);
    await apply(events);
    const oneByOne = await state();
    expect(new Set(oneByOne.counts.map((c) => `${String(c.organization_id)}/${String(c.environment)}`))).toEqual(new Set([`${org}/test`, 'org_b/test', 'org_b/live']));

    await db.pool.query('truncate verifications, verification_counts');
    await applyPage(events);
    expect(await state()).toEqual(oneByOne);
    await applyPage(events);
    expect(await state()).toEqual(oneByOne);
  });

  it('an erasure marks the row erased and blanks its sealed columns, keeps every other column and count; replayed, or in one batch with its request, the same', async () => {
    await apply([requested('vrf_a'), completed('vrf_a', 'found', { firstName: 'Ada' }), requested('vrf_b'), completed('vrf_b', 'found', { firstName: 'Bo' })]);
    const before = await counts();
    await apply([erased('vrf_a')]);
    expect(await row('vrf_a')).toMatchObject({ status: 'found', charged: true, price_kobo: '10000', request: {}, result: {}, personal_data_erased_at: new Date(at(5)) });
    expect(await row('vrf_b')).toMatchObject({ request: { nin: '12345678905' }, result: { firstName: 'Bo' }, personal_data_erased_at: null });
    expect(await counts()).toEqual(before);
    await apply([erased('vrf_a', at(9))]);
    expect((await row('vrf_a')).personal_data_erased_at).toEqual(new Date(at(5)));
    const once = await state();

    await db.pool.query('truncate verifications, verification_counts');
    const events = recorded([
      requested('vrf_a'),
      completed('vrf_a', 'found', { firstName: 'Ada' }),
      requested('vrf_b'),
      completed('vrf_b', 'found', { firstName: 'Bo' }),
      erased('vrf_a'),
      erased('vrf_a', at(9)),
    ]);
    await applyBatch(events);
    expect(await state()).toEqual(once);
    await applyBatch(events);
    expect(await state()).toEqual(once);
  });
});
