/**
 * The measures both sides take of a face: the server on an uploaded image, the hosted page on each camera
 * frame. Pure functions over pixels and the library's face mesh, with no Node or browser API, so that the
 * page and the server judge a face by the same numbers and the same limits.
 */
import type { FramePose, SelfieProblem } from './face-checks.port.js';

/** RGBA pixels, four bytes a pixel, row by row (what jpeg-js, pngjs and a canvas's ImageData give). */
export interface Pixels {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array | Uint8ClampedArray;
}

/** A rectangle in pixels: left, top, width, height (the library's `box`). */
export type Box = readonly [number, number, number, number];

/**
 * The limits a selfie must meet. They were set on the sample faces cut from `@vladmandic/human`'s own
 * images (test/fixtures/faces/README.md), genuine and transformed, measured on the server's path; the
 * figures in the comments are those measures, and the face-checks tests hold the limits to them.
 */
export const SELFIE_LIMITS = {
  /** The face's width over the image's shorter side: the samples 0.36 to 1; a phone at arm's length gives 0.35 to 0.7. */
  minFaceShare: 0.25,
  /** And at least this many pixels wide: under it the mesh and the description (read at 224 pixels) degrade. */
  minFaceWidthPx: 96,
  /** The face's centre at most this share of the width (and of the height) from the image's centre: samples 0.03 or less. */
  maxCentreOffset: 0.2,
  /** Mean luma (0 to 255) over the face: genuine samples 115 to 125; darkened to 0.35 and 0.2 of their light, 43 and 24. */
  minFaceLuma: 60,
  /** Variance of the Laplacian of the face at 128 pixels and mean luma 128: genuine samples 78 to 443, a 2-pixel blur 12. */
  minFaceSharpness: 40,
  /** The lids' gap over the eye's height, the ratio the library's own `blink` gesture reads below 0.2: open eyes 0.31 to 0.44. */
  minEyeOpenness: 0.2,
  /**
   * The anti-spoofing model's score: genuine samples 0.44 to 0.84, but a photo of a screen showing a sample
   * also 0.76, so this refuses only what the model is sure of; see the docs on what it does not stop.
   */
  minRealScore: 0.3,
  /** The liveness model's score: genuine samples 0.93 to 1, darkened ones 0.7. */
  minLiveScore: 0.5,
} as const;

const luma = (data: Pixels['data'], i: number): number => 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];

/** The box clipped to the image, in whole pixels. */
function clip(image: Pixels, box: Box): [number, number, number, number] {
  const x0 = Math.max(0, Math.floor(box[0]));
  const y0 = Math.max(0, Math.floor(box[1]));
  const x1 = Math.min(image.width, Math.ceil(box[0] + box[2]));
  const y1 = Math.min(image.height, Math.ceil(box[1] + box[3]));
  return [x0, y0, Math.max(0, x1 - x0), Math.max(0, y1 - y0)];
}

/** Mean luma over the box, 0 to 255. */
export function meanLuma(image: Pixels, box: Box = [0, 0, image.width, image.height]): number {
  const [x0, y0, w, h] = clip(image, box);
  if (w === 0 || h === 0) return 0;
  let sum = 0;
  for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) sum += luma(image.data, (y * image.width + x) * 4);
  return sum / (w * h);
}

/** Luma of the box, averaged down (or sampled up) to `side` by `side`, so a measure does not depend on the photo's size. */
function lumaGrid(image: Pixels, box: Box, side: number): Float32Array {
  const [x0, y0, w, h] = clip(image, box);
  const grid = new Float32Array(side * side);
  if (w === 0 || h === 0) return grid;
  for (let gy = 0; gy < side; gy++) {
    const ya = y0 + Math.floor((gy * h) / side);
    const yb = Math.max(ya + 1, y0 + Math.floor(((gy + 1) * h) / side));
    for (let gx = 0; gx < side; gx++) {
      const xa = x0 + Math.floor((gx * w) / side);
      const xb = Math.max(xa + 1, x0 + Math.floor(((gx + 1) * w) / side));
      let sum = 0;
      for (let y = ya; y < yb; y++) for (let x = xa; x < xb; x++) sum += luma(image.data, (y * image.width + x) * 4);
      grid[gy * side + gx] = sum / ((yb - ya) * (xb - xa));
    }
  }
  return grid;
}

/** Variance of the 4-neighbour Laplacian over the box scaled to `side` pixels and to a mean luma of 128: high when edges are crisp. */
export function sharpness(image: Pixels, box: Box = [0, 0, image.width, image.height], side = 128): number {
  const g = lumaGrid(image, box, side);
  // Scaled to a mean luma of 128 first, so that a dim face is not also read as a blurred one.
  const mean = g.reduce((a, b) => a + b, 0) / g.length;
  if (mean > 0) for (let i = 0; i < g.length; i++) g[i] = (g[i] * 128) / mean;
  let sum = 0;
  let sumSq = 0;
  let n = 0;
  for (let y = 1; y < side - 1; y++) {
    for (let x = 1; x < side - 1; x++) {
      const i = y * side + x;
      const lap = g[i - 1] + g[i + 1] + g[i - side] + g[i + side] - 4 * g[i];
      sum += lap;
      sumSq += lap * lap;
      n++;
    }
  }
  return n === 0 ? 0 : sumSq / n - (sum / n) ** 2;
}

/** Share of the box's pixels whose three channels are all 250 or more. */
export function glareShare(image: Pixels, box: Box = [0, 0, image.width, image.height]): number {
  const [x0, y0, w, h] = clip(image, box);
  if (w === 0 || h === 0) return 0;
  let burnt = 0;
  const { data } = image;
  for (let y = y0; y < y0 + h; y++) {
    for (let x = x0; x < x0 + w; x++) {
      const i = (y * image.width + x) * 4;
      if (data[i] >= 250 && data[i + 1] >= 250 && data[i + 2] >= 250) burnt++;
    }
  }
  return burnt / (w * h);
}

