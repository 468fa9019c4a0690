/**
 * The camera guide of the hosted page: watches the selfie camera's <video> with `@vladmandic/human` and
 * reports, frame by frame, what the person must fix (one face, centred, near enough, lit, sharp, eyes
 * open), the models' real and live scores, and the active liveness step (a head turn or a blink across
 * frames). The measures and limits are the server's own (src/face-checks/face-measures.ts): the server
 * runs them again on what it receives and never takes this guide's word.
 *
 * The models come from the service (`modelsBaseUrl`, /verify/models/<version>/), step by step: the face
 * detector and mesh first (1.9 MB) so the guide starts at once, the anti-spoofing and liveness models
 * (1.4 MB) once a face is seen. The face description and iris models are not loaded here: the server
 * computes the description, and the eyes are read from the mesh.
 */
import type { Config, FaceResult, Human } from '@vladmandic/human';
import type { SelfieProblem } from '../../../src/face-checks/face-checks.port.js';
import {
  type FramePose,
  LIVENESS_LIMITS,
  type LivenessStep,
  livenessStep,
  measureFace,
  type Pixels,
  selfieProblems,
  SELFIE_LIMITS,
} from '../../../src/face-checks/face-measures.js';

export interface FrameReport {
  readonly faces: number;
  readonly centred: boolean;
  readonly largeEnough: boolean;
  readonly lit: boolean;
  readonly sharp: boolean;
  readonly eyesOpen: boolean;
  /** Null until the anti-spoofing and liveness models are loaded, or without a face. */
  readonly realScore: number | null;
  readonly liveScore: number | null;
  /** The head's yaw in radians, for a prompt ("turn your head slowly"). */
  readonly yawRad: number | null;
  /** The active step seen so far in this guide's life: stays once seen. */
  readonly liveness: LivenessStep | null;
  /** What to fix, in the order to fix it; empty when the frame would pass. */
  readonly problems: readonly SelfieProblem[];
  /** True when the frame would pass, the scores are in and the liveness step was made: the moment to capture. */
  readonly ready: boolean;
}

export interface FaceGuideOptions {
  /** Called after each frame is looked at. */
  readonly onFrame: (report: FrameReport) => void;
  /** Frames looked at per second, at most: each costs 30 to 100 ms on a phone. */
  readonly framesPerSecond?: number;
  /** How long a liveness step may take: poses older than this are forgotten. */
  readonly livenessWindowMs?: number;
  /** tfjs's backend; by default `preferredBackend()` (wasm's binaries are beside the models). */
  readonly backend?: 'webgl' | 'wasm';
}

export interface FaceGuide {
  /** The tfjs backend the guide runs on. */
  readonly backend: 'webgl' | 'wasm';
  /** Stops watching; the models stay loaded for the page's life. */
  stop(): void;
  /** The latest frame as a JPEG if it would pass, else the camera's current one, for the upload the server checks. */
  capture(quality?: number): Promise<Blob>;
  /**
   * JPEGs of the frames that show the liveness step, in the order seen, for the server to judge again with the
   * same measures: the head turn's two extremes (the widest the guide has seen, until now), or the blink's
   * open, closed and open frames. Empty until the step was seen.
   */
  livenessFrames(): Promise<Blob[]>;
}

/** Pixels of a frame are measured at this width: enough for luma and sharpness, cheap on a phone. */
const MEASURE_WIDTH_PX = 320;
/**
 * The liveness frames are sent at this longer side at most: the server's detector reads 256 pixels and its
 * description 224 of the face, and a few such JPEGs (30 to 60 kB each) stay far under the request's 2 MiB
 * beside the selfie, where a phone's full frames would not.
 */
const FRAME_SIDE_PX = 640;

/**
 * The guide asks for a little more than the server's floors: the server measures the JPEGs again, and a
 * step seen just at a floor could read just under it there.
 */
const GUIDE_LIVENESS_LIMITS = {
  ...LIVENESS_LIMITS,
  minYawSpanRad: LIVENESS_LIMITS.minYawSpanRad + 0.03,
  closedEyeOpenness: LIVENESS_LIMITS.closedEyeOpenness - 0.02,
  openEyeOpenness: LIVENESS_LIMITS.openEyeOpenness + 0.02,
};

