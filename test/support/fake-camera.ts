/**
 * A fake camera for Chromium (`--use-fake-device-for-media-stream --use-file-for-fake-video-capture=<file>`):
 * a `.y4m` video made at test time with Debian's `ffmpeg` from a sample face of `@vladmandic/human`'s own
 * images (test/fixtures/faces/README.md), into a temporary folder. The face turns left and right once
 * over the clip; Chromium loops the file.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HUMAN_ASSETS_DIR, SAMPLE_CUTS, type SampleName } from './sample-faces.js';

const run = promisify(execFile);

export interface FakeCameraOptions {
  /** Which sample face; the genuine webcam face by default. */
  readonly face?: SampleName;
  /** A JPEG shown whole instead of a sample face (a spoof of `test/support/sample-faces.ts` held up to the camera). */
  readonly image?: { readonly jpeg: Uint8Array; readonly width: number; readonly height: number };
  readonly width?: number;
  readonly height?: number;
  readonly seconds?: number;
  readonly fps?: number;
  /** The head turn's largest angle, in radians, either way; 0 for a still face. */
  readonly turn?: number;
}

export interface FakeCamera {
  /** The `.y4m` file, for `--use-file-for-fake-video-capture=`. */
  readonly path: string;
  /** Removes the temporary folder. */
  dispose(): Promise<void>;
}

/**
 * The ffmpeg filter graph that makes the video from the still image (input 0) and a grey background. The
 * head turn wraps the face around a vertical cylinder and turns it by the angle θ(t): the output column at
 * u (-1 to 1 across the face) shows the source column at sin(asin(u) − θ), so the features slide towards
 * one side and the far cheek narrows, as on a turning head. The mesh reads that as yaw.
 */
export function fakeCameraFilter(options: Required<Omit<FakeCameraOptions, 'face' | 'image'>> & { cut: readonly [number, number, number, number] }): string {
  const [x, y, w, h] = options.cut;
  const { width, height, seconds, fps, turn } = options;
  const side = Math.round(height * 0.6);
  const half = side / 2;
  // One full swing (centre, one side, centre, the other side, centre) over the clip.
  const theta = `${turn}*sin(2*PI*T/${seconds})`;
  const u = `clip((X-${half})/${half},-0.999,0.999)`;
  const xs = `${half}+${half}*sin(asin(${u})-${theta})`;
  return [
    `color=c=0x707070:s=${width}x${height}:r=${fps}[bg]`,
    `[0:v]crop=${w}:${h}:${x}:${y},scale=${side}:${side}:flags=lanczos,format=rgb24,geq=r='r(${xs},Y)':g='g(${xs},Y)':b='b(${xs},Y)'[face]`,
    `[bg][face]overlay=x='(W-w)/2':y='(H-h)/2':shortest=1,format=yuv420p[out]`,
  ].join(';');
}

/** Makes the fake camera's video; ffmpeg must be on the PATH (Debian's `ffmpeg` package). */
export async function makeFakeCamera(options: FakeCameraOptions = {}): Promise<FakeCamera> {
  const full = {
    face: options.face ?? 'authorWebcam',
    width: options.width ?? 640,
    height: options.height ?? 480,
    seconds: options.seconds ?? 3,
    fps: options.fps ?? 15,
    turn: options.turn ?? 0.8,
  };
  const dir = await mkdtemp(join(tmpdir(), 'fake-camera-'));
  const path = join(dir, `${full.face}.y4m`);
  let source: string;
  let cut: readonly [number, number, number, number];
  if (options.image === undefined) {
    const [file, ...rest] = SAMPLE_CUTS[full.face];
    source = join(HUMAN_ASSETS_DIR, file);
    cut = rest;
  } else {
    source = join(dir, 'still.jpg');
    await writeFile(source, options.image.jpeg);
    cut = [0, 0, options.image.width, options.image.height];
  }
  await run(
    'ffmpeg',
    [
      '-loglevel',
      'error',
      '-y',
      '-loop',
      '1',
      '-framerate',
      String(full.fps),
      '-i',
      source,
      '-filter_complex',
      fakeCameraFilter({ ...full, cut }),
      '-map',
      '[out]',
      '-t',
      String(full.seconds),
      '-r',
      String(full.fps),
      '-pix_fmt',
      'yuv420p',
      '-f',
      'yuv4mpegpipe',
      path,
    ],
    { timeout: 60_000 },
  );
  await stat(path);
  return { path, dispose: () => rm(dir, { recursive: true, force: true }) };
}

/** One frame of the video at `seconds`, as PNG bytes, read back with ffmpeg. */
export async function extractFrame(video: string, seconds: number): Promise<Uint8Array> {
  const { stdout } = await run('ffmpeg', ['-loglevel', 'error', '-ss', String(seconds), '-i', video, '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', '-'], {
    encoding: 'buffer',
    maxBuffer: 32 * 1024 * 1024,
    timeout: 60_000,
  });
  return new Uint8Array(stdout);
}
