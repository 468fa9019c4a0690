import { chromium, expect, test } from '@playwright/test';
import Fastify from 'fastify';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { CHROMIUM_PATH } from '../../playwright.config.js';
import { FACE_MODELS_PATH } from '../../src/face-checks/face-models-static.js';
import { LIVENESS_LIMITS, livenessStep } from '../../src/face-checks/face-measures.js';
import { HumanFaceChecks } from '../../src/face-checks/human-face-checks.js';
import { makeFakeCamera } from '../support/fake-camera.js';

/**
 * The hosted page's camera guide (widget/src/face/face-guide.ts) in Chromium, fed by a fake camera
 * showing a sample face that turns its head, its models loaded from the running service. The page is a
 * bare one of this test's own, served from another origin than the service's, as the embedded widget is.
 */
test('the face guide sees one good face, loads the detector before the scores, and sees the head turn; on software WebGL it runs on wasm', async () => {
  test.setTimeout(180_000);
  const service = process.env.CONSOLE_BASE_URL;
  if (service === undefined) throw new Error('CONSOLE_BASE_URL is not set: the global setup starts the service');
  const dir = await mkdtemp(join(tmpdir(), 'face-guide-'));
  const camera = await makeFakeCamera();
  const pageServer = Fastify();
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream', `--use-file-for-fake-video-capture=${camera.path}`],
  });
  try {
    const entry = join(dir, 'entry.ts');
    await writeFile(
      entry,
      `import { startFaceGuide } from ${JSON.stringify(resolve('widget/src/face/face-guide.ts'))};
       const reports = (window.reports = []);
       const video = document.querySelector('video');
       video.srcObject = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 } });
       await video.play();
       window.guide = await startFaceGuide(video, ${JSON.stringify(`${service}${FACE_MODELS_PATH}`)}, { onFrame: (report) => reports.push(report) });`,
    );
    await build({
      configFile: false,
      logLevel: 'warn',
      root: dir,
      build: { outDir: join(dir, 'out'), target: 'es2022', minify: false, lib: { entry, formats: ['es'], fileName: () => 'guide.js' } },
    });
    // The guide and the library's chunk it imports when it starts.
    const files = new Map(await Promise.all((await readdir(join(dir, 'out'))).map(async (file) => [file, await readFile(join(dir, 'out', file))] as const)));
    pageServer.get('/', (_request, reply) =>
      reply.type('text/html').send('<!doctype html><title>guide</title><video muted playsinline></video><script type="module" src="/guide.js"></script>'),
    );
    pageServer.get('/:file', (request, reply) => {
      const file = files.get((request.params as { file: string }).file);
      return file === undefined ? reply.code(404).send() : reply.type('text/javascript').send(file);
    });
    const pageUrl = await pageServer.listen({ port: 0, host: '127.0.0.1' });

    const page = await browser.newPage();
    const models: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes(FACE_MODELS_PATH)) models.push(request.url().slice(request.url().lastIndexOf('/') + 1));
    });
    await page.goto(pageUrl.replace('127.0.0.1', 'localhost'));
    type Report = {
      faces: number;
      centred: boolean;
      largeEnough: boolean;
      lit: boolean;
      sharp: boolean;
      eyesOpen: boolean;
      realScore: number | null;
      liveness: string | null;
      ready: boolean;
    };
    const reports = () => page.evaluate(() => (globalThis as unknown as { reports: Report[] }).reports);
    await expect.poll(async () => (await reports()).some((report) => report.ready), { timeout: 150_000, intervals: [1_000] }).toBe(true);

    const all = await reports();
    const ready = all.find((report) => report.ready)!;
    expect(ready).toMatchObject({ faces: 1, centred: true, largeEnough: true, lit: true, sharp: true, eyesOpen: true, liveness: 'head_turn' });
    expect(ready.realScore).toBeGreaterThan(0);
    expect(all.every((report) => report.faces === 1)).toBe(true);
    // Step by step: the detector and mesh before the scores' models; the description and iris models never.
    expect(models.indexOf('blazeface.json')).toBeLessThan(models.indexOf('antispoof.json'));
    expect(models.indexOf('facemesh.json')).toBeLessThan(models.indexOf('liveness.json'));
    expect(models.filter((file) => /^(faceres|iris)\./.test(file))).toEqual([]);
    // The frames it would send show the server, by its own measures, the same turn.
    const { frames, selfie } = await page.evaluate(async () => {
      const guide = (globalThis as unknown as { guide: { livenessFrames(): Promise<Blob[]>; capture(): Promise<Blob> } }).guide;
      const bytes = async (blob: Blob) => Array.from(new Uint8Array(await blob.arrayBuffer()));
      return { frames: await Promise.all((await guide.livenessFrames()).map(bytes)), selfie: await bytes(await guide.capture()) };
    });
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(frames.length).toBeLessThanOrEqual(6);
    for (const frame of frames) expect(frame.length).toBeLessThan(150_000);
    const checks = new HumanFaceChecks();
    const poses = [];
    for (const frame of frames) poses.push(await checks.framePose(Uint8Array.from(frame)));
    expect(poses.every((pose) => pose?.faces === 1)).toBe(true);
    expect(livenessStep(poses.map((pose) => pose!))).toBe('head_turn');
    // And the selfie's person, as the server requires of each frame.
    const { descriptor } = await checks.checkSelfie(Uint8Array.from(selfie));
    for (const pose of poses) expect(checks.similarity(pose!.descriptor!, descriptor!)).toBeGreaterThanOrEqual(LIVENESS_LIMITS.minSelfieSimilarity);
    // Headless Chromium draws WebGL in software (SwiftShader): the guide chose wasm, several times faster there.
    expect(await page.evaluate(() => (globalThis as unknown as { guide: { backend: string } }).guide.backend)).toBe('wasm');
  } finally {
    await browser.close();
    await pageServer.close();
    await camera.dispose();
    await rm(dir, { recursive: true, force: true });
  }
});
