import type { FastifyInstance } from 'fastify';
import { httpRequestDurationSeconds, httpRequestsTotal, methodLabel, metricsRegistry, startDefaultMetrics } from './metrics.js';

export const METRICS_PATH = '/metrics';

/**
 * Counts and times every response by its route template (`/v1/:scope`,
 * `/v1/verifications/:reference`), never by the raw URL, which holds references and whatever a
 * client puts in it. Requests that match no route are counted as `unmatched`.
 */
export function instrumentHttp(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const labels = { method: methodLabel(request.method), route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    httpRequestsTotal.inc(labels);
    httpRequestDurationSeconds.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}

/** Prometheus text format at /metrics: outside /v1, without a key (switch it off with METRICS_ENABLED=false, or keep it off the public network). */
export function serveMetrics(fastify: FastifyInstance): void {
  startDefaultMetrics();
  fastify.get(METRICS_PATH, async (_request, reply) => {
    const body = await metricsRegistry.metrics();
    return reply.header('content-type', metricsRegistry.contentType).header('cache-control', 'no-store').send(body);
  });
}
