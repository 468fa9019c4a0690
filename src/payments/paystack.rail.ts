import { createHmac, timingSafeEqual } from 'node:crypto';
import { BrokenCircuitError, circuitBreaker, ConsecutiveBreaker, handleWhen, TaskCancelledError, timeout, TimeoutStrategy, type CircuitBreakerPolicy } from 'cockatiel';
import { endpoint, httpJson, isObject, UpstreamFailure, type HttpAnswer } from '../providers/upstream.js';
import type { VerifiedTransaction } from './topup.decider.js';
import { paymentMetrics } from './payment.metrics.js';
import { PaymentRailFailure, type Checkout, type DedicatedAccount, type PaymentRail, type PendingAccount } from './payment-rail.port.js';

/** The secret key in force (PaystackKeySource): undefined while none is set; `fresh` reads past any cache. */
export interface PaystackKeys {
  current(fresh?: boolean): Promise<string | undefined>;
}

export interface PaystackSettings {
  readonly baseUrl: string;
  readonly keys: PaystackKeys;
  readonly timeoutMs: number;
  readonly breakerFailures: number;
  readonly breakerHalfOpenMs: number;
  /** The bank slug asked for dedicated accounts (PAYSTACK_PREFERRED_BANK). */
  readonly preferredBank?: string;
}

/** Hex HMAC-SHA512 of the raw body under the secret key: Paystack's `x-paystack-signature`. */
export function paystackSignature(secretKey: string, rawBody: string): string {
  return createHmac('sha512', secretKey).update(rawBody, 'utf8').digest('hex');
}

export function signatureMatches(secretKey: string, rawBody: string, signature: string | undefined): boolean {
  if (signature === undefined || !/^[0-9a-f]{128}$/i.test(signature)) return false;
  return timingSafeEqual(Buffer.from(paystackSignature(secretKey, rawBody), 'hex'), Buffer.from(signature, 'hex'));
}

const VERIFIED_STATUSES: Readonly<Record<string, VerifiedTransaction['status']>> = { success: 'success', failed: 'failed', abandoned: 'abandoned', reversed: 'reversed' };

const RAIL_REASONS: Readonly<Record<string, string>> = {
  provider_unreachable: 'payment_unreachable',
  provider_timeout: 'payment_timeout',
  provider_malformed_response: 'payment_malformed_response',
};

function failureFor(status: number): PaymentRailFailure {
  if (status === 401 || status === 403) return new PaymentRailFailure('payment_unauthorized', false);
  if (status === 429) return new PaymentRailFailure('payment_rate_limited', false);
  if (status >= 500) return new PaymentRailFailure('payment_unavailable', true);
  return new PaymentRailFailure('payment_rejected', false);
}

/**
 * `GET /transaction/verify/:reference`: `{status: true, data: {id, status, reference, amount, fees,
 * currency, paid_at, …}}`; an unknown reference is 400 (or 404) `{status: false, message:
 * "Transaction reference not found"}`. `ongoing`, `pending`, `processing`, `queued` are not final.
 */
export function interpretVerify(reference: string, answer: HttpAnswer): VerifiedTransaction | null {
  if ((answer.status === 400 || answer.status === 404) && isObject(answer.json) && answer.json.status === false) return null;
  if (answer.status !== 200) throw failureFor(answer.status);
  const body = answer.json;
  if (!isObject(body) || body.status !== true || !isObject(body.data)) throw new PaymentRailFailure('payment_malformed_response', true);
  const data = body.data;
  if (data.reference !== reference || !Number.isSafeInteger(data.amount) || typeof data.status !== 'string' || typeof data.currency !== 'string') {
    throw new PaymentRailFailure('payment_malformed_response', true);
  }
  const fees = data.fees === null || data.fees === undefined ? 0 : data.fees;
  if (!Number.isSafeInteger(fees)) throw new PaymentRailFailure('payment_malformed_response', true);
  return {
    status: VERIFIED_STATUSES[data.status] ?? 'pending',
    amountKobo: data.amount as number,
    feesKobo: fees as number,
    currency: data.currency,
    paidAt: typeof data.paid_at === 'string' ? data.paid_at : null,
    providerTransactionId: typeof data.id === 'number' || typeof data.id === 'string' ? String(data.id) : '',
  };
}

