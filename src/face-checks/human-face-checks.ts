/**
 * The server's face checks with `@vladmandic/human` on TensorFlow.js's wasm backend (the native backend
 * downloads a binary at install, which cannot work here). The models are the package's own files, read
 * from disk through a tfjs IO handler: never fetched from the network.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import type * as Tf from '@tensorflow/tfjs-core';
import type { io as tfio } from '@tensorflow/tfjs-core';
import type { Human as HumanInstance, Config, FaceResult } from '@vladmandic/human';
import { type DocumentCheck, type DocumentKind, type DocumentProblem, FaceChecks, type FramePose, type SelfieCheck } from './face-checks.port.js';
import { documentProblems, measureDocument } from './document-measures.js';
import { eyeOpenness, measureFace, type Pixels, selfieProblems } from './face-measures.js';

const require = createRequire(import.meta.url);

/** The package's folder: its `exports` map names no `package.json`, so it is found from the main file. */
export const HUMAN_PACKAGE_DIR = dirname(dirname(require.resolve('@vladmandic/human')));
export const HUMAN_MODELS_DIR = join(HUMAN_PACKAGE_DIR, 'models');

/** The models face checks use, and so the only ones the service reads or serves. */
export const FACE_MODEL_NAMES = ['blazeface', 'facemesh', 'iris', 'faceres', 'antispoof', 'liveness'] as const;

/** Bytes of an uploaded image: a phone's 12-megapixel JPEG is 3 to 5 MB. */
export const MAX_IMAGE_BYTES = 8 * 1024 * 1024;
/** Pixels of a decoded image, checked from the header before decoding: 4,000 by 6,000. */
export const MAX_IMAGE_PIXELS = 24_000_000;
/** Images are averaged down to this longer side before detection: the detector reads 256 pixels, the description 224. */
const WORKING_SIDE_PX = 1024;
/** Checks waiting for the single tfjs engine; more are refused rather than queued without bound. */
const MAX_QUEUED_CHECKS = 32;

const MODEL_SCHEME = 'package-models://';

type HumanModule = typeof import('@vladmandic/human');

let humanModule: HumanModule | undefined;
/** The library's bundle for Node on wasm, loaded by its resolved path (its `exports` map cannot name it). */
function loadHumanModule(): HumanModule {
  humanModule ??= require(join(HUMAN_PACKAGE_DIR, 'dist', 'human.node-wasm.js')) as HumanModule;
  return humanModule;
}

function humanConfig(): Partial<Config> {
  // Still images, one at a time: every cache and frame-skipping meant for video is off, so one
  // request's face can never be answered from another's.
  const once = { skipFrames: 0, skipTime: 0 };
  return {
    backend: 'wasm',
    wasmPath: join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm')), '/'),
    modelBasePath: MODEL_SCHEME,
    cacheModels: false,
    cacheSensitivity: 0,
    validateModels: false,
    debug: false,
    warmup: 'none',
    filter: { enabled: false },
    gesture: { enabled: false },
    body: { enabled: false },
    hand: { enabled: false },
    object: { enabled: false },
    segmentation: { enabled: false },
    face: {
      enabled: true,
      detector: { ...once, modelPath: 'blazeface.json', rotation: false, maxDetected: 5, minConfidence: 0.5, iouThreshold: 0.1, return: false },
      mesh: { enabled: true, modelPath: 'facemesh.json' },
      attention: { enabled: false },
      iris: { ...once, enabled: true, modelPath: 'iris.json' },
      description: { ...once, enabled: true, modelPath: 'faceres.json' },
      emotion: { enabled: false },
      antispoof: { ...once, enabled: true, modelPath: 'antispoof.json' },
      liveness: { ...once, enabled: true, modelPath: 'liveness.json' },
      gear: { enabled: false },
    },
  };
}

