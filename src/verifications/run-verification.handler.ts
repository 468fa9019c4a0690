import { Inject, Logger } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import { Clock } from '../common/clock.js';
import { Forbidden, InsufficientBalance, InvariantViolated, ProviderFailed, ServiceUnavailable, ValidationFailed, VerificationAlreadyExists } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { EventStoreUnavailableError, type JsonObject } from '../event-store/event-store.port.js';
import { isConnectionError } from '../database/connection-errors.js';
import { AlongsideRefused } from '../event-sourcing/event-sourced-handler.js';
import { chargedKoboTotal, verificationProviderDurationSeconds, verificationsTotal } from '../metrics/metrics.js';
import { Portraits, PORTRAIT_ID_FIELD } from '../portraits/portraits.service.js';
import { ProviderSelector } from '../providers/provider-selector.js';
import type { ProviderOutcome, VerificationProvider } from '../providers/provider.port.js';
import { COUNTRY_CODE, SCOPE_CATEGORY, type Scope } from '../scopes/scopes.js';
import { WalletLedger, type WalletId } from '../wallets/wallet-ledger.port.js';
import { InFlightChecks } from './in-flight-checks.js';
import { priceOf } from './scope-price.js';
import { assertScopeAllowed } from './scope-access.js';
import { RunVerification } from './verification.commands.js';
import type { VerificationCommand, VerificationState } from './verification.decider.js';
import { parseScope, validateInputs } from './verification-inputs.js';
import { OUTCOME_UNKNOWN, OUTCOME_UNKNOWN_MESSAGE, OutcomeNotKnown, VerificationStreams } from './verification.stream.js';
import { verificationView, type VerificationView } from './verification.views.js';

type RequestCommand = Extract<VerificationCommand, { type: 'RequestVerification' }>;
type TerminalCommand = Exclude<VerificationCommand, { type: 'RequestVerification' | 'ErasePersonalData' }>;

export const PROVIDER_FAILED_MESSAGE = 'The provider could not complete the check; the wallet was not charged';

/**
 * The run of a check: request, reserve, call the provider, finish, capture or release.
 * Every refusal that needs no money (403, 422) happens before the first append. On a store that
 * writes several streams in one transaction (PostgreSQL) a check commits twice to the event log:
 * the request with its reservation (or its rejection), then the terminal event with its capture or
 * release; otherwise (EventStoreDB) each is an append of its own.
 */
@CommandHandler(RunVerification)
export class RunVerificationHandler implements ICommandHandler<RunVerification, VerificationView> {
  private readonly logger = new Logger('RunVerification');

  constructor(
    @Inject(VerificationStreams) private readonly streams: VerificationStreams,
    @Inject(WalletLedger) private readonly ledger: WalletLedger,
    @Inject(ProviderSelector) private readonly providers: ProviderSelector,
    @Inject(Portraits) private readonly portraits: Portraits,
    @Inject(InFlightChecks) private readonly inFlight: InFlightChecks,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
  ) {}

  async execute(command: RunVerification): Promise<VerificationView> {
    const { key, context } = command;
    const scope = parseScope(command.scope);
    assertScopeAllowed(key, scope);
    const { input, request } = validateInputs(scope, command.body);
    const provider = this.providers.select(key, scope);
    const problems = provider.inputProblems(scope, input);
    if (problems.length > 0) throw new ValidationFailed(problems);
    const priceKobo = priceOf(key, scope, this.config);
    const reference = this.ids.reference();
    return this.inFlight.track(async () => {
      let state: VerificationState;
      try {
        state = await this.run(reference, key, scope, input, request, priceKobo, provider, context);
      } finally {
        this.streams.done(reference);
      }
      const view = verificationView(state);
      const shown = { ...view, result: this.portraits.present(view.result) };
      // Never 201 with a check still running: the outcome is the stream's, once it shows one.
      if (state.status === 'pending') throw new OutcomeNotKnown(view.reference);
      if (state.status === 'failed' && state.reasonCode === OUTCOME_UNKNOWN) throw new ServiceUnavailable(OUTCOME_UNKNOWN_MESSAGE, { reference: view.reference });
      if (state.status === 'failed') throw new ProviderFailed(view.errorMessage ?? PROVIDER_FAILED_MESSAGE, { reference: view.reference, failureReason: view.failureReason });
      return shown;
    });
  }