/** `POST /transaction/initialize`: `{status: true, data: {authorization_url, access_code, reference}}`. */
export function interpretInitialize(answer: HttpAnswer): Checkout {
  if (answer.status !== 200) throw failureFor(answer.status);
  const body = answer.json;
  if (!isObject(body) || body.status !== true || !isObject(body.data) || typeof body.data.authorization_url !== 'string' || !/^https?:\/\//.test(body.data.authorization_url)) {
    throw new PaymentRailFailure('payment_malformed_response', true);
  }
  return { authorizationUrl: body.data.authorization_url };
}

/** `POST /customer`: `{status: true, data: {customer_code, …}}`. */
export function interpretCustomer(answer: HttpAnswer): string {
  if (answer.status !== 200 && answer.status !== 201) throw failureFor(answer.status);
  const body = answer.json;
  if (!isObject(body) || body.status !== true || !isObject(body.data) || typeof body.data.customer_code !== 'string')
    throw new PaymentRailFailure('payment_malformed_response', true);
  return body.data.customer_code;
}

/** A dedicated account resource (`{bank: {name}, account_name, account_number}`), or undefined when it does not name one. */
export function accountOf(customerCode: string, data: unknown): DedicatedAccount | undefined {
  if (!isObject(data) || !isObject(data.bank)) return undefined;
  const { account_number: accountNumber, account_name: accountName } = data;
  const bankName = data.bank.name;
  if (typeof accountNumber !== 'string' || !/^\d{10}$/.test(accountNumber) || typeof accountName !== 'string' || typeof bankName !== 'string') return undefined;
  return { customerCode, accountNumber, accountName: accountName.slice(0, 200), bankName: bankName.slice(0, 200) };
}

/**
 * `POST /dedicated_account`: `{status: true, data: {bank: {name}, account_name, account_number, assigned, …}}`;
 * an accepted request with no account yet (`assigned: false`, or no data: "in progress") is assigned
 * later, by the `dedicatedaccount.assign.success` webhook.
 */
export function interpretDedicatedAccount(customerCode: string, answer: HttpAnswer): DedicatedAccount | PendingAccount {
  if (answer.status !== 200 && answer.status !== 201) throw failureFor(answer.status);
  const body = answer.json;
  if (!isObject(body) || body.status !== true) throw new PaymentRailFailure('payment_malformed_response', true);
  const data = body.data;
  if (data === undefined || data === null || (isObject(data) && data.assigned === false)) return { customerCode, pending: true };
  const account = accountOf(customerCode, data);
  if (account === undefined) throw new PaymentRailFailure('payment_malformed_response', true);
  return account;
}

/**
 * Paystack (https://api.paystack.co), the service's own account: `Authorization: Bearer <secret
 * key>`, amounts in kobo. Each call runs under a timeout and a circuit breaker that only the
 * rail's own health trips (timeouts, resets, 5xx, unreadable answers); a verify (a read) is tried
 * again once when the connection was refused or reset before any answer.
 */
export class PaystackRail implements PaymentRail {
  readonly name = 'paystack' as const;
  private readonly breaker: CircuitBreakerPolicy;

  constructor(private readonly settings: PaystackSettings) {
    this.breaker = circuitBreaker(
      handleWhen((error) => error instanceof PaymentRailFailure && error.health),
      { halfOpenAfter: settings.breakerHalfOpenMs, breaker: new ConsecutiveBreaker(settings.breakerFailures) },
    );
  }

