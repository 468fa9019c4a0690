/**
 * Sample faces cut from the images `@vladmandic/human` ships in its npm package (assets/): the sandbox's
 * portraits of two ready-made people (docs/sandbox.md), and the face-check tests' and bench's faces. Read from the
 * installed package, never downloaded, never copied into the repository: test/fixtures/faces/README.md
 * gives each one's origin and why.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import jpeg from 'jpeg-js';

const require = createRequire(import.meta.url);
export const HUMAN_ASSETS_DIR = join(dirname(dirname(require.resolve('@vladmandic/human'))), 'assets');

/** RGBA pixels, row by row (the face checks' `Pixels`). */
export interface Pixels {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array | Uint8ClampedArray;
}

/** A rectangle of one of the package's images: file, left, top, width, height. */
type Cut = readonly [file: string, x: number, y: number, width: number, height: number];

/**
 * The cuts. `authorWebcam`, `authorParty` and `authorPortrait` are the library's author (three photos);
 * `otherPerson` someone else; `twoFaces` two people side by side; `noFace` a ceiling of lamps.
 */
export const SAMPLE_CUTS = {
  authorWebcam: ['screenshot-faceid.jpg', 14, 142, 140, 140],
  authorPortrait: ['screenshot-facematch.jpg', 0, 19, 163, 173],
  authorParty: ['screenshot-facedetect.jpg', 6, 346, 152, 150],
  otherPerson: ['screenshot-facedetect.jpg', 478, 346, 150, 150],
  twoFaces: ['screenshot-facedetect.jpg', 6, 346, 312, 150],
  noFace: ['samples.jpg', 768, 205, 400, 170],
} as const satisfies Record<string, Cut>;

export type SampleName = keyof typeof SAMPLE_CUTS;

export function cutSample(name: SampleName): Pixels {
  const [file, x, y, width, height] = SAMPLE_CUTS[name];
  const source = jpeg.decode(readFileSync(join(HUMAN_ASSETS_DIR, file)), { useTArray: true, formatAsRGBA: true });
  const data = new Uint8Array(width * height * 4);
  for (let row = 0; row < height; row++) {
    const from = ((y + row) * source.width + x) * 4;
    data.set(source.data.subarray(from, from + width * 4), row * width * 4);
  }
  return { width, height, data };
}

export const toJpeg = (image: Pixels, quality = 92): Uint8Array =>
  new Uint8Array(jpeg.encode({ width: image.width, height: image.height, data: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength) }, quality).data);

const jpegs = new Map<SampleName, Buffer>();
/** The cut as a JPEG, made once. */
export function sampleJpeg(name: SampleName): Buffer {
  let bytes = jpegs.get(name);
  if (bytes === undefined) {
    bytes = Buffer.from(toJpeg(cutSample(name)));
    jpegs.set(name, bytes);
  }
  return bytes;
}
