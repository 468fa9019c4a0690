import { createHash, randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { VerifiedTransaction } from './topup.decider.js';
import { paymentMetrics } from './payment.metrics.js';
import type { Checkout, DedicatedAccount, PaymentRail, PendingAccount } from './payment-rail.port.js';
import { paystackSignature, signatureMatches } from './paystack.rail.js';

export const SANDBOX_CHECKOUT_PATH = '/payments/sandbox/checkout';

/**
 * A payment rail with no outside network, for test wallets and the embedded default: it speaks
 * Paystack's shapes. A transaction is a row of `sandbox_payments` (shared by every instance); the
 * checkout page the service serves pays or declines it on a click, and a payment sends a
 * `charge.success` webhook signed like Paystack's through the same receiver as Paystack's.
 * The signing key is this process's own: the sandbox signs and the receiver checks in one process.
 */
export class SandboxRail implements PaymentRail {
  readonly name = 'sandbox' as const;
  private readonly secretKey = randomBytes(32).toString('hex');

  constructor(private readonly pool: pg.Pool) {}

  async signatureValid(rawBody: string, signature: string | undefined): Promise<boolean> {
    return signatureMatches(this.secretKey, rawBody, signature);
  }

  async configured(): Promise<boolean> {
    return true;
  }

  async initialize(input: { reference: string; amountKobo: number; email: string; callbackUrl: string }): Promise<Checkout> {
    await this.pool.query(
      `insert into sandbox_payments (reference, amount_kobo, status, callback_url, created_at) values ($1, $2, 'ongoing', $3, now()) on conflict (reference) do nothing`,
      [input.reference, input.amountKobo, input.callbackUrl],
    );
    paymentMetrics.requests.inc({ rail: this.name, operation: 'initialize', outcome: 'ok' });
    return { authorizationUrl: `${SANDBOX_CHECKOUT_PATH}/${encodeURIComponent(input.reference)}` };
  }

  /** The customer code of the organization's made-up account. */
  static customerCode(organizationId: string): string {
    return `CUS_sandbox_${organizationId.slice(-10)}`;
  }

  /** A made-up account, the same for an organization every time: no bank is asked. */
  async assignDedicatedAccount(input: { organizationId: string; email: string }): Promise<DedicatedAccount | PendingAccount> {
    const digits = BigInt(`0x${createHash('sha256').update(input.organizationId).digest('hex').slice(0, 15)}`) % 10_000_000_000n;
    return {
      customerCode: SandboxRail.customerCode(input.organizationId),
      accountNumber: digits.toString().padStart(10, '0'),
      accountName: 'Sandbox top-ups',
      bankName: 'Sandbox Bank',
    };
  }

  async verify(reference: string): Promise<VerifiedTransaction | null> {
    const { rows } = await this.pool.query<{ amount_kobo: string; status: string; fees_kobo: string; paid_at: Date | null; id: string }>(
      'select amount_kobo, status, fees_kobo, paid_at, id from sandbox_payments where reference = $1',
      [reference],
    );
    paymentMetrics.requests.inc({ rail: this.name, operation: 'verify', outcome: rows.length === 0 ? 'not_found' : 'ok' });
    if (rows.length === 0) return null;
    const row = rows[0];
    const status = row.status === 'success' || row.status === 'failed' || row.status === 'abandoned' ? row.status : 'pending';
    return {
      status,
      amountKobo: Number(row.amount_kobo),
      feesKobo: Number(row.fees_kobo),
      currency: 'NGN',
      paidAt: row.paid_at?.toISOString() ?? null,
      providerTransactionId: `sandbox-${row.id}`,
    };
  }

  /** The checkout page's facts: amount and state; undefined for an unknown reference. */
  async transaction(reference: string): Promise<{ amountKobo: number; status: string; callbackUrl: string } | undefined> {
    const { rows } = await this.pool.query<{ amount_kobo: string; status: string; callback_url: string }>(
      'select amount_kobo, status, callback_url from sandbox_payments where reference = $1',
      [reference],
    );
    return rows.length === 0 ? undefined : { amountKobo: Number(rows[0].amount_kobo), status: rows[0].status, callbackUrl: rows[0].callback_url };
  }

  /**
   * The payer's click: pays (or declines) an ongoing transaction, once. A payment answers the
   * `charge.success` webhook Paystack would send, raw body and signature, for the receiver.
   */
  async settle(reference: string, outcome: 'pay' | 'decline'): Promise<{ rawBody: string; signature: string } | undefined> {
    const { rows } = await this.pool.query<{ amount_kobo: string; fees_kobo: string; paid_at: Date; id: string }>(
      `update sandbox_payments set status = $2, fees_kobo = case when $2 = 'success' then least(round(amount_kobo * 0.015), 200000) else 0 end,
              paid_at = case when $2 = 'success' then now() else null end
        where reference = $1 and status = 'ongoing' returning amount_kobo, fees_kobo, paid_at, id`,
      [reference, outcome === 'pay' ? 'success' : 'failed'],
    );
    if (rows.length === 0 || outcome === 'decline') return undefined;
    const row = rows[0];
    const rawBody = JSON.stringify({
      event: 'charge.success',
      data: {
        id: Number(row.id),
        domain: 'test',
        status: 'success',
        reference,
        amount: Number(row.amount_kobo),
        fees: Number(row.fees_kobo),
        currency: 'NGN',
        channel: 'card',
        paid_at: row.paid_at.toISOString(),
      },
    });
    return { rawBody, signature: paystackSignature(this.secretKey, rawBody) };
  }

  /**
   * A bank transfer of `amountKobo` into the organization's made-up account, as if a payer sent it:
   * a settled transaction under a reference of the rail's own (`SBX…`, as Paystack's `T…`), and the
   * `charge.success` webhook Paystack sends for a transfer to a dedicated account (channel
   * `dedicated_nuban`, the customer's code), raw body and signature, for the same receiver.
   */
  async simulateTransfer(organizationId: string, amountKobo: number): Promise<{ reference: string; rawBody: string; signature: string }> {
    const reference = `SBX${randomBytes(8).toString('hex').toUpperCase()}`;
    const { rows } = await this.pool.query<{ fees_kobo: string; paid_at: Date; id: string }>(
      `insert into sandbox_payments (reference, amount_kobo, status, fees_kobo, callback_url, paid_at, created_at)
       values ($1, $2::bigint, 'success', least(round($2::bigint * 0.01), 30000), '', now(), now()) returning fees_kobo, paid_at, id`,
      [reference, amountKobo],
    );
    const row = rows[0];
    const rawBody = JSON.stringify({
      event: 'charge.success',
      data: {
        id: Number(row.id),
        domain: 'test',
        status: 'success',
        reference,
        amount: amountKobo,
        fees: Number(row.fees_kobo),
        currency: 'NGN',
        channel: 'dedicated_nuban',
        paid_at: row.paid_at.toISOString(),
        customer: { customer_code: SandboxRail.customerCode(organizationId) },
      },
    });
    return { reference, rawBody, signature: paystackSignature(this.secretKey, rawBody) };
  }
}