  /** Under the key in force; a mismatch is checked once more against the log's latest key (just set on another instance). */
  async signatureValid(rawBody: string, signature: string | undefined): Promise<boolean> {
    const key = await this.settings.keys.current();
    if (key !== undefined && signatureMatches(key, rawBody, signature)) return true;
    const latest = await this.settings.keys.current(true);
    return latest !== undefined && latest !== key && signatureMatches(latest, rawBody, signature);
  }

  async configured(): Promise<boolean> {
    return (await this.settings.keys.current()) !== undefined;
  }

  async initialize(input: { reference: string; amountKobo: number; email: string; callbackUrl: string }): Promise<Checkout> {
    const body = JSON.stringify({ email: input.email, amount: input.amountKobo, currency: 'NGN', reference: input.reference, callback_url: input.callbackUrl });
    return this.call(
      'initialize',
      async (signal) =>
        httpJson(
          endpoint(this.settings.baseUrl, '/transaction/initialize'),
          { method: 'POST', headers: { ...(await this.headers()), 'content-type': 'application/json' }, body },
          signal,
        ),
      interpretInitialize,
    );
  }

  async assignDedicatedAccount(input: { organizationId: string; email: string }): Promise<DedicatedAccount | PendingAccount> {
    const post = (path: string, body: unknown) => async (signal: AbortSignal) =>
      httpJson(
        endpoint(this.settings.baseUrl, path),
        { method: 'POST', headers: { ...(await this.headers()), 'content-type': 'application/json' }, body: JSON.stringify(body) },
        signal,
      );
    const customerCode = await this.call('customer', post('/customer', { email: input.email, metadata: { organization_id: input.organizationId } }), interpretCustomer);
    return this.call('dedicated_account', post('/dedicated_account', { customer: customerCode, preferred_bank: this.settings.preferredBank ?? 'wema-bank' }), (answer) =>
      interpretDedicatedAccount(customerCode, answer),
    );
  }

  async verify(reference: string): Promise<VerifiedTransaction | null> {
    const request = async (signal: AbortSignal) =>
      httpJson(endpoint(this.settings.baseUrl, `/transaction/verify/${encodeURIComponent(reference)}`), { method: 'GET', headers: await this.headers() }, signal);
    try {
      return await this.call('verify', request, (answer) => interpretVerify(reference, answer));
    } catch (error) {
      if (error instanceof PaymentRailFailure && error.reasonCode === 'payment_unreachable') return this.call('verify', request, (answer) => interpretVerify(reference, answer));
      throw error;
    }
  }

  private async headers(): Promise<Record<string, string>> {
    const key = await this.settings.keys.current();
    if (key === undefined) throw new PaymentRailFailure('payment_unconfigured', false);
    return { authorization: `Bearer ${key}`, accept: 'application/json' };
  }

  private async call<T>(operation: string, request: (signal: AbortSignal) => Promise<HttpAnswer>, interpret: (answer: HttpAnswer) => T): Promise<T> {
    const started = process.hrtime.bigint();
    let outcome = 'ok';
    try {
      const attempt = timeout(this.settings.timeoutMs, TimeoutStrategy.Aggressive);
      return await this.breaker.execute(async () => {
        try {
          return await attempt.execute(async ({ signal }) => interpret(await request(signal)));
        } catch (error) {
          if (error instanceof TaskCancelledError) throw new PaymentRailFailure('payment_timeout', true);
          if (error instanceof UpstreamFailure) throw new PaymentRailFailure(RAIL_REASONS[error.reasonCode] ?? 'payment_unavailable', true);
          throw error;
        }
      });
    } catch (error) {
      const failure =
        error instanceof PaymentRailFailure
          ? error
          : error instanceof BrokenCircuitError
            ? new PaymentRailFailure('payment_circuit_open', false)
            : error instanceof TaskCancelledError
              ? new PaymentRailFailure('payment_timeout', true)
              : new PaymentRailFailure('payment_error', true);
      outcome = failure.reasonCode;
      throw failure;
    } finally {
      paymentMetrics.requests.inc({ rail: this.name, operation, outcome });
      paymentMetrics.duration.observe({ rail: this.name, operation }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }
}