/** A tfjs load handler that reads a model's JSON and weight files from the package's folder. */
function registerModelRouter(human: HumanInstance): void {
  const { io } = tfOf(human);
  // A router answers null for a URL that is not its own (tfjs's own http router does the same; its type omits it).
  const router = (url: string | string[]): tfio.IOHandler | null => {
    if (typeof url !== 'string' || !url.startsWith(MODEL_SCHEME)) return null;
    const file = url.slice(MODEL_SCHEME.length);
    if (!FACE_MODEL_NAMES.some((name) => file === `${name}.json`)) throw new Error(`face checks: model ${file} is not one of the face models`);
    return {
      load: async () => {
        const modelJson = JSON.parse(await readFile(join(HUMAN_MODELS_DIR, file), 'utf8')) as tfio.ModelJSON;
        return io.getModelArtifactsForJSON(modelJson, async (manifest: tfio.WeightsManifestConfig) => {
          const weights = Buffer.concat(await Promise.all(manifest.flatMap((group) => group.paths).map((path) => readFile(join(HUMAN_MODELS_DIR, path)))));
          return [manifest.flatMap((group) => group.weights), weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength)];
        });
      },
    };
  };
  io.registerLoadRouter(router as Parameters<typeof io.registerLoadRouter>[0]);
}

/** The library's tfjs, typed: its own declaration leaves it `any`. */
const tfOf = (human: HumanInstance): typeof Tf => human.tf as typeof Tf;

let shared: Promise<HumanInstance> | undefined;
/** One Human for the process, its models loaded on first use. */
export function loadHuman(): Promise<HumanInstance> {
  shared ??= (async () => {
    const human = new (loadHumanModule().Human)(humanConfig());
    registerModelRouter(human);
    await human.load();
    const missing = FACE_MODEL_NAMES.filter((name) => !human.models.loaded().includes(name));
    if (missing.length > 0) throw new Error(`face checks: models not loaded: ${missing.join(', ')}`);
    return human;
  })();
  shared.catch(() => (shared = undefined));
  return shared;
}

export class UnreadableImage extends Error {}

/** Reads the dimensions from a PNG's header or a JPEG's frame header, before anything is decoded. */
function dimensions(bytes: Uint8Array): { kind: 'jpeg' | 'png'; width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && view.getUint32(0) === 0x89504e47 && view.getUint32(4) === 0x0d0a1a0a) {
    return { kind: 'png', width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    let at = 2;
    while (at + 9 < bytes.length) {
      if (bytes[at] !== 0xff) throw new UnreadableImage('jpeg marker expected');
      const marker = bytes[at + 1];
      // SOF0 to SOF15 carry the frame's size, except DHT (C4), JPG (C8) and DAC (CC).
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { kind: 'jpeg', height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
      }
      at += 2 + view.getUint16(at + 2);
    }
  }
  throw new UnreadableImage('neither a JPEG nor a PNG');
}

/** Decodes JPEG or PNG bytes to RGBA within the size limits. */
export function decodeImage(bytes: Uint8Array): Pixels {
  if (bytes.length > MAX_IMAGE_BYTES) throw new UnreadableImage('image too large');
  const { kind, width, height } = dimensions(bytes);
  if (width === 0 || height === 0 || width * height > MAX_IMAGE_PIXELS) throw new UnreadableImage('image dimensions out of range');
  try {
    if (kind === 'png') {
      const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      return { width: png.width, height: png.height, data: png.data };
    }
    const decoded = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: MAX_IMAGE_PIXELS / 1e6, maxMemoryUsageInMB: 512 });
    return { width: decoded.width, height: decoded.height, data: decoded.data };
  } catch (error) {
    throw new UnreadableImage(`undecodable ${kind}: ${(error as Error).message}`);
  }
}

/** Averages the image down so its longer side is at most `side` pixels. */
export function shrink(image: Pixels, side = WORKING_SIDE_PX): Pixels {
  const factor = Math.ceil(Math.max(image.width, image.height) / side);
  if (factor <= 1) return image;
  const width = Math.floor(image.width / factor);
  const height = Math.floor(image.height / factor);
  const data = new Uint8Array(width * height * 4);
  const n = factor * factor;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 4; c++) {
        let sum = 0;
        for (let dy = 0; dy < factor; dy++) for (let dx = 0; dx < factor; dx++) sum += image.data[((y * factor + dy) * image.width + x * factor + dx) * 4 + c];
        data[(y * width + x) * 4 + c] = Math.round(sum / n);
      }
    }
  }
  return { width, height, data };
}

const area = (face: FaceResult): number => face.box[2] * face.box[3];

