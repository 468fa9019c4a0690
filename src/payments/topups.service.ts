import { Inject, Injectable, Logger } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import type { Environment } from '../common/environment.js';
import { Forbidden, InvalidSignature, NotFound, ServiceUnavailable, ValidationFailed } from '../common/errors.js';
import { SYSTEM_ACTOR, type CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG, RUNTIME, type Runtime } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { EventSourcedHandler, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../event-sourcing/retry.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { PublicOrigin } from '../common/public-origin.js';
import { MAX_FUNDING_KOBO } from '../wallets/wallet.decider.js';
import { WalletLedger } from '../wallets/wallet-ledger.port.js';
import { paymentMetrics } from './payment.metrics.js';
import { PaymentRailFailure, type PaymentRail } from './payment-rail.port.js';
import { accountOf, PaystackRail } from './paystack.rail.js';
import { PaystackKeySource } from './paystack-key.js';
import { CredentialsCipher } from '../providers/credentials.js';
import { SandboxRail } from './sandbox.rail.js';
import { topUpDecider, type Channel, type Rail, type TopUpCommand, type TopUpState } from './topup.decider.js';
import {
  paymentAccountStream,
  topUpAllowanceStream,
  topUpFundingReference,
  topUpLimitsStream,
  topUpStream,
  type PaymentAccountEvent,
  type TopUpAllowanceEvent,
  type TopUpEvent,
  type TopUpLimitsSet,
} from './topup.events.js';
import { allowanceDecider, limitsDecider, type AllowanceCommand, type AllowanceState, type LimitsCommand, type OwnLimits } from './topup-allowance.decider.js';
import { paymentAccountDecider, type PaymentAccountCommand, type PaymentAccountState } from './payment-account.decider.js';
import { accountByCustomer, TOPUPS_PROJECTION, type DedicatedAccountView } from './topup.read-model.js';

const RETRY = linearJitter(10, 5);
/** Top-ups of one wallet started at once race on its day's allowance stream: enough attempts for a console's worth of them. */
const ALLOWANCE_RETRY = linearJitter(40, 5);
const PAGING = { pageSize: 100, maxPages: 10 };
export const TOPUP_REFERENCE = /^top_[0-9A-HJKMNP-TV-Z]{26}$/;
/** The reference the rail gave a transfer to a dedicated account (Paystack allows letters, digits, `-`, `.`, `=`). */
const TRANSFER_REFERENCE = /^[A-Za-z0-9][A-Za-z0-9._=-]{0,99}$/;
/** Who is mailed a receipt. */
const RECEIPT_ROLES = ['owner', 'finance'];
/** Lagos is UTC+1 all year: its day starts at 23:00 UTC. */
const LAGOS_OFFSET_MS = 3_600_000;

/** The Lagos day (YYYY-MM-DD) of an instant. */
export function lagosDay(at: Date): string {
  return new Date(at.getTime() + LAGOS_OFFSET_MS).toISOString().slice(0, 10);
}

/** The limits in force for an organization: its own where an operator set them, else the deployment's. */
export interface TopUpLimits {
  readonly minTopUpKobo: number;
  readonly maxTopUpKobo: number;
  readonly dailyLimitKobo: number;
  /** What the operator set (null: the deployment's setting). */
  readonly own: OwnLimits;
}

export type WebhookOutcome = 'credited' | 'already_done' | 'flagged' | 'failed' | 'pending' | 'ignored' | 'assigned';

function stream(reference: string): Stream<TopUpState, TopUpCommand, TopUpEvent> {
  return { id: topUpStream(reference), decider: topUpDecider };
}

function naira(kobo: number): string {
  return `₦${(kobo / 100).toLocaleString('en-NG', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/**
 * Wallet top-ups paid from outside. A top-up is credited only after the rail's API verified the
 * payment, and the wallet funding carries the top-up's reference, which the wallet credits at most
 * once: so replayed webhooks, a webhook racing the payer's return, several instances, or a crash
 * between verifying and crediting (the recovery sweep finishes it) all credit once.
 */
@Injectable()
export class TopUps {
  private readonly logger = new Logger('TopUps');
  private readonly handler: EventSourcedHandler<TopUpState, TopUpCommand, TopUpEvent>;
  private readonly accounts: EventSourcedHandler<PaymentAccountState, PaymentAccountCommand, PaymentAccountEvent>;
  private readonly allowances: EventSourcedHandler<AllowanceState, AllowanceCommand, TopUpAllowanceEvent>;
  private readonly ownLimits: EventSourcedHandler<OwnLimits, LimitsCommand, TopUpLimitsSet>;
  readonly sandbox: SandboxRail;
  readonly paystack: PaystackRail;
  /** The deployment's Paystack secret key: sealed in the log by an operator, else PAYSTACK_SECRET_KEY. */
  readonly paystackKey: PaystackKeySource;

  constructor(
    @Inject(EVENT_STORE) store: EventStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(WalletLedger) private readonly ledger: WalletLedger,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(PublicOrigin) private readonly publicOrigin: PublicOrigin,
    @Inject(CredentialsCipher) cipher: CredentialsCipher,
  ) {
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
    this.accounts = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
    this.allowances = new EventSourcedHandler({ store, clock, ids, retry: ALLOWANCE_RETRY, paging: PAGING });
    this.ownLimits = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
    this.sandbox = new SandboxRail(pool);
    const { paystackSecretKey, paystackBaseUrl, paystackTimeoutMs } = config.payments;
    this.paystackKey = new PaystackKeySource(store, async () => cipher, clock, ids, paystackSecretKey);
    this.paystack = new PaystackRail({
      baseUrl: paystackBaseUrl,
      keys: this.paystackKey,
      timeoutMs: paystackTimeoutMs,
      preferredBank: config.payments.paystackPreferredBank,
      breakerFailures: config.providers.breakerFailures,
      breakerHalfOpenMs: config.providers.breakerHalfOpenMs,
    });
  }

  /** Test wallets pay on the sandbox; live ones on Paystack, or on the sandbox on the embedded default when no Paystack key is set. */
  async railFor(environment: Environment): Promise<PaymentRail> {
    if (environment === 'test') return this.sandbox;
    if (await this.paystack.configured()) return this.paystack;
    if (this.runtime.embedded) return this.sandbox;
    throw new Forbidden('top_up_unavailable', 'Live top-ups are not configured on this deployment');
  }

  rail(name: Rail): PaymentRail {
    return name === 'sandbox' ? this.sandbox : this.paystack;
  }

  /** The limits in force for the organization. */
  async limits(organizationId: string): Promise<TopUpLimits> {
    const { minTopUpKobo, maxTopUpKobo, dailyLimitKobo } = this.config.payments;
    const own = (await this.ownLimits.read({ id: topUpLimitsStream(organizationId), decider: limitsDecider })).state;
    return { minTopUpKobo, maxTopUpKobo: own.maxTopUpKobo ?? maxTopUpKobo, dailyLimitKobo: own.dailyLimitKobo ?? dailyLimitKobo, own };
  }

  /** An operator sets the organization's own limits (null: back to the deployment's); recorded on `topUpLimits-{organizationId}`. */
  async setLimits(organizationId: string, own: OwnLimits, context: CommandContext): Promise<TopUpLimits> {
    const { minTopUpKobo } = this.config.payments;
    const errors = [];
    for (const field of ['maxTopUpKobo', 'dailyLimitKobo'] as const) {
      const value = own[field];
      if (value !== null && (!Number.isSafeInteger(value) || value < minTopUpKobo || value > MAX_FUNDING_KOBO))
        errors.push({ field, message: `must be null or an integer from ${minTopUpKobo} to ${MAX_FUNDING_KOBO}` });
    }
    if (errors.length > 0) throw new ValidationFailed(errors);
    const handled = await this.ownLimits.handle({ id: topUpLimitsStream(organizationId), decider: limitsDecider }, { type: 'SetTopUpLimits', organizationId, ...own }, context);
    if (handled.status === 'conflict') throw new ServiceUnavailable('The limits are being changed concurrently; try again');
    return this.limits(organizationId);
  }

  /** Kobo of top-ups counted against today's limit of the wallet. */
  async countedToday(owner: { organizationId: string; environment: Environment }): Promise<number> {
    const day = lagosDay(this.clock.now());
    return (await this.allowances.read({ id: topUpAllowanceStream(owner.organizationId, owner.environment, day), decider: allowanceDecider })).state.totalKobo;
  }

  private async allowance(command: AllowanceCommand, context: CommandContext): Promise<void> {
    const handled = await this.allowances.handle(
      { id: topUpAllowanceStream(command.organizationId, command.environment, command.day), decider: allowanceDecider },
      command,
      context,
    );
    if (handled.status === 'conflict') throw new ServiceUnavailable('Top-ups of this wallet are being started concurrently; try again');
  }

  /**
   * Starts a top-up: within the limits, recorded before the payer is sent to the rail's checkout.
   * The day's limit is taken on the wallet's allowance stream for the day (an append with its
   * expected revision), never from a read model, so concurrent top-ups cannot overrun it.
   */
  async initiate(
    owner: { organizationId: string; environment: Environment },
    input: { amountKobo: number; channel: Channel; email: string },
    context: CommandContext,
  ): Promise<{ reference: string; authorizationUrl: string }> {
    const { minTopUpKobo, maxTopUpKobo, dailyLimitKobo } = await this.limits(owner.organizationId);
    if (!Number.isSafeInteger(input.amountKobo) || input.amountKobo < minTopUpKobo || input.amountKobo > maxTopUpKobo) {
      throw new ValidationFailed([{ field: 'amountKobo', message: `must be an integer from ${minTopUpKobo} to ${maxTopUpKobo}` }]);
    }
    const rail = await this.railFor(owner.environment);
    const day = lagosDay(this.clock.now());
    const reference = `top_${this.ids.reference().slice('vrf_'.length)}`;
    await this.allowance(
      { type: 'ReserveAllowance', organizationId: owner.organizationId, environment: owner.environment, day, reference, amountKobo: input.amountKobo, limitKobo: dailyLimitKobo },
      context,
    );
    const handled = await this.handler.handle(
      stream(reference),
      {
        type: 'InitiateTopUp',
        reference,
        organizationId: owner.organizationId,
        environment: owner.environment,
        rail: rail.name,
        channel: input.channel,
        amountKobo: input.amountKobo,
        day,
      },
      context,
    );
    if (handled.status === 'conflict') throw new ServiceUnavailable('The top-up is being changed concurrently; try again');
    if (handled.status === 'appended') await this.waiter.waitFor([TOPUPS_PROJECTION], handled.position, 5_000).catch(() => undefined);
    try {
      const checkout = await rail.initialize({ reference, amountKobo: input.amountKobo, email: input.email, callbackUrl: `${this.publicOrigin.origin()}/payments/return` });
      return { reference, authorizationUrl: checkout.authorizationUrl };
    } catch (error) {
      if (error instanceof PaymentRailFailure) throw new ServiceUnavailable('The payment provider is not answering; try again shortly', { reason: error.reasonCode });
      throw error;
    }
  }

  /** The organization's dedicated account in this environment (or its request), null before one is asked for. */
  async dedicatedAccount(owner: { organizationId: string; environment: Environment }): Promise<DedicatedAccountView | null> {
    const state = (await this.accounts.read({ id: paymentAccountStream(owner.organizationId, owner.environment), decider: paymentAccountDecider })).state;
    if (state === null) return null;
    const assigned = state.status === 'assigned' ? state : undefined;
    return {
      organizationId: state.organizationId,
      environment: state.environment,
      status: state.status,
      accountNumber: assigned?.accountNumber ?? null,
      accountName: assigned?.accountName ?? null,
      bankName: assigned?.bankName ?? null,
    };
  }

  /**
   * Asks the rail for a dedicated bank account for the organization, once per environment: a second
   * request answers the first account (or its pending request). A rail that assigns later answers
   * with the request recorded; its assignment webhook records the account or the failure, after
   * which it may be asked again.
   */
  async assignDedicatedAccount(owner: { organizationId: string; environment: Environment }, email: string, context: CommandContext): Promise<DedicatedAccountView> {
    const existing = await this.dedicatedAccount(owner);
    if (existing !== null && existing.status !== 'failed') return existing;
    const rail = await this.railFor(owner.environment);
    let account;
    try {
      account = await rail.assignDedicatedAccount({ organizationId: owner.organizationId, email });
    } catch (error) {
      if (error instanceof PaymentRailFailure) throw new ServiceUnavailable('The payment provider is not answering; try again shortly', { reason: error.reasonCode });
      throw error;
    }
    const ids = { organizationId: owner.organizationId, environment: owner.environment, rail: rail.name, customerCode: account.customerCode };
    const handled = await this.accounts.handle(
      { id: paymentAccountStream(owner.organizationId, owner.environment), decider: paymentAccountDecider },
      'pending' in account
        ? { type: 'RequestDedicatedAccount', ids }
        : { type: 'AssignDedicatedAccount', account: { ...ids, accountNumber: account.accountNumber, accountName: account.accountName, bankName: account.bankName } },
      context,
    );
    if (handled.status === 'conflict') throw new ServiceUnavailable('The account is being assigned concurrently; try again');
    if (handled.status === 'appended') await this.waiter.waitFor([TOPUPS_PROJECTION], handled.position, 5_000).catch(() => undefined);
    return (await this.dedicatedAccount(owner)) as DedicatedAccountView;
  }

  /**
   * `dedicatedaccount.assign.success` / `.failed`: the account the rail assigned to a customer we asked
   * one for (or its failure), recorded on the organization's account stream. Only the customer code
   * and the account are read; the customer's names, email and phone in the body are not kept.
   */
  private async receiveAssignment(rail: PaymentRail, event: string, data: unknown): Promise<WebhookOutcome> {
    const body = typeof data === 'object' && data !== null ? (data as { customer?: { customer_code?: unknown }; dedicated_account?: unknown }) : {};
    const customerCode = body.customer?.customer_code;
    if (typeof customerCode !== 'string' || customerCode.length > 100) throw new ValidationFailed([{ field: 'data.customer.customer_code', message: 'is missing' }]);
    const known = await accountByCustomer(this.pool, rail.name, customerCode);
    if (known === undefined) throw new NotFound('No dedicated account was asked for this customer');
    const owner = { organizationId: known.organizationId, environment: known.environment };
    let command: PaymentAccountCommand;
    if (event === 'dedicatedaccount.assign.success') {
      const account = accountOf(customerCode, body.dedicated_account);
      if (account === undefined) throw new ValidationFailed([{ field: 'data.dedicated_account', message: 'does not name an account' }]);
      command = { type: 'AssignDedicatedAccount', account: { ...owner, rail: rail.name, ...account } };
    } else {
      command = { type: 'FailDedicatedAccount', customerCode };
    }
    const context = { correlationId: `payment-webhook-${customerCode}`, actor: SYSTEM_ACTOR };
    const handled = await this.accounts.handle({ id: paymentAccountStream(owner.organizationId, owner.environment), decider: paymentAccountDecider }, command, context);
    if (handled.status === 'conflict') throw new ServiceUnavailable('The account is being changed concurrently; try again');
    if (handled.status === 'appended') await this.waiter.waitFor([TOPUPS_PROJECTION], handled.position, 5_000).catch(() => undefined);
    return handled.status === 'appended' ? (command.type === 'AssignDedicatedAccount' ? 'assigned' : 'failed') : 'already_done';
  }

  /**
   * A transfer to a dedicated account: Paystack names it by its own reference and the account's
   * customer code. Verified by that reference first; the top-up is then recorded for the amount
   * the provider confirms, and confirmed as any other.
   */
  private async receiveTransfer(rail: PaymentRail, reference: string, customerCode: string, reportedKobo: number, context: CommandContext): Promise<TopUpState> {
    const account = await accountByCustomer(this.pool, rail.name, customerCode);
    if (account === undefined || account.status !== 'assigned') throw new NotFound('No top-up with this reference');
    let verified;
    try {
      verified = await rail.verify(reference);
    } catch (error) {
      if (error instanceof PaymentRailFailure) throw new ServiceUnavailable('The payment provider is not answering; try again shortly', { reason: error.reasonCode });
      throw error;
    }
    if (verified === null || verified.status !== 'success') throw new NotFound('No top-up with this reference');
    const day = (await this.state(reference).catch(() => undefined))?.day || lagosDay(this.clock.now());
    await this.allowance(
      { type: 'ReserveAllowance', organizationId: account.organizationId, environment: account.environment, day, reference, amountKobo: verified.amountKobo, limitKobo: null },
      context,
    );
    const handled = await this.handler.handle(
      stream(reference),
      {
        type: 'InitiateTopUp',
        reference,
        organizationId: account.organizationId,
        environment: account.environment as Environment,
        rail: rail.name,
        channel: 'bank_transfer',
        amountKobo: verified.amountKobo,
        day,
      },
      context,
    );
    if (handled.status === 'conflict') throw new ServiceUnavailable('The top-up is being changed concurrently; try again');
    return this.confirm(reference, reportedKobo, context);
  }

  async state(reference: string): Promise<TopUpState> {
    if (!TOPUP_REFERENCE.test(reference) && !TRANSFER_REFERENCE.test(reference)) throw new NotFound('No top-up with this reference');
    const folded = await this.handler.read(stream(reference));
    if (folded.state.status === 'none') throw new NotFound('No top-up with this reference');
    return folded.state;
  }

  /**
   * Verifies the top-up with its rail and, when paid, credits its wallet once. `reportedKobo`: the
   * amount a webhook named; `at`: when the verification is judged (the sweep's pass; an `abandoned`
   * checkout younger than its lifetime stays open). A rail that does not answer leaves the top-up
   * as it was, for a retry (the provider's next delivery, the payer's return, the recovery sweep):
   * ServiceUnavailable.
   */
  async confirm(reference: string, reportedKobo: number | null, context: CommandContext, at: Date = this.clock.now()): Promise<TopUpState> {
    let state = await this.state(reference);
    if (state.status === 'credited' || state.status === 'flagged') return state;
    if (state.status !== 'paid') {
      const rail = this.rail(state.rail);
      if (!(await rail.configured())) throw new ServiceUnavailable('The payment provider of this top-up is not configured');
      let verified;
      try {
        verified = await rail.verify(reference);
      } catch (error) {
        if (error instanceof PaymentRailFailure) throw new ServiceUnavailable('The payment provider is not answering; try again shortly', { reason: error.reasonCode });
        throw error;
      }
      if (verified === null) return state;
      const overDailyLimit = state.status === 'failed' && verified.status === 'success' ? !(await this.countAgain(state, verified.amountKobo, context)) : false;
      state = await this.execute(reference, { type: 'RecordVerification', verified, reportedKobo, at, overDailyLimit }, context);
      if ((state.status === 'failed' || state.status === 'flagged') && state.day !== '') {
        await this.allowance({ type: 'ReleaseAllowance', organizationId: state.organizationId, environment: state.environment, day: state.day, reference }, context);
      }
      if (state.status !== 'paid') return state;
    }
    await this.ledger.fund(
      { organizationId: state.organizationId, environment: state.environment },
      { fundingReference: topUpFundingReference(reference), amountKobo: state.paidKobo },
      context,
    );
    const before = state.status;
    const handled = await this.handler.handle(stream(reference), { type: 'MarkCredited' }, context);
    if (handled.status === 'conflict') throw new ServiceUnavailable('The top-up is being changed concurrently; try again');
    if (handled.status === 'appended' && before === 'paid') await this.receipt(handled.folded.state);
    return handled.folded.state;
  }

  /**
   * A top-up that failed (its allowance given back) and was paid after all. Crediting it without
   * counting it again would let the day's top-ups pass the limit; crediting it over the limit would
   * make the limit a promise the ledger does not keep. So it is counted again on its day's allowance
   * stream when the limit has room (then credited), and otherwise held for an operator, flagged
   * `over_daily_limit`: the payer's money sits at the provider, and `audit:payments` and the
   * console's Payments audit report it (held, settled, not credited) until an operator refunds it
   * (or funds the wallet under their own reference). A finance auditor can then prove each day's
   * credits against the limit from the log, with every exception named. True when counted.
   */
  private async countAgain(state: TopUpState, amountKobo: number, context: CommandContext): Promise<boolean> {
    if (state.day === '') return true;
    const { dailyLimitKobo } = await this.limits(state.organizationId);
    const handled = await this.allowances.handle(
      { id: topUpAllowanceStream(state.organizationId, state.environment, state.day), decider: allowanceDecider },
      {
        type: 'ReserveAllowanceAgain',
        organizationId: state.organizationId,
        environment: state.environment,
        day: state.day,
        reference: state.reference,
        amountKobo,
        limitKobo: dailyLimitKobo,
      },
      context,
    );
    if (handled.status === 'conflict') throw new ServiceUnavailable('Top-ups of this wallet are being started concurrently; try again');
    return handled.folded.state.counted.has(state.reference);
  }

  /**
   * A webhook, exactly as received: the signature is checked before anything else is read. Only
   * `charge.success` moves money; it is confirmed by the rail's API, never by the body alone.
   */
  async receiveWebhook(railName: Rail, rawBody: string | undefined, signature: string | undefined): Promise<WebhookOutcome> {
    const rail = this.rail(railName);
    // The signature first: a mismatch reads the log's latest key, so `configured` is current after it.
    if (rawBody === undefined || !(await rail.signatureValid(rawBody, signature))) {
      if (!(await rail.configured())) throw new NotFound('This payment rail is not configured');
      paymentMetrics.webhooks.inc({ rail: railName, outcome: 'refused_signature' });
      throw new InvalidSignature('The webhook signature does not match its body');
    }
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      throw new ValidationFailed([{ field: 'body', message: 'is not JSON' }]);
    }
    const event = typeof body === 'object' && body !== null ? (body as { event?: unknown; data?: { reference?: unknown; amount?: unknown } }) : {};
    if (event.event === 'dedicatedaccount.assign.success' || event.event === 'dedicatedaccount.assign.failed') {
      const outcome = await this.receiveAssignment(rail, event.event, event.data);
      paymentMetrics.webhooks.inc({ rail: railName, outcome });
      return outcome;
    }
    if (event.event !== 'charge.success') {
      paymentMetrics.webhooks.inc({ rail: railName, outcome: 'ignored' });
      return 'ignored';
    }
    const reference = event.data?.reference;
    const amount = event.data?.amount;
    const data = event.data as { channel?: unknown; customer?: { customer_code?: unknown } } | undefined;
    const customerCode = data?.customer?.customer_code;
    if (
      typeof reference === 'string' &&
      !TOPUP_REFERENCE.test(reference) &&
      TRANSFER_REFERENCE.test(reference) &&
      data?.channel === 'dedicated_nuban' &&
      typeof customerCode === 'string'
    ) {
      const before = await this.state(reference).then(
        (state) => state.status,
        () => 'none',
      );
      const after = await this.receiveTransfer(rail, reference, customerCode, Number.isSafeInteger(amount) ? (amount as number) : -1, {
        correlationId: `payment-webhook-${reference}`,
        actor: SYSTEM_ACTOR,
      });
      const outcome: WebhookOutcome = before === 'credited' ? 'already_done' : after.status === 'credited' ? 'credited' : after.status === 'flagged' ? 'flagged' : 'pending';
      paymentMetrics.webhooks.inc({ rail: railName, outcome });
      return outcome;
    }
    if (typeof reference !== 'string' || !TOPUP_REFERENCE.test(reference)) {
      paymentMetrics.webhooks.inc({ rail: railName, outcome: 'unknown_reference' });
      throw new NotFound('No top-up with this reference');
    }
    const state = await this.state(reference).catch((error: unknown) => {
      if (error instanceof NotFound) paymentMetrics.webhooks.inc({ rail: railName, outcome: 'unknown_reference' });
      throw error;
    });
    if (state.rail !== railName) throw new NotFound('No top-up with this reference');
    const before = state.status;
    const after = await this.confirm(reference, Number.isSafeInteger(amount) ? (amount as number) : -1, { correlationId: `payment-webhook-${reference}`, actor: SYSTEM_ACTOR });
    const outcome: WebhookOutcome =
      before === 'credited' ? 'already_done' : after.status === 'credited' ? 'credited' : after.status === 'flagged' ? 'flagged' : after.status === 'failed' ? 'failed' : 'pending';
    paymentMetrics.webhooks.inc({ rail: railName, outcome });
    return outcome;
  }

  private async execute(reference: string, command: TopUpCommand, context: CommandContext): Promise<TopUpState> {
    const handled = await this.handler.handle(stream(reference), command, context);
    if (handled.status === 'conflict') throw new ServiceUnavailable('The top-up is being changed concurrently; try again');
    return handled.folded.state;
  }

  /** A receipt mail to the organization's owners and finance users, once per credited top-up (only the writer of the credit sends it). */
  private async receipt(state: TopUpState): Promise<void> {
    try {
      await this.pool.query(
        `insert into console_outbox (recipient, subject, body, link, created_at)
         select 'user:' || id, $3, $4, null, $5 from console_users where kind = 'integrator' and organization_id = $1 and role = any($2::text[])`,
        [
          state.organizationId,
          RECEIPT_ROLES,
          `Receipt: ${naira(state.paidKobo)} added to your ${state.environment} wallet`,
          `Top-up ${state.reference} credited your ${state.environment} wallet with ${naira(state.paidKobo)}. The payment provider's fees on it: ${naira(state.feesKobo)} (not taken from the credit).`,
          this.clock.now(),
        ],
      );
    } catch {
      this.logger.warn('A top-up receipt mail could not be queued');
    }
  }
}
