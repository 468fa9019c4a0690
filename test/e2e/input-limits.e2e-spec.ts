import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { BODY_LIMIT_BYTES } from '../../src/app.factory.js';
import { MAX_HEADER_BYTES, MAX_QUERY_PARAMETERS, MAX_QUERY_VALUE_LENGTH, MAX_URL_LENGTH } from '../../src/common/input-limits.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { describeOnPostgresProjectOnly } from '../support/store-independent.js';

/** Raw HTTP over a socket, for what fetch refuses to send (oversized headers, broken request lines). */
function rawRequest(baseUrl: string, text: string): Promise<{ status: number; body: unknown }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolveAnswer, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(text));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = received.split('\r\n\r\n');
      resolveAnswer({ status: Number(head.split(' ')[1]), body: JSON.parse(rest.join('\r\n\r\n')) });
    });
  });
}

/**
 * Sends `text` and leaves the connection open, as a slow or stalled client does; resolves with the
 * answer and how long it took, or with status 0 when none came within `waitMs`.
 */
function stalledRequest(baseUrl: string, text: string, waitMs: number): Promise<{ status: number; body: unknown; elapsedMs: number }> {
  const { hostname, port } = new URL(baseUrl);
  const startedMs = Date.now();
  return new Promise((resolveAnswer) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(text));
    let received = '';
    const giveUp = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(giveUp);
      const [head, ...rest] = received.split('\r\n\r\n');
      const elapsedMs = Date.now() - startedMs;
      if (received === '') resolveAnswer({ status: 0, body: undefined, elapsedMs });
      else resolveAnswer({ status: Number(head.split(' ')[1]), body: JSON.parse(rest.join('\r\n\r\n')), elapsedMs });
    });
  });
}

function expectError(response: { status: number; body: unknown }, status: number, code: string): void {
  expect({ status: response.status, body: response.body }).toMatchObject({ status, body: { status: false, error: { code, details: expect.any(Object) } } });
}

describeOnPostgresProjectOnly('Limits on input', 'the HTTP surface does not depend on the event store', () => {
  let app: TestApp;
  let headers: Record<string, string>;

  beforeAll(async () => {
    app = await startTestApp();
    const organization = await createOrganization(app);
    headers = { 'x-service-key': (await issueKey(app, organization.id)).key };
  });
  afterAll(async () => app?.close());

  it('refuses bodies that are not JSON, or too large, in the envelope, and writes nothing', async () => {
    const before = await app.eventStore.headPosition();
    const post = (body: string, contentType?: string): Promise<TestResponse> =>
      app.request('POST', '/v1/nin', { headers: contentType === undefined ? headers : { ...headers, 'content-type': contentType }, rawBody: body });
    expectError(await post('{"nin": "1234', 'application/json'), 400, 'bad_request');
    expectError(await post('', 'application/json'), 400, 'bad_request');
    expectError(await post('{"__proto__": {"admin": true}}', 'application/json'), 400, 'bad_request');
    expectError(await post('nin=12345678905', 'text/plain'), 415, 'unsupported_media_type');
    expectError(await post('nin=12345678905', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type');
    expectError(await post('[1, 2]', 'application/json'), 422, 'validation_failed');
    expectError(await post(JSON.stringify({ nin: '1'.repeat(BODY_LIMIT_BYTES) }), 'application/json'), 413, 'payload_too_large');
    expect(await app.eventStore.headPosition()).toBe(before);
  });

  it('refuses headers past the limit, and unparsable HTTP, in the envelope although Node answers before any route', async () => {
    const big = await rawRequest(app.baseUrl, `GET /v1/wallet HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`);
    expectError(big, 431, 'headers_too_large');
    expectError(await rawRequest(app.baseUrl, 'NOT HTTP AT ALL\r\n\r\n'), 400, 'bad_request');
  });

  it('refuses long URLs, long path parameters, broken percent-encoding and oversized query values', async () => {
    expectError(await app.request('GET', `/v1/verifications?scope=${'a'.repeat(MAX_URL_LENGTH)}`, { headers }), 414, 'uri_too_long');
    expectError(await app.request('GET', `/v1/verifications/${'v'.repeat(300)}`, { headers }), 414, 'uri_too_long');
    expectError(await rawRequest(app.baseUrl, `GET /v1/verifications/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 400, 'bad_request');
    const longValue = await app.request('GET', `/v1/verifications?status=${'x'.repeat(MAX_QUERY_VALUE_LENGTH + 1)}`, { headers });
    expectError(longValue, 422, 'validation_failed');
    expect(longValue.body.error.details.fields).toEqual([{ field: 'status', message: `must be at most ${MAX_QUERY_VALUE_LENGTH} characters` }]);
    const many = Array.from({ length: MAX_QUERY_PARAMETERS + 1 }, (_, i) => `p${i}=1`).join('&');
    expectError(await app.request('GET', `/v1/verifications?${many}`, { headers }), 422, 'validation_failed');
    // Within the limits, the same route answers normally.
    expect((await app.request('GET', '/v1/verifications?page=1&pageSize=5&status=found', { headers })).status).toBe(200);
  });

  describe('A client that sends its request too slowly', () => {
    const HEADERS_TIMEOUT_MS = 1_000;
    const REQUEST_TIMEOUT_MS = 1_500;
    let strict: TestApp;

    beforeAll(async () => {
      strict = await startTestApp({ database: app.database, env: { HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS), HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) } });
    });
    afterAll(async () => strict?.close());

    it('gets 408 once its body, shorter than its declared length, has not arrived within the request limit', async () => {
      const answer = await stalledRequest(
        strict.baseUrl,
        `POST /v1/nin HTTP/1.1\r\nHost: x\r\nX-Service-Key: ${headers['x-service-key']}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"nin": "1234`,
        REQUEST_TIMEOUT_MS + 4_000,
      );
      expectError(answer, 408, 'request_timeout');
      expect(answer.elapsedMs).toBeLessThan(REQUEST_TIMEOUT_MS + 2_000);
    });

    it('is closed, or gets 408, within the headers limit when it connects and sends nothing at all', async () => {
      const answer = await stalledRequest(strict.baseUrl, '', HEADERS_TIMEOUT_MS + 4_000);
      // Nothing sent: the server may close at once or answer 408 first; it must not wait for the client to give up.
      if (answer.status !== 0) expectError(answer, 408, 'request_timeout');
      expect(answer.elapsedMs).toBeLessThan(HEADERS_TIMEOUT_MS + 2_000);
    });

    it('is closed within the headers limit when it goes quiet after a first request on a kept-alive connection', async () => {
      const answer = await stalledRequest(strict.baseUrl, 'GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n', HEADERS_TIMEOUT_MS + 4_000);
      expect(answer.status).toBe(200);
      expect(answer.elapsedMs).toBeLessThan(HEADERS_TIMEOUT_MS + 2_000);
    });

    it('gets 408 once its headers have not arrived within the headers limit', async () => {
      const answer = await stalledRequest(strict.baseUrl, 'GET /v1/wallet HTTP/1.1\r\nHost: x\r\nX-Service-', HEADERS_TIMEOUT_MS + 4_000);
      expectError(answer, 408, 'request_timeout');
      expect(answer.elapsedMs).toBeLessThan(HEADERS_TIMEOUT_MS + 2_000);
    });
  });
});
