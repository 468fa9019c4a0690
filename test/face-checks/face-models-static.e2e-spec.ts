import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Fastify, { type FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { registerSecurityHeaders } from '../../src/common/security-headers.js';
import { FACE_MODELS_PATH, HUMAN_VERSION, registerFaceModelsStatic } from '../../src/face-checks/face-models-static.js';
import { HUMAN_MODELS_DIR } from '../../src/face-checks/human-face-checks.js';

/** The face models over a real HTTP server, from the installed package. */
describe('The face models served at /verify/models/<version>/', () => {
  let server: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    server = Fastify();
    registerSecurityHeaders(server);
    registerFaceModelsStatic(server);
    base = await server.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => server.close());

  it('puts the library version in the path', () => expect(FACE_MODELS_PATH).toBe(`/verify/models/${HUMAN_VERSION}/`));

  it('answers a model and its weights as the package has them, cached for a year, to any origin', async () => {
    const manifest = await fetch(`${base}${FACE_MODELS_PATH}blazeface.json`);
    expect(manifest.status).toBe(200);
    expect(manifest.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(manifest.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(manifest.headers.get('access-control-allow-origin')).toBe('*');
    expect(manifest.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    const json = (await manifest.json()) as { weightsManifest: { paths: string[] }[] };
    const weightsFile = json.weightsManifest[0]!.paths[0]!;
    const weights = await fetch(`${base}${FACE_MODELS_PATH}${weightsFile}`, { headers: { 'accept-encoding': 'identity' } });
    expect(weights.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await weights.arrayBuffer()).equals(await readFile(join(HUMAN_MODELS_DIR, weightsFile)))).toBe(true);
  });

  it('gzips the JSON for a browser that accepts it', async () => {
    const response = await server.inject({ url: `${FACE_MODELS_PATH}facemesh.json`, headers: { 'accept-encoding': 'gzip' } });
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(response.rawPayload).equals(await readFile(join(HUMAN_MODELS_DIR, 'facemesh.json')))).toBe(true);
  });

  it('answers the wasm backend binary', async () => {
    const response = await fetch(`${base}${FACE_MODELS_PATH}tfjs-backend-wasm-simd.wasm`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/wasm');
  });

  it.each(['centernet.json', 'handtrack.bin', 'models.json', '..%2Fpackage.json', 'README.md', 'blazeface.json.bak'])(
    'answers 404 for %s, which is not a face model',
    async (file) => {
      expect((await fetch(`${base}${FACE_MODELS_PATH}${file}`)).status).toBe(404);
    },
  );

  it('answers 404 under another version of the library', async () => {
    expect((await fetch(`${base}/verify/models/0.0.1/blazeface.json`)).status).toBe(404);
  });
});
