import { describe, expect, it } from '@jest/globals';
import { cardBox, documentPhoto } from '../../test/support/sample-documents.js';
import { DOCUMENT_LIMITS, documentProblems, measureDocument } from './document-measures.js';

// Synthetic cards made here (test/support/sample-documents.ts): a sharp one, then one thing spoilt at a time.
describe('Given the photo of a document', () => {
  it('when the card is sharp, whole, large enough and without glare, then there is no problem, and its box is found within a few pixels', () => {
    const measures = measureDocument(documentPhoto());
    expect(documentProblems(measures)).toEqual([]);
    expect(measures.sharpness).toBeGreaterThan(DOCUMENT_LIMITS.minSharpness * 10);
    const [x, y, w, h] = cardBox();
    const found = measures.box!;
    for (const [measured, actual] of [
      [found[0], x],
      [found[1], y],
      [found[0] + found[2], x + w],
      [found[1] + found[3], y + h],
    ])
      expect(Math.abs(measured - actual)).toBeLessThanOrEqual(12);
  });

  it('when it is held upright in a portrait frame, then it passes too', () =>
    expect(documentProblems(measureDocument(documentPhoto({ width: 960, height: 1280, cardShare: 0.85 })))).toEqual([]));

  it('when it is out of focus by a pixel, then it is blurred, and nothing else', () => {
    const measures = measureDocument(documentPhoto({ blurPx: 1 }));
    expect(measures.sharpness).toBeLessThan(DOCUMENT_LIMITS.minSharpness);
    expect(documentProblems(measures)).toEqual(['blurred']);
  });

  it('when a reflection burns out a tenth of it, then it is glare, and nothing else', () => {
    const measures = measureDocument(documentPhoto({ glare: 0.1 }));
    expect(measures.glareShare).toBeGreaterThan(0.08);
    expect(documentProblems(measures)).toEqual(['glare']);
  });

  it('when a small reflection burns out 1 % of it, then it passes', () => expect(documentProblems(measureDocument(documentPhoto({ glare: 0.01 })))).toEqual([]));

  it('when it is too far from the camera, then it is too small in the frame, though found', () => {
    const measures = measureDocument(documentPhoto({ cardShare: 0.35 }));
    expect(measures.box).not.toBeNull();
    expect(measures.fillShare).toBeLessThan(DOCUMENT_LIMITS.minFillShare);
    expect(documentProblems(measures)).toEqual(['document_too_small']);
  });

  it('when an edge runs off the frame, then it is not framed', () => expect(documentProblems(measureDocument(documentPhoto({ left: -0.1 })))).toEqual(['document_not_framed']));

  it('when it lies on a table of its own colour, then no edge is found and it is not framed (what the measure cannot see)', () => {
    const photo = documentPhoto({ cardShare: 0.6 });
    const [x, y, w, h] = cardBox({ cardShare: 0.6 });
    for (let py = 0; py < photo.height; py++)
      for (let px = 0; px < photo.width; px++) if (px < x || px >= x + w || py < y || py >= y + h) photo.data.set([214, 222, 208, 255], (py * photo.width + px) * 4);
    expect(documentProblems(measureDocument(photo))).toEqual(['document_not_framed']);
  });

  it('when the photo is under 480 pixels on its shorter side, then its resolution is too low', () =>
    expect(documentProblems(measureDocument(documentPhoto({ width: 560, height: 420 })))).toEqual(['low_resolution']));
});