type Pose = FramePose & { readonly atMs: number; snapshot: HTMLCanvasElement | null };

/**
 * The poses whose frames can still show the step in the window: the yaw's two extremes and the blink's
 * open frame and the closed one after it (the frame that ends a blink is the newest). The same reading as
 * `livenessStep`, so the frames kept are those it saw the step in.
 */
function posesNeeded(poses: readonly Pose[]): { low: Pose | null; high: Pose | null; open: Pose | null; closed: Pose | null } {
  let low: Pose | null = null;
  let high: Pose | null = null;
  let open: Pose | null = null;
  let closed: Pose | null = null;
  for (const pose of poses) {
    if (pose.yawRad !== null) {
      if (low === null || pose.yawRad < low.yawRad!) low = pose;
      if (high === null || pose.yawRad > high.yawRad!) high = pose;
    }
    if (pose.eyeOpenness === null) continue;
    if (pose.eyeOpenness >= GUIDE_LIVENESS_LIMITS.openEyeOpenness) {
      if (closed === null) open = pose;
    } else if (pose.eyeOpenness < GUIDE_LIVENESS_LIMITS.closedEyeOpenness && open !== null && closed === null) closed = pose;
  }
  return { low, high, open, closed };
}

function humanConfig(modelsBaseUrl: string, backend: 'webgl' | 'wasm'): Partial<Config> {
  return {
    backend,
    modelBasePath: modelsBaseUrl,
    wasmPath: modelsBaseUrl,
    cacheModels: true,
    debug: false,
    warmup: 'none',
    filter: { enabled: true, flip: false, equalization: false },
    gesture: { enabled: false },
    body: { enabled: false },
    hand: { enabled: false },
    object: { enabled: false },
    segmentation: { enabled: false },
    face: {
      enabled: true,
      detector: { modelPath: 'blazeface.json', rotation: false, maxDetected: 3, minConfidence: 0.5, return: false },
      mesh: { enabled: true, modelPath: 'facemesh.json' },
      attention: { enabled: false },
      iris: { enabled: false },
      description: { enabled: false },
      emotion: { enabled: false },
      antispoof: { enabled: false, modelPath: 'antispoof.json' },
      liveness: { enabled: false, modelPath: 'liveness.json' },
      gear: { enabled: false },
    },
  };
}

/**
 * WebGL when the browser has it on a real GPU, else wasm. A software renderer (SwiftShader, llvmpipe: a
 * GPU on a blocklist, a virtual machine, headless Chromium) runs tfjs's shaders on the CPU, and there the
 * wasm backend is several times faster (in headless Chromium on a 2-core server: the guide ready and the
 * head turn seen in 2 s on wasm, 8 s on SwiftShader's WebGL).
 */
export function preferredBackend(): 'webgl' | 'wasm' {
  try {
    const gl = document.createElement('canvas').getContext('webgl2');
    if (gl === null) return 'wasm';
    const info = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(gl.getParameter(info === null ? gl.RENDERER : info.UNMASKED_RENDERER_WEBGL));
    return /swiftshader|llvmpipe|softpipe|software|basic render/i.test(renderer) ? 'wasm' : 'webgl';
  } catch {
    return 'wasm';
  }
}

