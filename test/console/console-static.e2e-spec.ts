import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { defaultConsoleDir, registerConsoleStatic } from '../../src/console/console-static.js';
import { registerSecurityHeaders } from '../../src/common/security-headers.js';

/** The console's pages and assets over a real HTTP server, from a built console of its own. */
describe('The console served at /console', () => {
  let dir: string;
  let server: FastifyInstance;
  let base: string;
  const script = `console.log(${JSON.stringify('x'.repeat(4_000))});`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-static-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), '<!doctype html><script type="module" src="/console/assets/index-abc.js"></script>');
    await writeFile(join(dir, 'assets', 'index-abc.js'), script);
    server = Fastify();
    registerSecurityHeaders(server);
    registerConsoleStatic(server, { dir });
    server.get('/console/api/session', async () => ({ status: true, data: { user: null } }));
    base = await server.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['/console', '/console/', '/console/keys', '/console/verifications/vrf_01J?environment=live', '/console/operator/organizations/org_1'])(
    'answers the app at %s, never cached, under the console page policy',
    async (path) => {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(await response.text()).toContain('/console/assets/index-abc.js');
    },
  );

  it('answers a hashed asset cached for good, gzipped when the browser accepts it', async () => {
    const plain = await fetch(`${base}/console/assets/index-abc.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(script);

    const response = await server.inject({ url: '/console/assets/index-abc.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(response.rawPayload.length).toBeLessThan(script.length / 10);
    expect(gunzipSync(response.rawPayload).toString()).toBe(script);
  });

  it.each(['/console/assets/missing.js', '/console/assets/..%2Findex.html', '/console/assets/index.html'])('answers 404 for %s', async (path) => {
    expect((await fetch(`${base}${path}`)).status).toBe(404);
  });

  it("leaves /console/api to the console's API, and answers its unknown paths with the API's 404 envelope", async () => {
    expect(await (await fetch(`${base}/console/api/session`)).json()).toEqual({ status: true, data: { user: null } });
    const unknown = await fetch(`${base}/console/api/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ status: false, error: { code: 'not_found' } });
  });

  it('says how to build the console when it is not built', async () => {
    const empty = Fastify();
    registerConsoleStatic(empty, { dir: join(dir, 'nothing') });
    const response = await empty.inject({ url: '/console/keys' });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('npm run build');
    await empty.close();
  });
});

/** The budget: the JavaScript a first visit loads (the entry and what index.html preloads), gzipped. */
const INITIAL_JS_BUDGET_BYTES = 300 * 1024;

describe('The built console', () => {
  it('loads at most 300 KB of gzipped JavaScript on a first visit; every page beyond sign-in comes later', async () => {
    const dir = defaultConsoleDir();
    const index = await readFile(join(dir, 'index.html'), 'utf8');
    const initial = [...index.matchAll(/<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="\/console\/(assets\/[^"]+\.js)"/g)].map((match) => match[1]);
    expect(initial.length).toBeGreaterThan(0);
    const lazy = (await readdir(join(dir, 'assets'))).filter((file) => file.endsWith('.js') && !initial.includes(`assets/${file}`));
    expect(lazy.length).toBeGreaterThan(5);
    let gzippedBytes = 0;
    for (const file of initial) gzippedBytes += gzipSync(await readFile(join(dir, file))).length;
    expect(gzippedBytes).toBeLessThanOrEqual(INITIAL_JS_BUDGET_BYTES);
  });
});
