import client from 'prom-client';

/**
 * Per-upstream metrics in prom-client's default registry (served at /metrics where that route is
 * exposed). Labels are bounded sets: provider and scope names, outcome (`found`, `not_found` or a
 * failure reason code). Never an input, a name or a credential.
 */
function histogram(): client.Histogram<'provider' | 'scope' | 'outcome'> {
  const name = 'ivl_provider_request_duration_seconds';
  const existing = client.register.getSingleMetric(name);
  if (existing !== undefined) return existing as client.Histogram<'provider' | 'scope' | 'outcome'>;
  return new client.Histogram({
    name,
    help: 'Duration of one upstream provider request (each attempt), by provider, scope and outcome',
    labelNames: ['provider', 'scope', 'outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
}

function counter(): client.Counter<'provider' | 'scope' | 'outcome'> {
  const name = 'ivl_provider_outcomes_total';
  const existing = client.register.getSingleMetric(name);
  if (existing !== undefined) return existing as client.Counter<'provider' | 'scope' | 'outcome'>;
  return new client.Counter({ name, help: 'Upstream provider requests by provider, scope and outcome', labelNames: ['provider', 'scope', 'outcome'] });
}

function gauge(): client.Gauge<'provider'> {
  const name = 'ivl_provider_breaker_state';
  const existing = client.register.getSingleMetric(name);
  if (existing !== undefined) return existing as client.Gauge<'provider'>;
  return new client.Gauge({ name, help: 'Circuit breaker state per upstream provider: 0 closed, 1 half-open, 2 open', labelNames: ['provider'] });
}

export const providerMetrics = {
  duration: histogram(),
  outcomes: counter(),
  breakerState: gauge(),
};

export const BREAKER_STATE_VALUE = { closed: 0, half_open: 1, open: 2 } as const;
