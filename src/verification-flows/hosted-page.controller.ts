import { Controller, Get, Headers, Inject, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { helmetHeaders } from '../common/security-headers.js';
import { VerificationSessions } from './verification-sessions.service.js';

/** The built hosted page: dist/widget beside the compiled sources, or under the repository root when run from src/ (the tests). */
export function defaultWidgetDir(): string {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  return basename(resolve(root)) === 'dist' ? join(root, 'widget') : join(root, 'dist', 'widget');
}

interface Loaded {
  readonly body: Buffer;
  readonly gzipped: Buffer;
  readonly etag: string;
}

const ASSET_NAME = /^[A-Za-z0-9_.-]+\.(js|css)$/;
const CONTENT_TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/**
 * The hosted page's headers: its own scripts and styles, its own origin for calls, the camera for
 * itself only, images from itself and the flow's logo, and framed only by the flow's allowed
 * origins (none: by nobody).
 */
export function hostedPageHeaders(framing: { readonly allowedOrigins: readonly string[]; readonly logoOrigin: string | null }): Record<string, string> {
  const headers = helmetHeaders({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        // The camera guide's face models run on WebAssembly when the browser has no WebGL.
        scriptSrc: ["'self'", "'wasm-unsafe-eval'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:', 'blob:', ...(framing.logoOrigin === null ? [] : [framing.logoOrigin])],
        mediaSrc: ["'self'", 'blob:', 'mediastream:'],
        connectSrc: ["'self'"],
        frameAncestors: framing.allowedOrigins.length === 0 ? ["'none'"] : [...framing.allowedOrigins],
        baseUri: ["'none'"],
        formAction: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    // X-Frame-Options cannot name several origins: frame-ancestors decides alone.
    frameguard: false,
    referrerPolicy: { policy: 'no-referrer' },
  });
  return { ...headers, 'permissions-policy': 'camera=(self), microphone=(), geolocation=()', 'cache-control': 'no-store' };
}

/** The hosted page at /verify/{sessionId} (the client secret in the fragment never reaches here) and its hashed assets. */
@ApiExcludeController()
@Controller('verify')
export class HostedPageController {
  private readonly dir = defaultWidgetDir();
  private readonly cache = new Map<string, Loaded>();

  constructor(@Inject(VerificationSessions) private readonly sessions: VerificationSessions) {}

  @Get('assets/:file')
  async asset(@Param('file') file: string, @Headers('accept-encoding') acceptEncoding: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    const loaded = ASSET_NAME.test(file) ? await this.load(join('assets', file)) : undefined;
    if (loaded === undefined) return void reply.code(404).header('content-type', 'text/plain; charset=utf-8').send('Not found\n');
    void reply
      .header('content-type', CONTENT_TYPES[file.slice(file.lastIndexOf('.') + 1)])
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('cross-origin-resource-policy', 'same-origin');
    this.send(reply, loaded, acceptEncoding);
  }

  /**
   * `<verification-flow>`, for integrators' pages (`<script type="module">`, so fetched with CORS):
   * any origin may load it. Its name does not change with its content, so it is cached an hour and
   * then revalidated by its ETag.
   */
  @Get('element.js')
  async element(
    @Headers('accept-encoding') acceptEncoding: string | undefined,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const loaded = await this.load('element.js');
    if (loaded === undefined) return void reply.code(404).header('content-type', 'text/plain; charset=utf-8').send('Not found\n');
    void reply
      .header('cache-control', 'public, max-age=3600, stale-while-revalidate=86400')
      .header('etag', loaded.etag)
      .header('access-control-allow-origin', '*')
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('vary', 'accept-encoding');
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => tag.trim() === loaded.etag)) return void reply.code(304).send();
    void reply.header('content-type', CONTENT_TYPES.js);
    this.send(reply, loaded, acceptEncoding);
  }

  /** A reusable link: a new session per visit, and on to its page (the client secret in the fragment of the redirect). */
  @Get('start/:linkId')
  async start(@Param('linkId') linkId: string, @Res() reply: FastifyReply): Promise<void> {
    const session = await this.sessions.startFromLink(linkId, reply);
    if (session === undefined) return void reply.code(404).header('content-type', 'text/plain; charset=utf-8').send('This link is not valid.\n');
    void reply.code(303).header('location', session.hostedUrl).header('referrer-policy', 'no-referrer').send();
  }

  @Get(':sessionId')
  async page(@Param('sessionId') sessionId: string, @Headers('accept-encoding') acceptEncoding: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    const framing = await this.sessions.framing(sessionId);
    // The API's headers were set on the request's arrival: the page's replace them, and frame-ancestors alone decides framing.
    void reply.removeHeader('x-frame-options').headers(hostedPageHeaders(framing ?? { allowedOrigins: [], logoOrigin: null }));
    const index = await this.load('index.html');
    if (index === undefined) return void reply.code(503).header('content-type', 'text/plain; charset=utf-8').send('The hosted page is not built: run `npm run build`.\n');
    // An unknown session gets the page too (it says so once it asks): the answer never tells which ids exist.
    void reply.header('content-type', 'text/html; charset=utf-8');
    this.send(reply, index, acceptEncoding);
  }

  private send(reply: FastifyReply, file: Loaded, acceptEncoding: string | undefined): void {
    void reply.header('vary', 'accept-encoding');
    if (/\bgzip\b/.test(acceptEncoding ?? '')) void reply.header('content-encoding', 'gzip').send(file.gzipped);
    else void reply.send(file.body);
  }

  private async load(path: string): Promise<Loaded | undefined> {
    const cached = this.cache.get(path);
    if (cached !== undefined && path !== 'index.html') return cached;
    try {
      const body = await readFile(join(this.dir, path));
      const loaded = { body, gzipped: gzipSync(body), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
      this.cache.set(path, loaded);
      return loaded;
    } catch {
      return undefined;
    }
  }
}
