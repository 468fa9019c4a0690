import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ApiError, backoffDelayMs, createLedgerClient, NetworkError, type LedgerClientOptions } from '../../clients/typescript/src/index.js';
import { resilientFetch } from '../../clients/typescript/src/transport.js';

/**
 * The client's timeout and retry policy against a real local HTTP server whose answers each test
 * scripts: reads (GET) are retried on 429 (after its Retry-After), 503 and network errors, with
 * exponential backoff and jitter; a check (POST), whose repeat would be charged, never is.
 */

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };
const wallet = { environment: 'test', balanceKobo: 5_000, reservedKobo: 0, availableKobo: 5_000 };
const ok = json(200, { status: true, data: wallet });
const unavailable = json(503, { status: false, error: { code: 'service_unavailable', message: 'The event store is unavailable' } });
const limited = (seconds: number) =>
  json(
    429,
    { status: false, error: { code: 'rate_limited', message: 'Too many requests', details: { limitPerMinute: 1, retryAfterSeconds: seconds } } },
    { 'retry-after': String(seconds) },
  );
/** Closes the connection without an answer: the client sees a network error. */
const hangUp: Answer = (request) => request.socket.destroy();
const silent: Answer = () => undefined;
/** Sends the status and the first bytes of the body, then nothing more. */
const stalls: Answer = (_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write('{"status":true,');
};