  private async run(
    reference: string,
    key: AuthenticatedKey,
    scope: Scope,
    input: Readonly<Record<string, string>>,
    request: JsonObject,
    priceKobo: number,
    provider: VerificationProvider,
    context: CommandContext,
  ): Promise<VerificationState> {
    const wallet: WalletId = { organizationId: key.organizationId, environment: key.environment };
    const requestCommand: RequestCommand = {
      type: 'RequestVerification',
      data: {
        reference,
        organizationId: key.organizationId,
        environment: key.environment,
        keyId: key.keyId,
        scope,
        category: SCOPE_CATEGORY,
        countryCode: COUNTRY_CODE,
        request,
        priceKobo,
        requestedAt: this.clock.now().toISOString(),
      },
    };
    const requested = this.streams.writesWithWallet
      ? await this.requestWithReservation(requestCommand, wallet, context)
      : await this.requestThenReserve(requestCommand, wallet, context);
    // Finished already: another writer settled it while the reservation was refused.
    if (requested.status !== 'pending') return requested;

    const stopProviderTimer = verificationProviderDurationSeconds.startTimer({ scope });
    const outcome = await this.callProvider(provider, scope, input);
    stopProviderTimer({ outcome: outcome.outcome });
    const command = await this.terminalCommand(reference, outcome, key.organizationId);
    const settled = await this.finishAndSettle(reference, requested, command, wallet, context);
    if (settled.status !== 'none' && settled.status !== 'pending') {
      verificationsTotal.inc({ scope, environment: key.environment, outcome: settled.status });
    }
    return settled;
  }

  /**
   * One transaction (a store with atomic multi-stream appends): the request and its reservation,
   * or the request and its rejection when the balance is too low. Answers the pending request.
   */
  private async requestWithReservation(command: RequestCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    const { reference, priceKobo, scope } = command.data;
    const made = await this.streams.requestAlongside(command, context);
    let reservation;
    try {
      reservation = await this.ledger.reserve(wallet, { reference, amountKobo: priceKobo, scope }, context, made.alongside);
    } catch (error) {
      made.notWritten();
      if (error instanceof AlongsideRefused) throw new VerificationAlreadyExists('This reference is already in use');
      // Written together or not at all: when the stream shows the request, its reservation is held
      // too. Fail the check now if we can; the recovery process settles the rest.
      const seen = await this.streams.load(reference).catch(() => undefined);
      // Not written: nothing to name. Unreadable: it may have been, so the client gets the reference.
      if (seen?.status === 'none') throw error;
      const settled = seen?.status === 'pending' ? await this.settleAfterError(reference, seen, wallet, context) : seen;
      throw withReference(error, reference, settled);
    }
    if (reservation.alongside === undefined) throw new InvariantViolated(`the request of ${reference} was not written with its reservation`);
    const requested = await made.written(reservation.alongside);
    if (!reservation.reserved) {
      verificationsTotal.inc({ scope, environment: wallet.environment, outcome: 'rejected' });
      throw new InsufficientBalance('The wallet balance is too low for this check', { reference, priceKobo, balanceKobo: reservation.availableKobo });
    }
    return requested.state;
  }

  /** Each an append of its own (EventStoreDB): the request, then the reservation, then the rejection if refused. */
  private async requestThenReserve(command: RequestCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    const { reference, priceKobo, scope } = command.data;
    const requested = await this.streams.request(command, context);
    let reservation;
    try {
      reservation = await this.ledger.reserve(wallet, { reference, amountKobo: priceKobo, scope }, context);
    } catch (error) {
      // Nothing may be held (the reservation's fate is unknown): fail the check now if we can; the recovery process settles the rest.
      const settled = await this.settleAfterError(reference, requested.state, wallet, context);
      throw withReference(error, reference, settled);
    }
    if (!reservation.reserved) {
      const rejected = await this.streams.finish(reference, requested.state, { type: 'RejectVerification', priceKobo, balanceKobo: reservation.availableKobo, at: this.clock.now() }, context);
      if (rejected.won) {
        verificationsTotal.inc({ scope, environment: wallet.environment, outcome: 'rejected' });
        throw new InsufficientBalance('The wallet balance is too low for this check', { reference, priceKobo, balanceKobo: reservation.availableKobo });
      }
      return this.settle(reference, rejected.state, wallet, context);
    }
    return requested.state;
  }

  /**
   * The terminal event and the money: in one transaction where the store allows (the completion
   * with its capture, the failure with its release), else the terminal event, then the capture or
   * release. When the pair is refused (another finisher won), or its answer is lost, or the wallet
   * stays busy, the stream decides (finishAgain) and the money follows what it shows, as in the
   * two-step flow; capture and release are idempotent per reference.
   */
  private async finishAndSettle(reference: string, state: VerificationState, command: TerminalCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    if (!this.streams.writesWithWallet) {
      const finished = await this.streams.finish(reference, state, command, context);
      return this.settle(reference, finished.state, wallet, context);
    }
    const made = await this.streams.finishAlongside(reference, state, command, context);
    let written;
    try {
      written =
        command.type === 'CompleteVerification'
          ? await this.ledger.capture(wallet, reference, context, made.alongside)
          : await this.ledger.release(wallet, reference, command.type === 'FailVerification' ? command.reasonCode : 'failed', context, made.alongside);
    } catch (error) {
      if (!(error instanceof AlongsideRefused)) this.logger.warn('A finished check and its settlement were not confirmed together; settling from the stream');
      const finished = await this.streams.finishAgain(reference, state, command, context);
      return this.settle(reference, finished.state, wallet, context);
    }
    if (written.alongside === undefined) throw new InvariantViolated(`the terminal event of ${reference} was not written with its settlement`);
    const finished = await made.written(written.alongside);
    if (finished.state.status === 'found' || finished.state.status === 'not_found') {
      chargedKoboTotal.inc({ scope: finished.state.requested.scope, environment: wallet.environment }, finished.state.requested.priceKobo);
    }
    return finished.state;
  }