/** The one Human's queue, shared by every HumanFaceChecks (the flows' and the sandbox's). */
let queue: Promise<unknown> = Promise.resolve();
let queued = 0;

export class HumanFaceChecks extends FaceChecks {
  /** Runs detection on one image, one at a time: the tfjs engine is single-threaded and Human keeps state. */
  private async detect(image: Pixels): Promise<FaceResult[]> {
    if (queued >= MAX_QUEUED_CHECKS) throw new Error('face checks: too many images waiting');
    queued++;
    const run = queue.then(async () => {
      const human = await loadHuman();
      const rgb = new Float32Array(image.width * image.height * 3);
      for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
        rgb[j] = image.data[i]!;
        rgb[j + 1] = image.data[i + 1]!;
        rgb[j + 2] = image.data[i + 2]!;
      }
      const tf = tfOf(human);
      const tensor = tf.tensor(rgb, [1, image.height, image.width, 3], 'float32');
      try {
        const result = await human.detect(tensor);
        if (result.error) throw new Error(`face checks: ${result.error}`);
        return [...result.face].sort((a, b) => area(b) - area(a));
      } finally {
        tf.dispose(tensor);
      }
    });
    queue = run.catch(() => undefined);
    try {
      return await run;
    } finally {
      queued--;
    }
  }

  async checkSelfie(bytes: Uint8Array): Promise<SelfieCheck> {
    let image: Pixels;
    try {
      image = shrink(decodeImage(bytes));
    } catch (error) {
      if (error instanceof UnreadableImage) return refusedSelfie();
      throw error;
    }
    const faces = await this.detect(image);
    const face = faces[0];
    if (face === undefined) return { passed: false, problems: ['no_face'], faces: 0, detectionScore: null, realScore: null, liveScore: null, descriptor: null };
    const problems = selfieProblems(measureFace(image, faces.length, face.box, face.mesh, face.real ?? null, face.live ?? null));
    return {
      passed: problems.length === 0,
      problems,
      faces: faces.length,
      detectionScore: face.boxScore,
      realScore: face.real ?? null,
      liveScore: face.live ?? null,
      descriptor: face.embedding && face.embedding.length > 0 ? [...face.embedding] : null,
    };
  }

  async checkDocument(bytes: Uint8Array, kind: DocumentKind): Promise<DocumentCheck> {
    let image: Pixels;
    try {
      image = decodeImage(bytes);
    } catch (error) {
      if (error instanceof UnreadableImage) return { passed: false, problems: ['unreadable_image'], descriptor: null };
      throw error;
    }
    // The page's own measures, taken again on the full image (document-measures.ts).
    const problems: DocumentProblem[] = documentProblems(measureDocument(image));
    const working = shrink(image);
    let descriptor: number[] | null = null;
    if (kind !== 'drivers_licence_back') {
      const portrait = (await this.detect(working))[0];
      if (portrait === undefined) problems.push('no_face_on_document');
      else if (portrait.embedding && portrait.embedding.length > 0) descriptor = [...portrait.embedding];
    }
    return { passed: problems.length === 0, problems, descriptor };
  }

  /** The browser's liveness frames are judged here again, with `livenessStep` over their poses. */
  async framePose(bytes: Uint8Array): Promise<(FramePose & { readonly faces: number; readonly descriptor: readonly number[] | null }) | null> {
    let image: Pixels;
    try {
      image = shrink(decodeImage(bytes));
    } catch (error) {
      if (error instanceof UnreadableImage) return null;
      throw error;
    }
    const faces = await this.detect(image);
    const face = faces[0];
    if (face === undefined) return null;
    return {
      faces: faces.length,
      yawRad: face.rotation?.angle.yaw ?? null,
      eyeOpenness: eyeOpenness(face.mesh),
      descriptor: face.embedding && face.embedding.length > 0 ? [...face.embedding] : null,
    };
  }

  similarity(a: readonly number[], b: readonly number[]): number {
    if (a.length === 0 || a.length !== b.length) return 0;
    return loadHumanModule().match.similarity([...a], [...b]);
  }
}

const refusedSelfie = (): SelfieCheck => ({ passed: false, problems: ['unreadable_image'], faces: 0, detectionScore: null, realScore: null, liveScore: null, descriptor: null });
