import client from 'prom-client';

/**
 * The service's metrics, on prom-client's default registry so that metrics defined anywhere else
 * in the process (providers, workers) are served by the same /metrics. Every label value comes
 * from a closed set (route templates, scopes, environments, outcomes, status codes): never from a
 * request's input, so no personal data can reach a label and cardinality stays bounded.
 */

const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequestsTotal = new client.Counter({
  name: 'ivl_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
  labelNames: ['method', 'route', 'status'] as const,
});

export const httpRequestDurationSeconds = new client.Histogram({
  name: 'ivl_http_request_duration_seconds',
  help: 'Time from the request arriving to the response sent, by method, route template and status code',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS_SECONDS,
});

export const consoleSignUpFailuresTotal = new client.Counter({
  name: 'ivl_console_signup_failures_total',
  help: "Attempts to carry out a console sign-up that failed, by the error's code (each sign-up is tried again, up to every 15 minutes)",
  labelNames: ['code'] as const,
});

export const verificationsTotal = new client.Counter({
  name: 'ivl_verifications_total',
  help: 'Checks run, by scope, environment and outcome (found, not_found, failed, rejected: insufficient balance)',
  labelNames: ['scope', 'environment', 'outcome'] as const,
});

export const chargedKoboTotal = new client.Counter({
  name: 'ivl_charged_kobo_total',
  help: 'Kobo debited from wallets for checks, by scope and environment',
  labelNames: ['scope', 'environment'] as const,
});

export const verificationProviderDurationSeconds = new client.Histogram({
  name: 'ivl_verification_provider_duration_seconds',
  help: 'Time a check waited for its provider (timeouts included), by scope and outcome',
  labelNames: ['scope', 'outcome'] as const,
  buckets: LATENCY_BUCKETS_SECONDS,
});

export const eventStoreAppendDurationSeconds = new client.Histogram({
  name: 'ivl_event_store_append_duration_seconds',
  help: 'Event store append latency, by store and outcome (ok, conflict, unavailable, error)',
  labelNames: ['store', 'outcome'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
});

/** From half a millisecond (a batch with nothing to wait for) to seconds (a wallet saturated). */
const WALLET_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * One wallet's commands are decided and appended one batch at a time on each instance (the wallet
 * ledger's queue): under a steady load a wallet can be busy all the time, and then each command
 * waits for the batch in flight before its own starts. These three show it without a label per
 * wallet: the wait, the batch's own time, and how many commands shared it.
 */
export const walletCommandWaitSeconds = new client.Histogram({
  name: 'ivl_wallet_command_wait_seconds',
  help: "Time a wallet command (reserve, capture, release, fund) waited in its wallet's queue on this instance before its batch started",
  buckets: WALLET_BUCKETS_SECONDS,
});

export const walletBatchDurationSeconds = new client.Histogram({
  name: 'ivl_wallet_batch_duration_seconds',
  help: 'Time a wallet batch took from its start to its answer (fold, decision, append and commit, retries included), by outcome (appended, unchanged, conflict, failed)',
  labelNames: ['outcome'] as const,
  buckets: WALLET_BUCKETS_SECONDS,
});

export const walletBatchCommands = new client.Histogram({
  name: 'ivl_wallet_batch_commands',
  help: 'Commands decided together in one wallet batch',
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
});

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A method outside the usual ones is counted as `other`, so that a client cannot mint label values. */
export function methodLabel(method: string): string {
  return KNOWN_METHODS.has(method) ? method : 'other';
}

let defaultMetricsStarted = false;

/** Process metrics (CPU, memory, event loop lag, GC, handles), prefixed `ivl_`; once per process. */
export function startDefaultMetrics(): void {
  if (defaultMetricsStarted) return;
  defaultMetricsStarted = true;
  client.collectDefaultMetrics({ prefix: 'ivl_' });
}

export const metricsRegistry = client.register;
