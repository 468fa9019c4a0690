import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { helmetHeaders } from '../common/security-headers.js';
import { FACE_MODEL_NAMES, HUMAN_MODELS_DIR } from './human-face-checks.js';

/**
 * The face models the hosted page's camera guide loads, served by the service itself (never a CDN):
 * the six face models of the installed `@vladmandic/human` and tfjs's wasm binaries, nothing else of
 * the package. The library's version is in the path, so a file never changes under its URL and is
 * cached for a year. They are public files of an npm package, so any origin may fetch them (the
 * embedded widget runs on the integrator's page). Hand-written like the console's static files
 * (console-static.ts), for the same reason.
 */

const require = createRequire(import.meta.url);
export const HUMAN_VERSION = (JSON.parse(readFileSync(join(dirname(HUMAN_MODELS_DIR), 'package.json'), 'utf8')) as { version: string }).version;
const WASM_DIR = join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm')), '/');

/** Where the page finds the models (and the wasm binaries), with a trailing slash. */
export const FACE_MODELS_PATH = `/verify/models/${HUMAN_VERSION}/`;

const MODEL_FILE = new RegExp(`^(${FACE_MODEL_NAMES.join('|')})\\.(json|bin)$`);
const WASM_FILE = /^tfjs-backend-wasm(-simd|-threaded-simd)?\.wasm$/;
const CONTENT_TYPES = { json: 'application/json; charset=utf-8', bin: 'application/octet-stream', wasm: 'application/wasm' } as const;

export const FACE_MODELS_SECURITY_HEADERS = helmetHeaders({
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  crossOriginResourcePolicy: { policy: 'cross-origin' },
  frameguard: { action: 'deny' },
});

interface Loaded {
  readonly body: Buffer;
  readonly gzipped: Buffer;
}

export function registerFaceModelsStatic(fastify: FastifyInstance): void {
  // Each file read and compressed once, on its first request; the package does not change under a running service.
  const cache = new Map<string, Promise<Loaded>>();
  const load = (path: string): Promise<Loaded> => {
    let loaded = cache.get(path);
    if (loaded === undefined) {
      loaded = readFile(path).then((body) => ({ body, gzipped: gzipSync(body) }));
      loaded.catch(() => cache.delete(path));
      cache.set(path, loaded);
    }
    return loaded;
  };

  fastify.get(`${FACE_MODELS_PATH}:file`, { config: { securityHeaders: FACE_MODELS_SECURITY_HEADERS } }, async (request: FastifyRequest, reply: FastifyReply) => {
    const { file } = request.params as { file: string };
    const path = MODEL_FILE.test(file) ? join(HUMAN_MODELS_DIR, file) : WASM_FILE.test(file) ? join(WASM_DIR, file) : undefined;
    if (path === undefined) return reply.code(404).header('content-type', 'text/plain; charset=utf-8').send('Not found\n');
    const loaded = await load(path);
    const extension = file.slice(file.lastIndexOf('.') + 1) as keyof typeof CONTENT_TYPES;
    void reply
      .header('content-type', CONTENT_TYPES[extension])
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('access-control-allow-origin', '*')
      .header('vary', 'accept-encoding');
    const smaller = loaded.gzipped.length < loaded.body.length * 0.95;
    if (smaller && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(loaded.gzipped);
    return reply.send(loaded.body);
  });
}
