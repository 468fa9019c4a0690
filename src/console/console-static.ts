import { readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorEnvelope } from '../common/envelope.js';
import { helmetHeaders } from '../common/security-headers.js';

/**
 * The console (console/, a Vite single-page app built into dist/console by scripts/build.mjs) is
 * served here, by the service itself, at /console. Its assets carry a content hash in their names,
 * so they are cached for good; index.html is answered for every other path under /console (the
 * app routes in the browser) and never cached, so a new build is picked up at the next load.
 * /console/api/* belongs to the console's API: a path there that no route matched is its 404.
 *
 * Hand-written rather than @fastify/static: the files are a dozen hashed assets read once each,
 * and @fastify/static's ESM-only dependencies cannot be loaded by the test runner (see openapi.ts).
 */

/** The built console: dist/console beside the compiled sources, or under the repository root when run from src/ (the tests). */
export function defaultConsoleDir(): string {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return basename(resolve(root)) === 'dist' ? join(root, 'console') : join(root, 'dist', 'console');
}

/**
 * The page may run its own scripts and styles only, talk to its own origin only, and be framed
 * by nobody. Inline styles are allowed: the component library (Mantine) sets CSS variables in a
 * <style> element and style attributes at run time. Portraits are the API's signed links, same origin.
 */
export const CONSOLE_SECURITY_HEADERS = helmetHeaders({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:', 'blob:'],
      fontSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      objectSrc: ["'none'"],
    },
  },
  crossOriginResourcePolicy: { policy: 'same-origin' },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'same-origin' },
});

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};
const ASSET_NAME = /^[A-Za-z0-9_.-]+\.(js|css|svg|png|woff2|json)$/;
/** Compressing smaller files saves less than it costs. */
const GZIP_MIN_BYTES = 1_024;

interface Loaded {
  readonly mtimeMs: number;
  readonly body: Buffer;
  readonly gzipped: Buffer | undefined;
}

export interface ConsoleStaticOptions {
  /** The built console; defaultConsoleDir() unless given. */
  readonly dir?: string;
}

export function registerConsoleStatic(fastify: FastifyInstance, options: ConsoleStaticOptions = {}): void {
  const dir = options.dir ?? defaultConsoleDir();
  // Each file read and compressed once, again only when it changes (a rebuild while the service runs).
  const cache = new Map<string, Loaded>();

  const load = async (path: string): Promise<Loaded | undefined> => {
    let mtimeMs: number;
    try {
      const info = await stat(path);
      if (!info.isFile()) return undefined;
      mtimeMs = info.mtimeMs;
    } catch {
      return undefined;
    }
    const cached = cache.get(path);
    if (cached?.mtimeMs === mtimeMs) return cached;
    const body = await readFile(path);
    const loaded = { mtimeMs, body, gzipped: body.length >= GZIP_MIN_BYTES ? gzipSync(body) : undefined };
    cache.set(path, loaded);
    return loaded;
  };

  const send = (request: FastifyRequest, reply: FastifyReply, file: Loaded, contentType: string, cacheControl: string) => {
    void reply.header('content-type', contentType).header('cache-control', cacheControl).header('vary', 'accept-encoding');
    const accepts = String(request.headers['accept-encoding'] ?? '');
    if (file.gzipped !== undefined && /\bgzip\b/.test(accepts)) return reply.header('content-encoding', 'gzip').send(file.gzipped);
    return reply.send(file.body);
  };

  const route = { config: { securityHeaders: CONSOLE_SECURITY_HEADERS } };

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const index = await load(join(dir, 'index.html'));
    if (index === undefined) {
      return reply.code(503).header('content-type', 'text/plain; charset=utf-8').send('The console is not built: run `npm run build` (npm start and npm ci build it).\n');
    }
    return send(request, reply, index, CONTENT_TYPES['.html'], 'no-cache');
  };

  fastify.get('/console', route, page);
  fastify.get('/console/assets/:file', route, async (request, reply) => {
    const { file } = request.params as { file: string };
    const loaded = ASSET_NAME.test(file) ? await load(join(dir, 'assets', file)) : undefined;
    if (loaded === undefined) return reply.code(404).header('content-type', 'text/plain; charset=utf-8').send('Not found\n');
    const extension = file.slice(file.lastIndexOf('.'));
    return send(request, reply, loaded, CONTENT_TYPES[extension], 'public, max-age=31536000, immutable');
  });
  fastify.get('/console/*', route, async (request, reply) => {
    const path = request.url.split('?')[0];
    if (path === '/console/api' || path.startsWith('/console/api/')) {
      const envelope: ErrorEnvelope = { status: false, error: { code: 'not_found', message: 'No console API route here.', details: {} } };
      return reply.code(404).send(envelope);
    }
    return page(request, reply);
  });
}
