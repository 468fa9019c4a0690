import client from 'prom-client';

/** Calls to the payment rails, by rail, operation (`initialize`, `verify`) and outcome (`ok`, `not_found` or a failure code): bounded labels, never a reference or an amount. */
function counter(): client.Counter<'rail' | 'operation' | 'outcome'> {
  const name = 'ivl_payment_requests_total';
  const existing = client.register.getSingleMetric(name);
  if (existing !== undefined) return existing as client.Counter<'rail' | 'operation' | 'outcome'>;
  return new client.Counter({ name, help: 'Payment rail requests by rail, operation and outcome', labelNames: ['rail', 'operation', 'outcome'] });
}

function histogram(): client.Histogram<'rail' | 'operation'> {
  const name = 'ivl_payment_request_duration_seconds';
  const existing = client.register.getSingleMetric(name);
  if (existing !== undefined) return existing as client.Histogram<'rail' | 'operation'>;
  return new client.Histogram({ name, help: 'Duration of one payment rail request', labelNames: ['rail', 'operation'], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] });
}

/** Webhooks received, by rail and outcome (`credited`, `refused_signature`, `unknown_reference`, …). */
function webhooks(): client.Counter<'rail' | 'outcome'> {
  const name = 'ivl_payment_webhooks_total';
  const existing = client.register.getSingleMetric(name);
  if (existing !== undefined) return existing as client.Counter<'rail' | 'outcome'>;
  return new client.Counter({ name, help: 'Payment webhooks received by rail and outcome', labelNames: ['rail', 'outcome'] });
}

export const paymentMetrics = { requests: counter(), duration: histogram(), webhooks: webhooks() };
