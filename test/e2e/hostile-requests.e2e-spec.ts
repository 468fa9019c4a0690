import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { MAX_HEADER_BYTES, MAX_QUERY_PARAMETERS, MAX_URL_LENGTH } from '../../src/common/input-limits.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createOrganization, issueKey } from '../support/fixtures.js';
import { describeOnPostgresProjectOnly } from '../support/store-independent.js';

/**
 * What an attacker tries against the HTTP surface, each answered in the envelope and never with a
 * 500: forged portrait links, text PostgreSQL cannot store, ids it cannot look up, bodies nested
 * to overflow the stack, a forged Host header, and the answers produced before any route runs.
 */

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}

/** Raw HTTP over a socket, for what fetch refuses to send (oversized headers, broken percent-encoding). */
function rawRequest(baseUrl: string, text: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolveAnswer, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(text));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = received.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body: unknown = rest.join('\r\n\r\n');
      try {
        body = JSON.parse(body as string);
      } catch {
        // Left as text for the assertion to show.
      }
      resolveAnswer({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

/** node:http, which (unlike fetch) sends the Host header it is given. */
function requestWithHost(baseUrl: string, method: string, path: string, host: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(baseUrl);
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolveAnswer, reject) => {
    const outgoing = httpRequest(
      { host: hostname, port: Number(port), method, path, headers: { ...headers, host, ...(text === undefined ? {} : { 'content-type': 'application/json' }) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolveAnswer({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(text);
  });
}

function expectEnvelope(answer: { status: number; body: unknown }, statuses: readonly number[], what: string): void {
  expect({ what, status: statuses.includes(answer.status) ? 'expected' : answer.status, body: answer.body }).toEqual({
    what,
    status: 'expected',
    body: { status: false, error: expect.objectContaining({ code: expect.any(String), message: expect.any(String), details: expect.any(Object) }) },
  });
}

/** The API's security headers (src/common/security-headers.ts), as every answer must carry them. */
function expectSecurityHeaders(headers: Record<string, string | null>, what: string): void {
  expect({ what, csp: headers['content-security-policy'], nosniff: headers['x-content-type-options'], frame: headers['x-frame-options'] }).toEqual({
    what,
    csp: expect.stringContaining("default-src 'none'"),
    nosniff: 'nosniff',
    frame: 'DENY',
  });
}

const headersOf = (headers: Headers): Record<string, string | null> => Object.fromEntries([...headers.entries()]);

/** 10,000 levels of arrays and of objects: far past any stack a recursive walk could take. */
const DEEP_ARRAY = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
const DEEP_OBJECT = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;

interface LogLine {
  readonly level: string;
  readonly msg?: string;
  readonly [field: string]: unknown;
}

describeOnPostgresProjectOnly('Hostile requests', 'the HTTP surface does not depend on the event store', () => {
  let app: TestApp;
  const captured: string[] = [];
  let organizationId: string;
  let key: { id: string; key: string };
  let portraitUrl: URL;

  const lines = (): LogLine[] =>
    captured
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);
  const keyed = (method: string, path: string, body?: unknown) => app.request(method, path, { body, headers: { 'x-service-key': key.key } });

  /**
   * Every route, with its path parameters filled in; `{param}` is replaced by `values[param]`.
   * Routes of the admin API take the bearer token, /v1 the key.
   */
  const ROUTES: readonly { method: string; path: string; auth: 'admin' | 'key' | 'none' }[] = [
    { method: 'POST', path: '/admin/v1/organizations', auth: 'admin' },
    { method: 'GET', path: '/admin/v1/organizations', auth: 'admin' },
    { method: 'GET', path: '/admin/v1/organizations/{id}', auth: 'admin' },
    { method: 'POST', path: '/admin/v1/organizations/{id}/approve', auth: 'admin' },
    { method: 'POST', path: '/admin/v1/organizations/{id}/suspend', auth: 'admin' },
    { method: 'POST', path: '/admin/v1/organizations/{id}/reinstate', auth: 'admin' },
    { method: 'PUT', path: '/admin/v1/organizations/{id}/scopes', auth: 'admin' },
    { method: 'PUT', path: '/admin/v1/organizations/{id}/prices', auth: 'admin' },
    { method: 'PUT', path: '/admin/v1/organizations/{id}/provider', auth: 'admin' },
    { method: 'PUT', path: '/admin/v1/organizations/{id}/rate-limit', auth: 'admin' },
    { method: 'PUT', path: '/admin/v1/organizations/{id}/retention', auth: 'admin' },
    { method: 'DELETE', path: '/admin/v1/organizations/{id}/personal-data?confirm={id}', auth: 'admin' },
    { method: 'POST', path: '/admin/v1/organizations/{id}/keys', auth: 'admin' },
    { method: 'GET', path: '/admin/v1/organizations/{id}/keys', auth: 'admin' },
    { method: 'DELETE', path: '/admin/v1/keys/{keyId}', auth: 'admin' },
    { method: 'POST', path: '/admin/v1/organizations/{id}/wallets/{environment}/fundings', auth: 'admin' },
    { method: 'GET', path: '/admin/v1/organizations/{id}/wallets/{environment}', auth: 'admin' },
    { method: 'GET', path: '/admin/v1/organizations/{id}/wallets/{environment}/history', auth: 'admin' },
    { method: 'GET', path: '/admin/v1/projections', auth: 'admin' },
    { method: 'POST', path: '/v1/{scope}', auth: 'key' },
    { method: 'POST', path: '/v1', auth: 'key' },
    { method: 'POST', path: '/v1/', auth: 'key' },
    { method: 'GET', path: '/v1/verifications', auth: 'key' },
    { method: 'GET', path: '/v1/verifications/{reference}', auth: 'key' },
    { method: 'POST', path: '/v1/verifications/{reference}/erasure', auth: 'key' },
    { method: 'POST', path: '/v1/data-subjects/search', auth: 'key' },
    { method: 'POST', path: '/v1/data-subjects/erasure', auth: 'key' },
    { method: 'GET', path: '/v1/wallet', auth: 'key' },
    { method: 'GET', path: '/v1/wallet/transactions', auth: 'key' },
    { method: 'GET', path: '/v1/portraits/{id}', auth: 'none' },
    { method: 'GET', path: '/v1/health', auth: 'none' },
    { method: 'GET', path: '/health/ready', auth: 'none' },
  ];

  const fill = (path: string, values: Record<string, string>) => path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? 'x');
  const send = (route: (typeof ROUTES)[number], path: string, serviceKey: string, rawBody?: string) =>
    app.request(route.method, path, {
      rawBody,
      headers: {
        ...(rawBody === undefined ? {} : { 'content-type': 'application/json' }),
        ...(route.auth === 'admin' ? { authorization: `Bearer ${app.adminToken}` } : route.auth === 'key' ? { 'x-service-key': serviceKey } : {}),
      },
    });
  /** An organization of its own, with a key and a check, for the tests that call every route (some of which suspend, revoke or erase). */
  const victim = async (): Promise<{ values: Record<string, string>; key: string }> => {
    const id = (await createOrganization(app, { approved: true })).id;
    const issued = await issueKey(app, id);
    const check = await app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers: { 'x-service-key': issued.key } });
    expect(check.status).toBe(201);
    return { values: { id, keyId: issued.id, environment: 'test', scope: 'nin', reference: check.body.data.reference }, key: issued.key };
  };

  beforeAll(async () => {
    app = await startTestApp({ env: { LOG_LEVEL: 'info' }, logDestination: { write: (line: string) => void captured.push(line) } });
    organizationId = (await createOrganization(app, { approved: true })).id;
    key = await issueKey(app, organizationId);
    const check = await keyed('POST', '/v1/nin', { nin: '12345678905' });
    expect(check.status).toBe(201);
    portraitUrl = new URL(check.body.data.result.portraitUrl);
  });
  afterAll(async () => app?.close());

  describe('Portrait links', () => {
    const portrait = (id: string, expires: string, signature: string) => fetch(`${app.baseUrl}/v1/portraits/${id}?expires=${expires}&signature=${signature}`);

    it('a valid-looking id with a bad signature is 403 in the envelope, read nothing and logged no error, whatever the id names', async () => {
      const realId = portraitUrl.pathname.split('/').pop() ?? '';
      const [, segment] = /^prt_([0-9a-f]{16})_/.exec(realId) ?? [];
      expect(segment).toBeDefined();
      const expires = portraitUrl.searchParams.get('expires') ?? '';
      const forged = 'A'.repeat(43);
      const before = lines().length;
      // The real portrait; a record inside its real segment that is not a record (it once answered
      // 500 with a stack trace); one with the largest length an id can claim (it once allocated 16 MiB);
      // a segment that does not exist.
      for (const id of [realId, `prt_${segment}_1_64`, `prt_${segment}_0_ffffff`, `prt_${'0'.repeat(16)}_0_64`]) {
        const response = await portrait(id, expires, forged);
        expect({ id, status: response.status, body: await response.json() }).toEqual({
          id,
          status: 403,
          body: { status: false, error: expect.objectContaining({ code: 'portrait_link_invalid' }) },
        });
      }
      const errors = lines()
        .slice(before)
        .filter((line) => line.level === 'error' || JSON.stringify(line).includes('    at '));
      expect(errors).toEqual([]);
      // The genuine link still serves the image.
      expect((await fetch(portraitUrl)).status).toBe(200);
    });
  });

  describe('Text PostgreSQL cannot store, and ids it cannot look up', () => {
    const BAD_TEXT = { nul: 'a\u0000b', 'lone surrogate': 'a\ud800b', 'lone low surrogate': '\udc00' };

    it.each(Object.entries(BAD_TEXT))('a %s in any string of an admin body is 422 naming the field, and writes nothing', async (_, bad) => {
      const before = await app.eventStore.headPosition();
      const bodies: [string, string, unknown, string][] = [
        ['POST', '/admin/v1/organizations', { name: bad, email: 'someone@example.com' }, 'name'],
        ['POST', `/admin/v1/organizations/${organizationId}/suspend`, { reason: bad }, 'reason'],
        ['POST', `/admin/v1/organizations/${organizationId}/keys`, { environment: 'test', name: bad }, 'name'],
        ['PUT', `/admin/v1/organizations/${organizationId}/scopes`, { scopes: ['nin', bad] }, 'scopes[1]'],
        ['PUT', `/admin/v1/organizations/${organizationId}/provider`, { environment: 'live', provider: 'dojah', credentials: { appId: bad, secretKey: 'x' } }, 'credentials.appId'],
        ['POST', `/admin/v1/organizations/${organizationId}/wallets/test/fundings`, { amountKobo: 1, reference: bad }, 'reference'],
        ['POST', '/admin/v1/organizations', { name: 'Fine', email: 'someone@example.com', [bad]: 1 }, 'body'],
      ];
      const requestIds: string[] = [];
      for (const [method, path, body, field] of bodies) {
        // JSON.stringify writes a lone surrogate as a \ud800 escape and NUL as \u0000: the parser turns both back.
        const response = await app.request(method, path, {
          rawBody: JSON.stringify(body),
          headers: { authorization: `Bearer ${app.adminToken}`, 'content-type': 'application/json' },
        });
        // The server's own id, the correlation id of anything the request would write.
        requestIds.push(String(response.headers.get('x-request-id')));
        expectEnvelope(response, [422], `${method} ${path}`);
        expect(response.body.error.code).toBe('validation_failed');
        expect(response.body.error.details.fields.map((entry: { field: string }) => entry.field)).toEqual([field]);
      }
      // Nothing these requests caused (their request id is the correlation id of any event they write); the service's own sweeps may write meanwhile.
      const since = await app.eventStore.readAll({ fromPosition: before, maxCount: 10_000 });
      expect(since.filter((event) => requestIds.includes(String(event.metadata.correlationId)))).toEqual([]);
      expect((await app.admin('GET', `/admin/v1/organizations/${organizationId}`)).body.data.status).toBe('approved');
    });

    it('a NUL in a path parameter or a query value of any route is 404 or 422, as are other ids that name nothing', async () => {
      const { values, key: victimKey } = await victim();
      const hostileIds = ['%00', 'org_%00', `${organizationId}%00`, '%20', 'org_%F0%9F%98%80', '..%2F..%2Fetc', 'x'.repeat(190)];
      for (const route of ROUTES) {
        const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
        for (const name of new Set(names)) {
          for (const hostile of hostileIds) {
            const path = fill(route.path, { ...values, [name]: hostile });
            const response = await send(route, path, victimKey, route.method === 'GET' ? undefined : '{}');
            // A portrait link that is not one is refused as such (403), or its NUL before (422).
            expectEnvelope(response, route.path.startsWith('/v1/portraits') ? [403, 422] : [404, 422], `${route.method} ${path}`);
          }
        }
        const query = await send(route, `${fill(route.path, values)}${route.path.includes('?') ? '&' : '?'}page=%00`, victimKey, route.method === 'GET' ? undefined : '{}');
        expect({ route: route.path, status: query.status }).not.toEqual({ route: route.path, status: 500 });
      }
      expect(lines().filter((line) => line.level === 'error')).toEqual([]);
    });

    it.each([
      ['arrays', DEEP_ARRAY],
      ['objects', DEEP_OBJECT],
    ])('a body of %s nested 10,000 deep is 422 in the envelope on every route that takes a body', async (_, body) => {
      const { values, key: victimKey } = await victim();
      for (const route of ROUTES.filter((candidate) => candidate.method !== 'GET')) {
        const path = fill(route.path, values);
        const response = await send(route, path, victimKey, body);
        expectEnvelope(response, [422], `${route.method} ${path}`);
        expect(response.body.error.details.fields).toEqual([{ field: 'body', message: expect.stringMatching(/nested/) }]);
      }
      expect(lines().filter((line) => line.level === 'error')).toEqual([]);
    });

    it('/v1 bodies are guarded the same way', async () => {
      const response = await app.request('POST', '/v1/data-subjects/search', {
        rawBody: JSON.stringify({ nin: '1234567890\u0000' }),
        headers: { 'x-service-key': key.key, 'content-type': 'application/json' },
      });
      expectEnvelope(response, [422], 'search');
      expect(response.body.error.details.fields).toEqual([{ field: 'nin', message: expect.any(String) }]);
    });
  });

  describe('Portrait links and the Host header', () => {
    it('are built from the listening address when PUBLIC_BASE_URL is not set, never from the Host header', async () => {
      const run = await requestWithHost(app.baseUrl, 'POST', '/v1/nin', 'evil.example', { 'x-service-key': key.key }, { nin: '12345678905' });
      expect(run.status).toBe(201);
      expect(run.body.data.result.portraitUrl.startsWith(`${app.baseUrl}/v1/portraits/prt_`)).toBe(true);
      const read = await requestWithHost(app.baseUrl, 'GET', `/v1/verifications/${run.body.data.reference}`, 'evil.example:8443', { 'x-service-key': key.key });
      expect(read.status).toBe(200);
      expect(read.body.data.result.portraitUrl.startsWith(`${app.baseUrl}/v1/portraits/prt_`)).toBe(true);
    });

    it('are built from PUBLIC_BASE_URL when it is set', async () => {
      const other = await startTestApp({ database: app.database, env: { PUBLIC_BASE_URL: 'https://api.example.com/' } });
      try {
        const run = await requestWithHost(other.baseUrl, 'POST', '/v1/nin', 'evil.example', { 'x-service-key': key.key }, { nin: '12345678905' });
        expect(run.status).toBe(201);
        expect(run.body.data.result.portraitUrl).toMatch(/^https:\/\/api\.example\.com\/v1\/portraits\/prt_/);
      } finally {
        await other.close();
      }
    });
  });

  describe('Answers produced before any route runs', () => {
    it('carry the security headers: 414, 431, a bad percent-encoding 400, a path segment too long, the query-parameter 422', async () => {
      const longUrl = await fetch(`${app.baseUrl}/v1/verifications?scope=${'a'.repeat(MAX_URL_LENGTH)}`, { headers: { 'x-service-key': key.key } });
      expect(longUrl.status).toBe(414);
      expectSecurityHeaders(headersOf(longUrl.headers), '414 URL');
      const longSegment = await fetch(`${app.baseUrl}/v1/verifications/${'v'.repeat(300)}`, { headers: { 'x-service-key': key.key } });
      expect(longSegment.status).toBe(414);
      expectSecurityHeaders(headersOf(longSegment.headers), '414 path segment');
      const many = Array.from({ length: MAX_QUERY_PARAMETERS + 1 }, (_, i) => `p${i}=1`).join('&');
      const tooManyParameters = await fetch(`${app.baseUrl}/v1/verifications?${many}`, { headers: { 'x-service-key': key.key } });
      expect(tooManyParameters.status).toBe(422);
      expectSecurityHeaders(headersOf(tooManyParameters.headers), '422 query');

      const headers = await rawRequest(app.baseUrl, `GET /v1/wallet HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`);
      expect(headers.status).toBe(431);
      expectSecurityHeaders(headers.headers, '431');
      const percent = await rawRequest(app.baseUrl, 'GET /v1/verifications/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(percent.status).toBe(400);
      expectSecurityHeaders(percent.headers, '400 percent-encoding');
      const garbage = await rawRequest(app.baseUrl, 'NOT HTTP AT ALL\r\n\r\n');
      expect(garbage.status).toBe(400);
      expectSecurityHeaders(garbage.headers, '400 not HTTP');
    });
  });

  describe('The request log', () => {
    it('logs the headers of an allow list only: a custom header carrying a secret is not logged, nor its name', async () => {
      const secret = `s3cr3t-${Date.now()}`;
      const response = await app.request('GET', '/v1/wallet', {
        headers: { 'x-service-key': key.key, 'x-upstream-token': secret, 'user-agent': 'hostile-test/1.0', 'x-request-id': 'hostile-log-0001' },
      });
      expect(response.status).toBe(200);
      const line = lines().findLast((entry) => typeof entry.req === 'object' && (entry.req as { url: string }).url === '/v1/wallet');
      expect(line).toBeDefined();
      const text = captured.join('');
      expect(text).not.toContain(secret);
      expect(text).not.toContain('x-upstream-token');
      // Nor the browser or the caller's request id, which may carry anything.
      expect(text).not.toContain('hostile-test/1.0');
      expect(text).not.toContain('hostile-log-0001');
      expect((line?.req as { headers: Record<string, string> }).headers).toMatchObject({ host: expect.any(String) });
      expect(Object.keys((line?.req as { headers: Record<string, string> }).headers)).not.toContain('x-service-key');
    });
  });

  describe('404 messages', () => {
    it('echo the path only, never the query string', async () => {
      const signature = 'SIGNATURE-SECRET-0123456789';
      for (const path of [`/v1/nowhere?signature=${signature}`, `/v1/portraits?expires=1&signature=${signature}`, `/admin/v1/nowhere?token=${signature}`]) {
        const response = await app.request('GET', path);
        expect(response.status).toBe(404);
        expect(response.body.error.code).toBe('not_found');
        expect(JSON.stringify(response.body)).not.toContain(signature);
        expect(response.body.error.message).toContain(path.split('?')[0]);
      }
    });
  });

  describe('Caching', () => {
    it('answers carrying personal data or secrets say Cache-Control: no-store, as does every other answer of the API', async () => {
      const { values, key: victimKey } = await victim();
      const headers = { 'x-service-key': victimKey };
      const admin = { authorization: `Bearer ${app.adminToken}` };
      const personal = [
        await app.request('POST', '/v1/nin', { body: { nin: '12345678905' }, headers }),
        await app.request('GET', `/v1/verifications/${values.reference}`, { headers }),
        await app.request('GET', '/v1/verifications', { headers }),
        await app.request('POST', '/v1/data-subjects/search', { body: { nin: '12345678905' }, headers }),
        await app.request('POST', `/admin/v1/organizations/${values.id}/keys`, { body: { environment: 'test' }, headers: admin }),
        await app.request('GET', `/admin/v1/organizations/${values.id}`, { headers: admin }),
      ];
      expect(personal.map((answer) => answer.status)).toEqual([201, 200, 200, 200, 201, 200]);
      for (const answer of personal) expect(answer.headers.get('cache-control')).toMatch(/\bno-store\b/);
      for (const route of ROUTES) {
        const answer = await send(route, fill(route.path, values), victimKey);
        expect({ route: `${route.method} ${route.path}`, cacheControl: answer.headers.get('cache-control') }).toEqual({
          route: `${route.method} ${route.path}`,
          cacheControl: expect.stringMatching(/\bno-store\b/),
        });
      }
    });
  });

  describe('Methods and query parameters a route does not take', () => {
    it('a method a path does not take is 405 naming the ones it does in Allow; OPTIONS too; an unknown path stays 404', async () => {
      const cases: Array<[string, string, string[]]> = [
        ['DELETE', '/v1/wallet', ['GET']],
        ['PUT', `/v1/verifications/vrf_${'0'.repeat(26)}`, ['GET']],
        ['OPTIONS', '/v1/wallet', ['GET']],
        ['GET', '/admin/v1/organizations/org_x/approve', ['POST']],
        ['PATCH', '/admin/v1/organizations', ['GET', 'POST']],
      ];
      for (const [method, path, allowed] of cases) {
        const response = await keyed(method, path);
        const allow = (response.headers.get('allow') ?? '').split(',').map((name) => name.trim());
        expect({ method, path, status: response.status, code: response.body?.error?.code }).toEqual({ method, path, status: 405, code: 'method_not_allowed' });
        for (const name of allowed) expect(allow).toContain(name);
        expect(allow).not.toContain(method);
        expect(response.headers.get('cache-control')).toBe('no-store');
      }
      expect((await keyed('DELETE', '/v1/nowhere/at/all')).status).toBe(404);
    });

    it('a query parameter the operation does not take is 422 naming it, not ignored', async () => {
      const misspelt = await keyed('GET', '/v1/verifications?stauts=found&page=1');
      expect({ status: misspelt.status, code: misspelt.body.error.code, fields: misspelt.body.error.details.fields }).toEqual({
        status: 422,
        code: 'validation_failed',
        fields: [{ field: 'stauts', message: expect.stringContaining('status, scope, page, pageSize') }],
      });
      const several = await keyed('GET', '/v1/wallet?a=1&b=2');
      expect(several.status).toBe(422);
      expect(several.body.error.details.fields.map((field: { field: string }) => field.field)).toEqual(['a', 'b']);
      expect((await app.admin('GET', '/admin/v1/organizations?pagesize=5')).status).toBe(422);
      // The parameters each takes still work, the signed portrait link's included.
      expect((await keyed('GET', '/v1/verifications?status=found&scope=nin&page=1&pageSize=5')).status).toBe(200);
      expect((await keyed('GET', '/v1/wallet/transactions?page=1')).status).toBe(200);
      expect((await fetch(portraitUrl)).status).toBe(200);
    });
  });

  describe('Behind a reverse proxy (TRUST_PROXY)', () => {
    /** What an app with `trustProxy` makes of a request that says it came from 203.0.113.7 over HTTPS: the logged address, and whether the console's cookie is Secure. */
    async function seenBehind(trustProxy: string | undefined): Promise<{ remoteAddress: unknown; secureCookie: boolean }> {
      const log: string[] = [];
      const behind = await startTestApp({
        database: app.database,
        env: { LOG_LEVEL: 'info', ...(trustProxy === undefined ? {} : { TRUST_PROXY: trustProxy }) },
        logDestination: { write: (line: string) => void log.push(line) },
      });
      try {
        // No X-Request-Id of the caller's: the answer then names the server's own id, the one its log line carries.
        const response = await fetch(`${behind.baseUrl}/console/api/session`, { headers: { 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https' } });
        const requestId = response.headers.get('x-request-id');
        const cookies = response.headers.getSetCookie();
        expect(cookies.length).toBeGreaterThan(0);
        const line = log
          .flatMap((chunk) => chunk.split('\n'))
          .filter((text) => text !== '')
          .map((text) => JSON.parse(text) as LogLine)
          .find((entry) => entry.requestId === requestId && typeof entry.req === 'object');
        return { remoteAddress: (line?.req as { remoteAddress?: unknown } | undefined)?.remoteAddress, secureCookie: cookies.every((cookie) => /;\s*Secure\b/i.test(cookie)) };
      } finally {
        await behind.close();
      }
    }

    it('takes the client address and scheme from the trusted hops only, and sets Secure cookies when the scheme is HTTPS', async () => {
      // One trusted hop (the test client on loopback plays the proxy), or the proxy's address range.
      expect(await seenBehind('1')).toEqual({ remoteAddress: '203.0.113.0', secureCookie: true });
      expect(await seenBehind('127.0.0.1/8, ::1/128')).toEqual({ remoteAddress: '203.0.113.0', secureCookie: true });
      // Not set, or a proxy elsewhere: the forwarded headers are anyone's to write, and ignored.
      expect(await seenBehind(undefined)).toEqual({ remoteAddress: '127.0.0.0', secureCookie: false });
      expect(await seenBehind('10.0.0.0/8')).toEqual({ remoteAddress: '127.0.0.0', secureCookie: false });
    });
  });
});
