/**
 * Photos of a synthetic identity card, made at test time: a light card with lines of print and a
 * portrait (one of the sample faces), on a darker, textured table, as a phone's rear camera sees it.
 * Each option spoils one thing the document checks look for (src/face-checks/document-measures.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import type { Pixels } from '../../src/face-checks/face-measures.js';
import { blur, cutSample, type SampleName } from './sample-faces.js';

export interface DocumentPhotoOptions {
  readonly width?: number;
  readonly height?: number;
  /** The card's width over the frame's. */
  readonly cardShare?: number;
  /** The card's left edge, as a share of the frame's width; centred when absent (negative: cut off). */
  readonly left?: number;
  /** The portrait printed on it; null for a side without one (a licence's back). */
  readonly face?: SampleName | null;
  /** Share of the card burnt out by a reflection, a patch in its middle. */
  readonly glare?: number;
  /** A box blur of this radius in pixels (an unfocused camera). */
  readonly blurPx?: number;
  /** A seed for the table's texture and the print. */
  readonly seed?: number;
}

const CARD: readonly number[] = [214, 222, 208, 255];
const INK: readonly number[] = [40, 40, 60, 255];

/** A card's photo, as RGBA pixels. */
export function documentPhoto(options: DocumentPhotoOptions = {}): Pixels {
  const { width = 1280, height = 960, cardShare = 0.75, face = 'authorWebcam', glare = 0, blurPx = 0, seed = 1 } = options;
  const cardWidth = Math.round(width * cardShare);
  const cardHeight = Math.round(cardWidth / 1.586);
  const left = options.left === undefined ? Math.round((width - cardWidth) / 2) : Math.round(options.left * width);
  const top = Math.round((height - cardHeight) / 2);
  const data = new Uint8Array(width * height * 4);
  let noise = seed * 2_654_435_761;
  for (let i = 0; i < width * height; i++) {
    noise = (noise * 1_103_515_245 + 12_345) >>> 0;
    const grain = (noise >>> 24) % 25;
    data.set([78 + grain, 62 + grain, 48 + grain, 255], i * 4);
  }
  const inCard = (x: number, y: number) => x >= left && x < left + cardWidth && y >= top && y < top + cardHeight;
  const glareW = Math.round(cardWidth * Math.sqrt(glare));
  const glareH = Math.round(cardHeight * Math.sqrt(glare));
  const glareX = left + Math.round((cardWidth - glareW) / 2);
  const glareY = top + Math.round((cardHeight - glareH) / 2);
  for (let y = Math.max(0, top); y < Math.min(height, top + cardHeight); y++) {
    for (let x = Math.max(0, left); x < Math.min(width, left + cardWidth); x++) {
      const cx = x - left;
      const cy = y - top;
      const ink = cx > cardWidth * 0.38 && cx < cardWidth * 0.95 && cy > cardHeight * 0.15 && cy % 28 < 5 && (cx * 7 + cy + seed) % 23 < 15;
      data.set(ink ? INK : CARD, (y * width + x) * 4);
    }
  }
  if (face !== null) {
    const portrait = cutSample(face);
    const side = Math.round(cardHeight * 0.55);
    const px = left + Math.round(cardWidth * 0.05);
    const py = top + Math.round(cardHeight * 0.22);
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        if (!inCard(px + x, py + y) || px + x < 0 || px + x >= width) continue;
        const from = (Math.floor((y * portrait.height) / side) * portrait.width + Math.floor((x * portrait.width) / side)) * 4;
        data.set(portrait.data.subarray(from, from + 4), ((py + y) * width + px + x) * 4);
      }
    }
  }
  for (let y = glareY; y < glareY + glareH; y++)
    for (let x = glareX; x < glareX + glareW; x++) if (x >= 0 && x < width) data.fill(255, (y * width + x) * 4, (y * width + x) * 4 + 4);
  const photo = { width, height, data };
  return blurPx > 0 ? blur(photo, blurPx) : photo;
}

/** The card's true box in the photo, for comparing with what was measured. */
export function cardBox(options: DocumentPhotoOptions = {}): [number, number, number, number] {
  const { width = 1280, height = 960, cardShare = 0.75 } = options;
  const cardWidth = Math.round(width * cardShare);
  const cardHeight = Math.round(cardWidth / 1.586);
  const left = options.left === undefined ? Math.round((width - cardWidth) / 2) : Math.round(options.left * width);
  return [left, Math.round((height - cardHeight) / 2), cardWidth, cardHeight];
}

/**
 * A fake rear camera holding the card still: the photo as a PNG (pngjs), looped by ffmpeg (Debian's
 * `ffmpeg` package) into a `.y4m` for Chromium's `--use-file-for-fake-video-capture=`.
 */
export async function makeFakeDocumentCamera(options: DocumentPhotoOptions = {}): Promise<{ readonly path: string; dispose(): Promise<void> }> {
  const photo = documentPhoto(options);
  const png = new PNG({ width: photo.width, height: photo.height });
  png.data = Buffer.from(photo.data);
  const dir = await mkdtemp(join(tmpdir(), 'fake-document-camera-'));
  await writeFile(join(dir, 'card.png'), PNG.sync.write(png));
  const path = join(dir, 'card.y4m');
  const args = [
    '-loglevel',
    'error',
    '-y',
    '-loop',
    '1',
    '-framerate',
    '10',
    '-i',
    join(dir, 'card.png'),
    '-t',
    '2',
    '-r',
    '10',
    '-pix_fmt',
    'yuv420p',
    '-f',
    'yuv4mpegpipe',
    path,
  ];
  await promisify(execFile)('ffmpeg', args, { timeout: 60_000 });
  await stat(path);
  return { path, dispose: () => rm(dir, { recursive: true, force: true }) };
}
