/**
 * The sample faces (src/scopes/sandbox-faces.ts) and the documented transforms the face-check tests
 * make of them: darker, blurred, re-photographed. test/fixtures/faces/README.md gives their origin.
 */
import type { Pixels } from '../../src/face-checks/face-measures.js';
import { cutSample, toJpeg } from '../../src/scopes/sandbox-faces.js';

export { cutSample, HUMAN_ASSETS_DIR, SAMPLE_CUTS, type SampleName, toJpeg } from '../../src/scopes/sandbox-faces.js';

/** Every channel times `factor` (0.2: a face in a dim room). */
export function darken(image: Pixels, factor: number): Pixels {
  const data = Uint8Array.from(image.data, (v, i) => (i % 4 === 3 ? v : Math.round(v * factor)));
  return { ...image, data };
}

/** A box blur of `radius` pixels, `passes` times (three passes approach a Gaussian blur: an unfocused camera). */
export function blur(image: Pixels, radius: number, passes = 3): Pixels {
  let data = Uint8Array.from(image.data);
  const { width, height } = image;
  for (let pass = 0; pass < passes; pass++) {
    for (const [dx, dy] of [
      [1, 0],
      [0, 1],
    ] as const) {
      const out = new Uint8Array(data.length);
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          for (let c = 0; c < 4; c++) {
            let sum = 0;
            let n = 0;
            for (let k = -radius; k <= radius; k++) {
              const sx = x + k * dx;
              const sy = y + k * dy;
              if (sx < 0 || sy < 0 || sx >= width || sy >= height) continue;
              sum += data[(sy * width + sx) * 4 + c]!;
              n++;
            }
            out[(y * width + x) * 4 + c] = Math.round(sum / n);
          }
        }
      }
      data = out;
    }
  }
  return { width, height, data };
}

/**
 * A photo of a screen showing the face, as an attacker holds a phone up to the camera: the face shown at
 * `scale` inside a dark bezel on a grey background, with the screen's pixel grid (a fine moiré of rows),
 * washed-out contrast and a reflection across one corner.
 */
export function photoOfScreen(image: Pixels, scale = 0.8): Pixels {
  const { width, height } = image;
  const data = new Uint8Array(width * height * 4);
  const sw = Math.round(width * scale);
  const sh = Math.round(height * scale);
  const left = Math.round((width - sw) / 2);
  const top = Math.round((height - sh) / 2);
  const bezel = Math.max(3, Math.round(width * 0.04));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      data[o + 3] = 255;
      const inScreen = x >= left && x < left + sw && y >= top && y < top + sh;
      const inBezel = x >= left - bezel && x < left + sw + bezel && y >= top - bezel && y < top + sh + bezel;
      if (!inBezel) {
        data.fill(128, o, o + 3);
        continue;
      }
      if (!inScreen) {
        data.fill(18, o, o + 3);
        continue;
      }
      const s = (Math.floor(((y - top) * height) / sh) * width + Math.floor(((x - left) * width) / sw)) * 4;
      const grid = 0.93 + 0.07 * Math.sin((y * Math.PI) / 2);
      const glare = Math.max(0, 1 - Math.hypot(x - left, y - top) / (0.6 * sw)) * 90;
      for (let c = 0; c < 3; c++) data[o + c] = Math.min(255, Math.round((40 + image.data[s + c]! * 0.7) * grid + glare));
    }
  }
  return { width, height, data };
}

/**
 * A printed photo held up to the camera: colours half washed to grey, contrast squeezed into the paper's
 * range (70 to 223), and a fixed grain of plus or minus 8. Encode it at a low JPEG quality (40).
 */
export function printedPhoto(image: Pixels): Pixels {
  const data = Uint8Array.from(image.data, (v, i) => {
    if (i % 4 === 3) return v;
    const o = i - (i % 4);
    const grey = 0.3 * image.data[o]! + 0.59 * image.data[o + 1]! + 0.11 * image.data[o + 2]!;
    const grain = (((i * 2654435761) >>> 0) % 17) - 8;
    return Math.max(0, Math.min(255, Math.round(70 + (0.5 * v + 0.5 * grey) * 0.6 + grain)));
  });
  return { ...image, data };
}

/** The spoofs the tests use: a sample face re-photographed from a screen, and from a print. */
export const spoofs = {
  screen: (): Uint8Array => toJpeg(photoOfScreen(pad(cutSample('authorWebcam'), 0.3), 0.85)),
  print: (): Uint8Array => toJpeg(printedPhoto(pad(cutSample('authorWebcam'), 0.2)), 40),
};

/** Pads the image with a grey border of `share` of its size on every side (the face then looks smaller). */
export function pad(image: Pixels, share: number): Pixels {
  const px = Math.round(image.width * share);
  const py = Math.round(image.height * share);
  const width = image.width + 2 * px;
  const height = image.height + 2 * py;
  const data = new Uint8Array(width * height * 4).fill(128);
  for (let y = 0; y < image.height; y++) data.set(image.data.subarray(y * image.width * 4, (y + 1) * image.width * 4), ((y + py) * width + px) * 4);
  return { width, height, data };
}
