import { describe, expect, it } from '@jest/globals';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { reencodeSelfie } from './selfie-image.js';

/** A small JPEG with an EXIF segment (APP1) carrying a marker text, as a phone's file would. */
function jpegWithExif(marker: string): Buffer {
  const data = Buffer.alloc(16 * 16 * 4, 200);
  const plain = jpeg.encode({ width: 16, height: 16, data }, 90).data;
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'binary'), Buffer.from(marker, 'utf8')]);
  const app1 = Buffer.concat([Buffer.from([0xff, 0xe1]), Buffer.from([(payload.length + 2) >> 8, (payload.length + 2) & 0xff]), payload]);
  return Buffer.concat([plain.subarray(0, 2), app1, plain.subarray(2)]);
}

describe('re-encoding a selfie', () => {
  it('keeps the pixels and drops the EXIF segment', () => {
    const sent = jpegWithExif('GPS 6.5244N 3.3792E');
    expect(sent.includes('GPS 6.5244N')).toBe(true);
    const kept = reencodeSelfie(sent);
    if (!('jpeg' in kept)) throw new Error(`refused: ${kept.problem}`);
    expect(kept.jpeg.includes('GPS 6.5244N')).toBe(false);
    expect(kept.jpeg.includes(Buffer.from('Exif'))).toBe(false);
    expect(jpeg.decode(kept.jpeg)).toMatchObject({ width: 16, height: 16 });
  });

  it('takes a PNG and answers a JPEG', () => {
    const png = new PNG({ width: 8, height: 8 });
    png.data.fill(120);
    const kept = reencodeSelfie(PNG.sync.write(png));
    if (!('jpeg' in kept)) throw new Error(`refused: ${kept.problem}`);
    expect([...kept.jpeg.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  });

  it('sniffs the bytes: text called a JPEG, or a broken JPEG, is unreadable', () => {
    expect(reencodeSelfie(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toEqual({ problem: 'unreadable_image' });
    expect(reencodeSelfie(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 1, 2, 3]))).toEqual({ problem: 'unreadable_image' });
  });

  it('refuses more than the size cap before decoding', () => expect(reencodeSelfie(Buffer.alloc(1024 * 1024 + 1))).toEqual({ problem: 'too_large' }));
});