/** Starts watching `video` (already playing the camera). Resolves once the detector is loaded. */
export async function startFaceGuide(video: HTMLVideoElement, modelsBaseUrl: string, options: FaceGuideOptions): Promise<FaceGuide> {
  const base = modelsBaseUrl.endsWith('/') ? modelsBaseUrl : `${modelsBaseUrl}/`;
  const { Human: HumanClass } = await import('@vladmandic/human');
  const backend = options.backend ?? preferredBackend();
  const human: Human = new HumanClass(humanConfig(base, backend));
  await human.load();
  let scoresLoading: Promise<void> | undefined;
  let scoresLoaded = false;
  const loadScores = (): void => {
    scoresLoading ??= human.load({ face: { antispoof: { enabled: true }, liveness: { enabled: true } } }).then(() => {
      human.config.face.antispoof!.enabled = true;
      human.config.face.liveness!.enabled = true;
      scoresLoaded = true;
    });
  };

  const canvas = document.createElement('canvas');
  const context = canvas.getContext('2d', { willReadFrequently: true })!;
  const windowMs = options.livenessWindowMs ?? 6_000;
  let poses: Pose[] = [];
  let seen: LivenessStep | null = null;
  // The poses whose frames go to the server once the step is seen, in the order seen.
  let step: Pose[] = [];
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  // A frame kept is drawn on a canvas of its own and encoded only if it is sent; canvases are reused.
  const spare: HTMLCanvasElement[] = [];
  const snapshot = (): HTMLCanvasElement => {
    const kept = spare.pop() ?? document.createElement('canvas');
    kept.width = video.videoWidth;
    kept.height = video.videoHeight;
    kept.getContext('2d')!.drawImage(video, 0, 0);
    return kept;
  };
  /** A JPEG of the frame, its longer side `side` pixels at most. */
  const encode = (frame: HTMLCanvasElement, quality: number, side = Infinity): Promise<Blob> => {
    const scale = Math.min(1, side / Math.max(frame.width, frame.height));
    const out = document.createElement('canvas');
    out.width = Math.round(frame.width * scale);
    out.height = Math.round(frame.height * scale);
    out.getContext('2d')!.drawImage(frame, 0, 0, out.width, out.height);
    return new Promise((resolve, reject) => out.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('no frame'))), 'image/jpeg', quality));
  };
  // The latest frame, when it would pass: the photo taken is then the frame the guide judged good.
  const goodCanvas = document.createElement('canvas');
  let good = false;
  const release = (pose: Pose): void => {
    if (pose.snapshot !== null && !step.includes(pose)) spare.push(pose.snapshot);
    pose.snapshot = null;
  };

  /** Records the frame's pose, keeping its picture only while it may be needed to show the step. */
  const track = (pose: Pose): void => {
    if (seen === null) {
      poses.push(pose);
      while (poses.length > 0 && pose.atMs - poses[0].atMs > windowMs) release(poses.shift()!);
      // Only the poses that can still show the step stay, with their pictures: the step is judged on what can be sent.
      const needed = posesNeeded(poses);
      const keep = new Set([pose, needed.low, needed.high, needed.open, needed.closed]);
      for (const old of poses.filter((candidate) => !keep.has(candidate))) release(old);
      poses = poses.filter((candidate) => keep.has(candidate));
      seen = livenessStep(poses, GUIDE_LIVENESS_LIMITS);
      if (seen === 'head_turn') step = [needed.low!, needed.high!].sort((a, b) => a.atMs - b.atMs);
      else if (seen === 'blink') step = [needed.open!, needed.closed!, pose];
      if (seen !== null) for (const old of poses) if (!step.includes(old)) release(old);
      return;
    }
    // Once the turn is seen, a wider one replaces its end: the server measures again, and a margin helps.
    // Any other picture goes back to be drawn on again.
    const [first, second] = step;
    const low = first.yawRad! <= second.yawRad! ? 0 : 1;
    const at = seen !== 'head_turn' || pose.yawRad === null ? -1 : pose.yawRad < step[low].yawRad! ? low : pose.yawRad > step[1 - low].yawRad! ? 1 - low : -1;
    if (at < 0) {
      if (pose.snapshot !== null) spare.push(pose.snapshot);
      return;
    }
    const replaced = step[at];
    step = step.map((kept, index) => (index === at ? pose : kept)).sort((a, b) => a.atMs - b.atMs);
    if (replaced.snapshot !== null) spare.push(replaced.snapshot);
  };

  const grab = (quality: number): Promise<Blob> => {
    const full = document.createElement('canvas');
    full.width = video.videoWidth;
    full.height = video.videoHeight;
    full.getContext('2d')!.drawImage(video, 0, 0);
    return new Promise((resolve, reject) => full.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('no frame'))), 'image/jpeg', quality));
  };

  /** The frame's pixels at the measuring width, and that width over the frame's. */
  const pixels = (frame: HTMLCanvasElement): { image: Pixels; scale: number } => {
    const scale = Math.min(1, MEASURE_WIDTH_PX / frame.width);
    canvas.width = Math.round(frame.width * scale);
    canvas.height = Math.round(frame.height * scale);
    context.drawImage(frame, 0, 0, canvas.width, canvas.height);
    return { image: context.getImageData(0, 0, canvas.width, canvas.height), scale };
  };

  const look = async (): Promise<void> => {
    if (video.readyState < 2 || video.videoWidth === 0) return;
    // The frame is drawn once, and detection, the measures and the JPEGs the server gets all read that
    // drawing: what is sent is exactly what was measured (the video moves on during detection).
    const picture = snapshot();
    const toCamera = video.videoWidth / picture.width;
    const result = await human.detect(picture);
    const faces = [...result.face].sort((a: FaceResult, b: FaceResult) => b.box[2] * b.box[3] - a.box[2] * a.box[3]);
    const face = faces[0];
    const now = performance.now();
    if (face === undefined) {
      spare.push(picture);
      good = false;
      options.onFrame({
        faces: 0,
        centred: false,
        largeEnough: false,
        lit: false,
        sharp: false,
        eyesOpen: false,
        realScore: null,
        liveScore: null,
        yawRad: null,
        liveness: seen,
        problems: ['no_face'],
        ready: false,
      });
      return;
    }
    loadScores();
    const { image, scale } = pixels(picture);
    const box = [face.box[0] * scale, face.box[1] * scale, face.box[2] * scale, face.box[3] * scale] as const;
    // The face's width in pixels is the camera's, not the measuring canvas's.
    const measures = { ...measureFace(image, faces.length, box, face.mesh, face.real ?? null, face.live ?? null), faceWidthPx: face.box[2] * toCamera };
    const problems = selfieProblems(measures).filter((problem) => scoresLoaded || (problem !== 'spoof_suspected' && problem !== 'not_live'));
    const yawRad = face.rotation?.angle.yaw ?? null;

    good = problems.length === 0 && scoresLoaded;
    if (good) {
      goodCanvas.width = picture.width;
      goodCanvas.height = picture.height;
      goodCanvas.getContext('2d')!.drawImage(picture, 0, 0);
    }
    track({ atMs: now, yawRad, eyeOpenness: measures.eyeOpenness, snapshot: picture });
    options.onFrame({
      faces: faces.length,
      centred: measures.centreOffset <= SELFIE_LIMITS.maxCentreOffset,
      largeEnough: measures.faceShare >= SELFIE_LIMITS.minFaceShare && measures.faceWidthPx >= SELFIE_LIMITS.minFaceWidthPx,
      lit: measures.luma >= SELFIE_LIMITS.minFaceLuma,
      sharp: measures.sharpness >= SELFIE_LIMITS.minFaceSharpness,
      eyesOpen: measures.eyeOpenness === null || measures.eyeOpenness >= SELFIE_LIMITS.minEyeOpenness,
      realScore: scoresLoaded ? (face.real ?? null) : null,
      liveScore: scoresLoaded ? (face.live ?? null) : null,
      yawRad,
      liveness: seen,
      problems,
      ready: problems.length === 0 && scoresLoaded && seen !== null,
    });
  };

  const frameMs = 1_000 / (options.framesPerSecond ?? 8);
  const loop = async (): Promise<void> => {
    if (stopped) return;
    const started = performance.now();
    try {
      await look();
    } catch (error) {
      // One bad frame (the camera switching, a lost WebGL context) is not the end of the guide.
      console.warn('face guide: frame skipped', error instanceof Error ? error.message : error);
    }
    if (!stopped) timer = setTimeout(() => void loop(), Math.max(0, frameMs - (performance.now() - started)));
  };
  void loop();

  return {
    backend,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
    capture: (quality = 0.9) => (good ? encode(goodCanvas, quality) : grab(quality)),
    livenessFrames: () => Promise.all(step.map((pose) => encode(pose.snapshot!, 0.85, FRAME_SIDE_PX))),
  };
}
