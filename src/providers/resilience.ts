import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitState,
  ConsecutiveBreaker,
  ConstantBackoff,
  handleWhen,
  retry,
  TaskCancelledError,
  timeout,
  TimeoutStrategy,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import type { FieldError } from '../common/errors.js';
import type { Scope } from '../scopes/scopes.js';
import { serves, type UpstreamName } from './capabilities.js';
import { BREAKER_STATE_VALUE, providerMetrics } from './provider.metrics.js';
import { VerificationProvider, type ProviderCallOptions, type ProviderOutcome } from './provider.port.js';
import { isRetrySafe, UpstreamFailure, type UpstreamAdapter, type UpstreamAnswer } from './upstream.js';

export interface UpstreamPolicySettings {
  /** Per attempt, per upstream. */
  readonly timeoutMs: Readonly<Record<UpstreamName, number>>;
  /** Consecutive health failures that open an upstream's breaker. */
  readonly breakerFailures: number;
  /** How long an open breaker refuses calls before letting one through (half-open). */
  readonly breakerHalfOpenMs: number;
  /** Extra attempts after a failure where nothing was answered (connection refused or reset). */
  readonly retryAttempts: number;
  readonly retryDelayMs: number;
}

/** The caller gave up (the run handler's own deadline): neither a timeout of the upstream nor a sign of its health. */
class CallerAborted extends Error {}

function stateName(state: CircuitState): keyof typeof BREAKER_STATE_VALUE {
  if (state === CircuitState.Closed) return 'closed';
  if (state === CircuitState.HalfOpen) return 'half_open';
  return 'open';
}

/**
 * One circuit breaker per upstream, shared by every organization using it: it counts only signs of
 * the upstream's own health (timeouts, resets, 5xx, unreadable answers, "service unavailable"), so
 * one organization's bad credentials or empty upstream wallet never cut off the others.
 *
 * Per attempt: cockatiel's timeout (aggressive: the request is aborted when it fires). Retries: at
 * most `retryAttempts`, and only when nothing was answered because the connection was refused or
 * reset before a response, or the name did not resolve. A timed-out request is never retried, on
 * the same upstream: it may have been processed (and billed) there, and neither upstream
 * documents its lookups as safe to repeat. Prembly's "02, retry later" is an answer, so it fails
 * over to the secondary upstream instead of hammering the first.
 */
export class UpstreamPolicies {
  private readonly breakers = new Map<UpstreamName, CircuitBreakerPolicy>();

  constructor(private readonly settings: UpstreamPolicySettings) {}

  breaker(name: UpstreamName): CircuitBreakerPolicy {
    let breaker = this.breakers.get(name);
    if (breaker === undefined) {
      breaker = circuitBreaker(
        handleWhen((error) => error instanceof UpstreamFailure && error.health),
        { halfOpenAfter: this.settings.breakerHalfOpenMs, breaker: new ConsecutiveBreaker(this.settings.breakerFailures) },
      );
      providerMetrics.breakerState.set({ provider: name }, BREAKER_STATE_VALUE.closed);
      breaker.onStateChange((state) => providerMetrics.breakerState.set({ provider: name }, BREAKER_STATE_VALUE[stateName(state)]));
      this.breakers.set(name, breaker);
    }
    return breaker;
  }

  /** One call through retry, breaker and timeout; failures come out as UpstreamFailure. */
  async run(upstream: UpstreamAdapter, scope: Scope, input: Readonly<Record<string, string>>, signal: AbortSignal): Promise<UpstreamAnswer> {
    const attemptTimeout = timeout(this.settings.timeoutMs[upstream.name], TimeoutStrategy.Aggressive);
    const retries = retry(handleWhen(isRetrySafe), { maxAttempts: this.settings.retryAttempts, backoff: new ConstantBackoff(this.settings.retryDelayMs) });
    const breaker = this.breaker(upstream.name);
    const attempt = async (attemptSignal: AbortSignal): Promise<UpstreamAnswer> => {
      const started = process.hrtime.bigint();
      let outcome = 'provider_error';
      try {
        const answer = await attemptTimeout.execute(({ signal: timed }) => upstream.call(scope, input, timed), attemptSignal);
        outcome = answer.outcome;
        return answer;
      } catch (error) {
        if (signal.aborted) {
          outcome = 'caller_aborted';
          throw new CallerAborted();
        }
        const failure =
          error instanceof UpstreamFailure
            ? error
            : error instanceof TaskCancelledError
              ? new UpstreamFailure('provider_timeout', false, true)
              : new UpstreamFailure('provider_error', false, true);
        outcome = failure.reasonCode;
        throw failure;
      } finally {
        const labels = { provider: upstream.name, scope, outcome };
        providerMetrics.duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
        providerMetrics.outcomes.inc(labels);
      }
    };
    try {
      return await retries.execute(({ signal: retrySignal }) => breaker.execute(({ signal: breakerSignal }) => attempt(breakerSignal), retrySignal), signal);
    } catch (error) {
      if (error instanceof BrokenCircuitError) {
        providerMetrics.outcomes.inc({ provider: upstream.name, scope, outcome: 'provider_circuit_open' });
        throw new UpstreamFailure('provider_circuit_open', false, false);
      }
      if (error instanceof UpstreamFailure) throw error;
      if (error instanceof CallerAborted || error instanceof TaskCancelledError || signal.aborted) throw new UpstreamFailure('provider_timeout', false, false);
      throw new UpstreamFailure('provider_error', false, false);
    }
  }
}

/**
 * The organization's upstream, and its secondary when one is configured: the secondary is asked
 * only when the primary failed (any failure: it could not say whether the record exists) and
 * only for scopes it serves, within what is left of the caller's deadline. Every failure in the
 * end is a `failed` outcome: 502, not charged.
 */
export class ResilientProvider extends VerificationProvider {
  readonly name: string;

  constructor(
    private readonly chain: readonly UpstreamAdapter[],
    private readonly policies: UpstreamPolicies,
  ) {
    super();
    if (chain.length === 0) throw new Error('invariant: a resilient provider needs at least one upstream');
    this.name = chain.map((upstream) => upstream.name).join('+');
  }

  override inputProblems(scope: Scope, input: Readonly<Record<string, string>>): FieldError[] {
    return this.chain[0].inputProblems(scope, input);
  }

  async verify(scope: Scope, input: Readonly<Record<string, string>>, options: ProviderCallOptions): Promise<ProviderOutcome> {
    let failure: UpstreamFailure = new UpstreamFailure('provider_scope_not_supported', false, false);
    for (const upstream of this.chain) {
      if (options.signal.aborted) break;
      if (!serves(upstream.name, scope) || upstream.inputProblems(scope, input).length > 0) continue;
      try {
        return await this.policies.run(upstream, scope, input, options.signal);
      } catch (error) {
        failure = error instanceof UpstreamFailure ? error : new UpstreamFailure('provider_error', false, false);
      }
    }
    return { outcome: 'failed', reasonCode: failure.reasonCode, retryable: failure.health || failure.reasonCode === 'provider_circuit_open' };
  }
}
