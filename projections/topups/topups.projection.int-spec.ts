import { describe, expect, it } from '@jest/globals';
import { applyEvents, recorded, rowsOf, type GivenEvent, useProjectionDatabase } from '../../test/support/projection-harness.js';
import { topUpsProjection } from './topups.projection.js';

const reference = 'top_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const ids = { schemaVersion: 1, reference, organizationId: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR', environment: 'live' };
const t0 = new Date('2026-12-01T10:00:00Z');
const event = (type: string, data: Record<string, unknown>, minutes = 0): GivenEvent => ({
  streamId: `topUp-${reference}`,
  type,
  data: { ...ids, ...data },
  metadata: { occurredAt: new Date(t0.getTime() + minutes * 60_000).toISOString() },
});
const history = [
  event('TopUpInitiated', { rail: 'paystack', channel: 'card', amountKobo: 500_000 }),
  event('TopUpFailed', { status: 'abandoned' }, 1),
  event('TopUpPaid', { amountKobo: 500_000, feesKobo: 7_500, currency: 'NGN', paidAt: '2026-12-01T10:02:00.000Z', providerTransactionId: '4099260516' }, 2),
  event('TopUpCredited', { amountKobo: 500_000, fundingReference: `topup:${reference}` }, 3),
];

describe('topups projection', () => {
  const db = useProjectionDatabase(topUpsProjection);

  it('given a top-up abandoned, then paid and credited, then one row credited with the fees as reported', async () => {
    await applyEvents(db.pool, topUpsProjection, recorded(history));
    const rows = await rowsOf(db.pool, 'payment_topups', 'reference');
    expect(rows).toEqual([
      expect.objectContaining({
        reference,
        status: 'credited',
        initiated_kobo: '500000',
        paid_kobo: '500000',
        fees_kobo: '7500',
        credited_kobo: '500000',
        created_at: t0,
        revision: '3',
      }),
    ]);
  });

  it('replayed twice, same rows', async () => {
    const events = recorded(history);
    await applyEvents(db.pool, topUpsProjection, events);
    const once = await rowsOf(db.pool, 'payment_topups', 'reference');
    await applyEvents(db.pool, topUpsProjection, events);
    expect(await rowsOf(db.pool, 'payment_topups', 'reference')).toEqual(once);
  });

  const accountStream = `paymentAccount-${ids.organizationId}.live`;
  const account = (type: string, customerCode: string, over: Record<string, unknown> = {}, minutes = 0): GivenEvent => ({
    streamId: accountStream,
    type,
    data: { schemaVersion: 1, organizationId: ids.organizationId, environment: 'live', rail: 'paystack', customerCode, ...over },
    metadata: { occurredAt: new Date(t0.getTime() + minutes * 60_000).toISOString() },
  });
  const accounts = [
    account('DedicatedAccountRequested', 'CUS_first'),
    account('DedicatedAccountAssignmentFailed', 'CUS_first', {}, 1),
    account('DedicatedAccountRequested', 'CUS_second', {}, 2),
    account('DedicatedAccountAssigned', 'CUS_second', { accountNumber: '9930000737', accountName: 'KORAPAY / IVL', bankName: 'Wema Bank' }, 3),
  ];

  it('given an account asked for, failed, asked for again under another customer and assigned by webhook, then one assigned row; replayed twice, same rows', async () => {
    const events = recorded(accounts);
    await applyEvents(db.pool, topUpsProjection, events.slice(0, 2));
    expect(await rowsOf(db.pool, 'payment_accounts', 'customer_code')).toEqual([expect.objectContaining({ customer_code: 'CUS_first', status: 'failed', account_number: null })]);
    await applyEvents(db.pool, topUpsProjection, events.slice(2));
    const once = await rowsOf(db.pool, 'payment_accounts', 'customer_code');
    expect(once).toEqual([
      {
        customer_code: 'CUS_second',
        organization_id: ids.organizationId,
        environment: 'live',
        rail: 'paystack',
        status: 'assigned',
        account_number: '9930000737',
        account_name: 'KORAPAY / IVL',
        bank_name: 'Wema Bank',
        revision: '3',
      },
    ]);
    await applyEvents(db.pool, topUpsProjection, events);
    expect(await rowsOf(db.pool, 'payment_accounts', 'customer_code')).toEqual(once);
  });
});
