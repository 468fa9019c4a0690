import type pg from 'pg';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { PG_POOL } from '../../src/database/pool.js';
import { readTopUpReceipt } from '../../src/payments/topup.read-model.js';
import { TopUps } from '../../src/payments/topups.service.js';
import type { TestApp, TestResponse } from './app.js';

const context = { correlationId: 'test-topups', actor: SYSTEM_ACTOR };

/**
 * Two top-ups of the organization's test wallet on the sandbox rail, through its checkout's webhook:
 * one credited (its receipt readable), and one flagged (the rail settled another amount than the
 * one initiated), for an operator's resolution.
 */
export async function sandboxTopUps(app: TestApp, organizationId: string): Promise<{ credited: string; flagged: string }> {
  const topUps = app.app.get(TopUps);
  const pool = app.app.get<symbol, pg.Pool>(PG_POOL);
  const paid = async (amountKobo: number, settledKobo: number) => {
    const { reference } = await topUps.initiate({ organizationId, environment: 'test' }, { amountKobo, channel: 'card', email: 'finance@example.test' }, context);
    await pool.query('update sandbox_payments set amount_kobo = $2 where reference = $1', [reference, settledKobo]);
    const webhook = await topUps.sandbox.settle(reference, 'pay');
    if (webhook !== undefined) await topUps.receiveWebhook('sandbox', webhook.rawBody, webhook.signature);
    return reference;
  };
  const credited = await paid(50_000, 50_000);
  const flagged = await paid(60_000, 6_000);
  for (let attempt = 0; attempt < 100 && (await readTopUpReceipt(pool, credited))?.status !== 'credited'; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
  return { credited, flagged };
}

/** A Paystack webhook as Paystack sends it: the exact body, JSON, its `x-paystack-signature`. */
export function postPaystackWebhook(app: TestApp, webhook: { rawBody: string; signature: string }): Promise<TestResponse> {
  return app.request('POST', '/payments/paystack/webhook', {
    rawBody: webhook.rawBody,
    headers: { 'content-type': 'application/json', 'x-paystack-signature': webhook.signature },
  });
}
