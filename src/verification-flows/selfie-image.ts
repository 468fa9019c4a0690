import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { sniffImage } from '../portraits/portraits.service.js';

/** The largest selfie taken, as sent and as re-encoded (face_match takes at most 1 MiB). */
export const MAX_SELFIE_BYTES = 1024 * 1024;
/** Pixels a selfie may decode to: a phone camera's 12 MP, no more (bounds memory and CPU). */
export const MAX_SELFIE_MEGAPIXELS = 12;
const JPEG_QUALITY = 85;

export type SelfieImageProblem = 'unreadable_image' | 'too_large';

/** The limits of one kind of image the page sends (a selfie, a document's side): bytes as sent and as kept, and pixels. */
export interface ImageLimits {
  readonly maxBytes: number;
  readonly maxMegapixels: number;
}
export const SELFIE_IMAGE: ImageLimits = { maxBytes: MAX_SELFIE_BYTES, maxMegapixels: MAX_SELFIE_MEGAPIXELS };
/** A side of a document: the same bounds as a selfie (a phone's 12 MP photo of a card re-encodes to well under 1 MiB). */
export const DOCUMENT_IMAGE: ImageLimits = SELFIE_IMAGE;

/** The selfie as the service keeps it (`reencodeImage`). */
export const reencodeSelfie = (bytes: Buffer) => reencodeImage(bytes, SELFIE_IMAGE);

/**
 * An image as the service keeps it: its bytes sniffed (never the declared type), decoded with
 * jpeg-js or pngjs, and encoded again as a baseline JPEG. Nothing of the sender's file survives
 * but its pixels: no EXIF (location, device, time), no comments, no trailing data.
 */
export function reencodeImage(bytes: Buffer, limits: ImageLimits): { readonly jpeg: Buffer } | { readonly problem: SelfieImageProblem } {
  if (bytes.length > limits.maxBytes) return { problem: 'too_large' };
  const type = sniffImage(bytes);
  let pixels: { width: number; height: number; data: Uint8Array };
  try {
    if (type === 'image/jpeg') {
      pixels = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxResolutionInMP: limits.maxMegapixels, maxMemoryUsageInMB: 128 });
    } else if (type === 'image/png') {
      const png = PNG.sync.read(bytes);
      if (png.width * png.height > limits.maxMegapixels * 1_000_000) return { problem: 'too_large' };
      pixels = png;
    } else {
      return { problem: 'unreadable_image' };
    }
  } catch {
    return { problem: 'unreadable_image' };
  }
  if (pixels.width < 1 || pixels.height < 1) return { problem: 'unreadable_image' };
  const encoded = jpeg.encode({ width: pixels.width, height: pixels.height, data: pixels.data }, JPEG_QUALITY).data;
  return encoded.length > limits.maxBytes ? { problem: 'too_large' } : { jpeg: encoded };
}
