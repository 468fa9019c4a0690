/**
 * An open-loop load at a steady rate: request i is sent at start + i / rate, whether or not earlier
 * ones have answered, over at most `connections` keep-alive connections (a request finding them all
 * busy waits in the agent's queue, and that wait counts in its latency). Latency is measured from
 * the moment the request was due, so a stalled service cannot hide its backlog (no coordinated
 * omission).
 *
 * Why not autocannon's `overallRate`: it gives each connection a quota per second and lets it send
 * the quota back to back when the second starts, so "600/s" arrives as a burst of 600 requests
 * every second, and the latency measured is that of draining the burst, not of a 600/s stream.
 */
import http from 'node:http';

export interface PacedLoadOptions {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly ratePerSecond: number;
  readonly seconds: number;
  readonly connections: number;
}

export interface PacedLoadResult {
  /** Answers per second over the run (until the last answer). */
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly total: number;
}

export async function pacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const url = new URL(options.url);
  const total = Math.round(options.ratePerSecond * options.seconds);
  const intervalMs = 1000 / options.ratePerSecond;
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let answered = 0;
  const startedAt = performance.now();
  let lastAnswerAt = startedAt;

  const send = (dueAt: number) =>
    new Promise<void>((resolveSend) => {
      const done = (ok: boolean, status?: number) => {
        const now = performance.now();
        latencies.push(now - dueAt);
        if (!ok) errors += 1;
        else if (status === undefined || status < 200 || status > 299) non2xx += 1;
        answered += 1;
        lastAnswerAt = now;
        resolveSend();
      };
      const request = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: options.method,
          headers: { ...options.headers, ...(options.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.body) }) },
          timeout: 30_000,
        },
        (response) => {
          response.resume();
          response.on('end', () => done(true, response.statusCode));
          response.on('error', () => done(false));
        },
      );
      request.on('timeout', () => request.destroy(new Error('timeout')));
      request.on('error', () => done(false));
      request.end(options.body);
    });

  const inFlight: Promise<void>[] = [];
  await new Promise<void>((resolveSchedule) => {
    let sent = 0;
    const tick = () => {
      const now = performance.now();
      while (sent < total && startedAt + sent * intervalMs <= now) {
        inFlight.push(send(startedAt + sent * intervalMs));
        sent += 1;
      }
      if (sent >= total) return resolveSchedule();
      setTimeout(tick, Math.max(0, startedAt + sent * intervalMs - performance.now()));
    };
    tick();
  });
  await Promise.all(inFlight);
  agent.destroy();

  latencies.sort((a, b) => a - b);
  const at = (quantile: number) => latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))] ?? NaN;
  return {
    requestsPerSecond: answered / ((lastAnswerAt - startedAt) / 1000),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: latencies.at(-1) ?? NaN,
    non2xx,
    errors,
    total: answered,
  };
}