  private async callProvider(provider: VerificationProvider, scope: Scope, input: Readonly<Record<string, string>>): Promise<ProviderOutcome> {
    const timeoutMs = this.config.verifications.providerTimeoutMs;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<ProviderOutcome>((resolveTimeout) => {
      timer = setTimeout(() => {
        controller.abort();
        resolveTimeout({ outcome: 'failed', reasonCode: 'provider_timeout', retryable: true });
      }, timeoutMs);
    });
    try {
      return await Promise.race([provider.verify(scope, input, { timeoutMs, signal: controller.signal }), timedOut]);
    } catch {
      // Whatever the provider still has under way is cancelled. (After an answer nothing is, and
      // aborting anyway would build a DOMException, stack and all, for every check.)
      controller.abort();
      // The provider's error may quote the request: never log it, only that it happened.
      this.logger.warn(`Provider ${provider.name} threw on a ${scope} check`);
      return { outcome: 'failed', reasonCode: 'provider_error', retryable: true };
    } finally {
      clearTimeout(timer);
    }
  }

  /** The terminal command for the provider's outcome (a portrait stored first, when there is one). */
  private async terminalCommand(reference: string, outcome: ProviderOutcome, organizationId: string): Promise<TerminalCommand> {
    const at = this.clock.now();
    switch (outcome.outcome) {
      case 'found': {
        let result = outcome.result;
        if (outcome.portrait !== undefined) {
          let portraitId: string | null;
          try {
            portraitId = await this.portraits.store(organizationId, reference, outcome.portrait);
          } catch {
            this.logger.error('Could not store a portrait; the check is failed and not charged');
            return { type: 'FailVerification', reasonCode: 'portrait_storage_failed', errorMessage: 'The result could not be stored; the wallet was not charged', at };
          }
          if (portraitId !== null) result = { ...result, [PORTRAIT_ID_FIELD]: portraitId };
        }
        return { type: 'CompleteVerification', outcome: 'found', result, at };
      }
      case 'not_found':
        return { type: 'CompleteVerification', outcome: 'not_found', result: {}, at };
      case 'failed': {
        const errorMessage =
          outcome.reasonCode === 'provider_timeout'
            ? `The provider did not answer within ${this.config.verifications.providerTimeoutMs} ms; the wallet was not charged`
            : PROVIDER_FAILED_MESSAGE;
        return { type: 'FailVerification', reasonCode: outcome.reasonCode, errorMessage, at };
      }
      default: {
        const _exhaustive: never = outcome;
        throw new InvariantViolated(`unknown provider outcome ${String(_exhaustive)}`);
      }
    }
  }

  /** Capture for found / not_found, release otherwise. Both are idempotent per reference. */
  private async settle(reference: string, state: VerificationState, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    if (state.status === 'found' || state.status === 'not_found') {
      const { scope, priceKobo } = state.requested;
      await this.ledger.capture(wallet, reference, context).then(
        () => chargedKoboTotal.inc({ scope, environment: wallet.environment }, priceKobo),
        () => this.logger.warn('Capture deferred to the recovery process'),
      );
    } else if (state.status === 'failed') {
      await this.ledger.release(wallet, reference, state.reasonCode ?? 'failed', context).catch(() => this.logger.warn('Release deferred to the recovery process'));
    }
    return state;
  }

  /** The check's state once failed here, or undefined when that could not be written (recovery settles it). */
  private async settleAfterError(reference: string, state: VerificationState, wallet: WalletId, context: CommandContext): Promise<VerificationState | undefined> {
    try {
      return await this.finishAndSettle(reference, state, { type: 'FailVerification', reasonCode: 'internal_error', errorMessage: NOT_RUN_MESSAGE, at: this.clock.now() }, wallet, context);
    } catch {
      this.logger.warn('A failed check is left to the recovery process');
      return undefined;
    }
  }
}

const NOT_RUN_MESSAGE = 'The check could not be run; the wallet was not charged';

/**
 * A store failure after the request was (or may have been) written: still 503, but naming the
 * check, so the client can read its outcome rather than run and pay for it again. Other errors
 * (a bug, a refusal with its own details) pass unchanged.
 */
function withReference(error: unknown, reference: string, settled: VerificationState | undefined): unknown {
  const unavailable = error instanceof EventStoreUnavailableError || isConnectionError(error) || (error instanceof ServiceUnavailable && error.details.reference === undefined);
  if (!unavailable) return error;
  if (settled?.status === 'failed') return new ServiceUnavailable(NOT_RUN_MESSAGE, { reference });
  return new OutcomeNotKnown(reference);
}