describe('The client retry policy', () => {
  let server: Server;
  let baseUrl: string;
  let script: Answer[] = [];
  let seen: { method: string; path: string; at: number }[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({ method: request.method!, path: request.url!, at: Date.now() });
      request.resume();
      (script.shift() ?? unavailable)(request, response);
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    script = [];
    seen = [];
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  });

  const client = (options: Partial<LedgerClientOptions> = {}) =>
    createLedgerClient({ baseUrl, apiKey: 'service_test_x', retry: { retries: 3, baseDelayMs: 20, maxDelayMs: 200 }, ...options });

  describe('When a read meets a 503 and then an answer', () => {
    it('retries after a backoff and returns the answer', async () => {
      script = [unavailable, ok];
      expect(await client().wallet()).toEqual(wallet);
      expect(seen.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/wallet', 'GET /v1/wallet']);
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(10);
    });
  });

  describe('When a read meets a 429 with Retry-After', () => {
    it('waits the Retry-After before the next attempt, not the shorter backoff', async () => {
      script = [limited(1), ok];
      expect(await client().wallet()).toEqual(wallet);
      expect(seen).toHaveLength(2);
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
    });

    it('throws the 429 at once when the Retry-After is longer than it is allowed to wait', async () => {
      script = [limited(120), ok];
      const refused = await client({ retry: { retries: 3, baseDelayMs: 20, maxDelayMs: 200, maxRetryAfterMs: 5_000 } })
        .wallet()
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).status).toBe(429);
      expect(seen).toHaveLength(1);
    });
  });

  describe('When a read meets a network error', () => {
    it('retries it', async () => {
      script = [hangUp, ok];
      expect(await client().wallet()).toEqual(wallet);
      expect(seen).toHaveLength(2);
    });
  });

  describe('When the fetch given to the client throws an error of its own', () => {
    it('passes it on as it is, without retrying', async () => {
      let calls = 0;
      const refusing = async () => {
        calls += 1;
        throw new RangeError('refused by the caller');
      };
      const refused = await client({ fetch: refusing })
        .wallet()
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(RangeError);
      expect(calls).toBe(1);
    });
  });

  describe('When every attempt of a read fails', () => {
    it('stops after the last retry, with spacing that grows, and throws the last answer', async () => {
      script = [unavailable, unavailable, unavailable, unavailable, ok];
      const refused = await client({ retry: { retries: 3, baseDelayMs: 40, maxDelayMs: 1_000 } })
        .wallet()
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe('service_unavailable');
      expect(seen).toHaveLength(4);
      // Equal jitter: attempt n waits between half and all of 40·2^n ms.
      const gaps = seen.slice(1).map((request, index) => request.at - seen[index]!.at);
      expect(gaps[0]).toBeGreaterThanOrEqual(15);
      expect(gaps[2]).toBeGreaterThanOrEqual(75);
    });
  });

  describe('When a check (POST) fails in a way a read would retry', () => {
    it.each([
      ['a 503', unavailable],
      ['a 429', limited(1)],
    ])('sends it once and throws %s', async (_name, answer) => {
      script = [answer, ok];
      const refused = await client()
        .verify('nin', { nin: '21440414976' })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect(seen.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /v1/nin']);
    });

    it('sends it once and throws a network error', async () => {
      script = [hangUp, ok];
      const refused = await client()
        .verify('nin', { nin: '21440414976' })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(NetworkError);
      expect((refused as NetworkError).code).toBe('network_error');
      expect(seen).toHaveLength(1);
    });
  });

  describe('With timeoutMs', () => {
    it('abandons a check that takes longer, once, with a timeout error', async () => {
      script = [silent];
      const started = Date.now();
      const refused = await client({ timeoutMs: 200 })
        .verify('nin', { nin: '21440414976' })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(NetworkError);
      expect((refused as NetworkError).code).toBe('timeout');
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(seen).toHaveLength(1);
    });

    it('counts the body in the time: a read whose body stops arriving is retried, a check throws a timeout', async () => {
      script = [stalls, ok];
      expect(await client({ timeoutMs: 200 }).wallet()).toEqual(wallet);
      expect(seen).toHaveLength(2);
      script = [stalls, ok];
      const refused = await client({ timeoutMs: 200 })
        .verify('nin', { nin: '21440414976' })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(NetworkError);
      expect((refused as NetworkError).code).toBe('timeout');
      expect(seen).toHaveLength(3);
    });

    it('keeps to the time while the garbage collector runs as the body stalls', async () => {
      // fetch links its request to the signal it was given only weakly once the headers are in:
      // a collection then lost the timeout, and the read waited for ever (a CI run under load).
      setFlagsFromString('--expose-gc');
      const collect = runInNewContext('gc') as () => void;
      const collecting = setInterval(collect, 5);
      try {
        script = [stalls, stalls];
        const started = Date.now();
        const refused = await client({ timeoutMs: 200, retry: { retries: 1, baseDelayMs: 20, maxDelayMs: 20 } })
          .wallet()
          .catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(NetworkError);
        expect((refused as NetworkError).code).toBe('timeout');
        expect(Date.now() - started).toBeLessThan(5_000);
        expect(seen).toHaveLength(2);
      } finally {
        clearInterval(collecting);
      }
    }, 15_000);

    it("ends at once on the caller's own abort while the body stalls: no retry, the caller's reason as it is", async () => {
      script = [stalls, ok];
      const caller = new AbortController();
      const send = resilientFetch((request, init) => fetch(request, init), { timeoutMs: 5_000, retry: { retries: 3, baseDelayMs: 20, maxDelayMs: 20, maxRetryAfterMs: 1_000 } });
      const started = Date.now();
      setTimeout(() => caller.abort(new Error('the caller gave up')), 100);
      const refused = await send(new Request(`${baseUrl}/v1/wallet`, { signal: caller.signal })).catch((error: unknown) => error);
      expect((refused as Error).message).toBe('the caller gave up');
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(seen).toHaveLength(1);
    });

    it('retries a read that timed out', async () => {
      script = [silent, ok];
      expect(await client({ timeoutMs: 200 }).wallet()).toEqual(wallet);
      expect(seen).toHaveLength(2);
    });
  });
});

describe('The backoff', () => {
  const policy = { retries: 5, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 60_000 };
  it('doubles per attempt up to the cap, jittered between half and all of it', () => {
    expect([0, 1, 2, 3, 4].map((attempt) => backoffDelayMs(attempt, policy, () => 1))).toEqual([100, 200, 400, 800, 1_000]);
    expect([0, 1, 2, 3, 4].map((attempt) => backoffDelayMs(attempt, policy, () => 0))).toEqual([50, 100, 200, 400, 500]);
  });
});