type Point = readonly (number | undefined)[];

/**
 * How open the less open eye is: the gap between the lids over the eye's height, from the mesh's
 * landmarks (374/386 and 443/450 left, 145/159 and 223/230 right), the same ratio the library's
 * `blink` gesture reads. Null without a full mesh.
 */
export function eyeOpenness(mesh: readonly Point[]): number | null {
  if (mesh.length < 468) return null;
  const y = (i: number): number => mesh[i][1]!;
  const ratio = (lidA: number, lidB: number, rimA: number, rimB: number): number => Math.abs(y(lidA) - y(lidB)) / Math.max(1e-6, Math.abs(y(rimA) - y(rimB)));
  return Math.min(ratio(374, 386, 443, 450), ratio(145, 159, 223, 230));
}

/** Head yaw from the mesh, the library's own measure: the eyes' outer corners' depth difference over their distance. */
export function headYaw(mesh: readonly Point[]): number | null {
  if (mesh.length < 468) return null;
  const dx = mesh[33][0]! - mesh[263][0]!;
  return dx === 0 ? null : ((mesh[33][2] ?? 0) - (mesh[263][2] ?? 0)) / dx;
}

/** How far the box's centre lies from the image's centre, as the larger share of width or height. */
export function centreOffset(box: Box, width: number, height: number): number {
  return Math.max(Math.abs((box[0] + box[2] / 2) / width - 0.5), Math.abs((box[1] + box[3] / 2) / height - 0.5));
}

/** What the checks measured of the largest face of one image or frame. */
export interface FaceMeasures {
  readonly faces: number;
  readonly faceShare: number;
  readonly faceWidthPx: number;
  readonly centreOffset: number;
  readonly luma: number;
  readonly sharpness: number;
  readonly eyeOpenness: number | null;
  readonly realScore: number | null;
  readonly liveScore: number | null;
}

/** Measures the face in `box` (the largest found) of `image`. */
export function measureFace(image: Pixels, faces: number, box: Box, mesh: readonly Point[], realScore: number | null, liveScore: number | null): FaceMeasures {
  return {
    faces,
    faceShare: box[2] / Math.min(image.width, image.height),
    faceWidthPx: box[2],
    centreOffset: centreOffset(box, image.width, image.height),
    luma: meanLuma(image, box),
    sharpness: sharpness(image, box),
    eyeOpenness: eyeOpenness(mesh),
    realScore,
    liveScore,
  };
}

/** The problems of a selfie from its measures, in the order a person should fix them. */
export function selfieProblems(m: FaceMeasures, limits: typeof SELFIE_LIMITS = SELFIE_LIMITS): SelfieProblem[] {
  if (m.faces === 0) return ['no_face'];
  const problems: SelfieProblem[] = [];
  if (m.faces > 1) problems.push('several_faces');
  if (m.faceShare < limits.minFaceShare || m.faceWidthPx < limits.minFaceWidthPx) problems.push('face_too_small');
  if (m.centreOffset > limits.maxCentreOffset) problems.push('face_off_centre');
  if (m.luma < limits.minFaceLuma) problems.push('too_dark');
  if (m.sharpness < limits.minFaceSharpness) problems.push('blurred');
  if (m.eyeOpenness !== null && m.eyeOpenness < limits.minEyeOpenness) problems.push('eyes_closed');
  if (m.realScore === null || m.realScore < limits.minRealScore) problems.push('spoof_suspected');
  if (m.liveScore === null || m.liveScore < limits.minLiveScore) problems.push('not_live');
  return problems;
}

/**
 * The active liveness step: a head turn or a blink across the frames of a few seconds. Measured on the
 * fake camera's videos (test/support/fake-camera.ts): a still face's yaw spans 0.03 radians or less, the
 * same face turned by the cylinder warp 0.33; open eyes read 0.34 to 0.43.
 */
export const LIVENESS_LIMITS = {
  /** The span of the head's yaw (the library's `rotation.angle.yaw`, radians) across the frames: about 14 degrees. */
  minYawSpanRad: 0.25,
  /** A blink: a frame with the eyes under this openness, between frames above `openEyeOpenness`. */
  closedEyeOpenness: 0.2,
  openEyeOpenness: 0.28,
  /**
   * The server counts a frame only when its face's description is this alike to the selfie's (`similarity`,
   * 0 to 1): the turning fake camera's frames read 0.74 to 1 against a selfie from the same clip; another
   * person's turning frames 0.12 to 0.24, and the same person's from another photo 0.42 to 0.46.
   */
  minSelfieSimilarity: 0.5,
} as const;

export type { FramePose };

export type LivenessStep = 'head_turn' | 'blink';

/** Which active step the frames show, if any. Frames without a face count as neither. */
export function livenessStep(frames: readonly FramePose[], limits: Readonly<Record<keyof typeof LIVENESS_LIMITS, number>> = LIVENESS_LIMITS): LivenessStep | null {
  const yaws = frames.map((frame) => frame.yawRad).filter((yaw): yaw is number => yaw !== null);
  if (yaws.length >= 2 && Math.max(...yaws) - Math.min(...yaws) >= limits.minYawSpanRad) return 'head_turn';
  let openBefore = false;
  let closed = false;
  for (const { eyeOpenness } of frames) {
    if (eyeOpenness === null) continue;
    if (eyeOpenness >= limits.openEyeOpenness) {
      if (openBefore && closed) return 'blink';
      openBefore = true;
      closed = false;
    } else if (eyeOpenness < limits.closedEyeOpenness && openBefore) closed = true;
  }
  return null;
}
