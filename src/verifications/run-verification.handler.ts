import { Inject, Logger } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import { Clock } from '../common/clock.js';
import { InvariantViolated, ProviderFailed, ServiceUnavailable, ValidationFailed } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import { verificationProviderDurationSeconds, verificationsTotal } from '../metrics/metrics.js';
import { Portraits, PORTRAIT_ID_FIELD } from '../portraits/portraits.service.js';
import { ProviderSelector } from '../providers/provider-selector.js';
import type { ProviderOutcome, VerificationProvider } from '../providers/provider.port.js';
import { COUNTRY_CODE, SCOPE_CATEGORY, type Scope } from '../scopes/scopes.js';
import type { WalletId } from '../wallets/wallet-ledger.port.js';
import { InFlightChecks } from './in-flight-checks.js';
import { priceOf } from './scope-price.js';
import { assertScopeAllowed } from './scope-access.js';
import { RunVerification } from './verification.commands.js';
import type { VerificationState } from './verification.decider.js';
import { parseScope, validateInputs } from './verification-inputs.js';
import { CHECK_WRITER, type CheckWriter, type RequestCommand, type TerminalCommand } from './check-writer.js';
import { OUTCOME_UNKNOWN, OUTCOME_UNKNOWN_MESSAGE, OutcomeNotKnown, VerificationStreams } from './verification.stream.js';
import { verificationView, type VerificationView } from './verification.views.js';

export const PROVIDER_FAILED_MESSAGE = 'The provider could not complete the check; the wallet was not charged';

/**
 * The run of a check: request, reserve, call the provider, finish, capture or release.
 * Every refusal that needs no money (403, 422) happens before the first append. How the request
 * and the finish are written with the money is the check writer's (check-writer.ts): on a store
 * that writes several streams in one transaction (PostgreSQL) a check commits twice to the event
 * log; otherwise (EventStoreDB) each is an append of its own.
 */
@CommandHandler(RunVerification)
export class RunVerificationHandler implements ICommandHandler<RunVerification, VerificationView> {
  private readonly logger = new Logger('RunVerification');

  constructor(
    @Inject(VerificationStreams) private readonly streams: VerificationStreams,
    @Inject(CHECK_WRITER) private readonly writer: CheckWriter,
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
    const requested = await this.writer.request(requestCommand, wallet, context);
    // Finished already: another writer settled it while the reservation was refused.
    if (requested.status !== 'pending') return requested;

    const stopProviderTimer = verificationProviderDurationSeconds.startTimer({ scope });
    const outcome = await this.callProvider(provider, scope, input);
    stopProviderTimer({ outcome: outcome.outcome });
    const command = await this.terminalCommand(reference, outcome, key.organizationId);
    const settled = await this.writer.finishAndSettle(reference, requested, command, wallet, context);
    if (settled.status !== 'none' && settled.status !== 'pending') {
      verificationsTotal.inc({ scope, environment: key.environment, outcome: settled.status });
    }
    return settled;
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
}
