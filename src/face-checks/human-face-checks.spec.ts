import { beforeAll, describe, expect, it } from '@jest/globals';
import { cutSample, darken, blur, pad, spoofs, toJpeg } from '../../test/support/sample-faces.js';
import { documentPhoto } from '../../test/support/sample-documents.js';
import { HumanFaceChecks, MAX_IMAGE_BYTES, decodeImage, loadHuman } from './human-face-checks.js';

// Real models on the wasm backend, on faces cut from the library's own sample images.
const checks = new HumanFaceChecks();
beforeAll(() => loadHuman(), 60_000);

describe('A selfie', () => {
  it('with one sharp, lit, centred face passes, with its scores and description', async () => {
    const result = await checks.checkSelfie(toJpeg(cutSample('authorWebcam')));
    expect(result).toMatchObject({ passed: true, problems: [], faces: 1 });
    expect(result.detectionScore).toBeGreaterThan(0.9);
    expect(result.realScore).toBeGreaterThan(0.3);
    expect(result.liveScore).toBeGreaterThan(0.5);
    expect(result.descriptor).toHaveLength(1024);
  });

  it('as a PNG is read the same way', async () => {
    const { PNG } = await import('pngjs');
    const face = cutSample('authorWebcam');
    const png = new PNG({ width: face.width, height: face.height });
    png.data = Buffer.from(face.data);
    const result = await checks.checkSelfie(new Uint8Array(PNG.sync.write(png)));
    expect(result).toMatchObject({ passed: true, faces: 1 });
  });

  it('with no face is refused as no_face', async () => {
    expect(await checks.checkSelfie(toJpeg(cutSample('noFace')))).toMatchObject({ passed: false, problems: ['no_face'], faces: 0, descriptor: null });
  });

  it('with two faces is refused as several_faces', async () => {
    const result = await checks.checkSelfie(toJpeg(cutSample('twoFaces')));
    expect(result.passed).toBe(false);
    expect(result.faces).toBe(2);
    expect(result.problems).toContain('several_faces');
  });

  it('taken in the dark is refused as too_dark, and not as blurred', async () => {
    const result = await checks.checkSelfie(toJpeg(darken(cutSample('authorWebcam'), 0.35)));
    expect(result).toMatchObject({ passed: false, problems: ['too_dark'], faces: 1 });
  });

  it('out of focus is refused as blurred', async () => {
    const result = await checks.checkSelfie(toJpeg(blur(cutSample('authorWebcam'), 2)));
    expect(result).toMatchObject({ passed: false, problems: ['blurred'], faces: 1 });
  });

  it('with the face far from the camera is refused as face_too_small', async () => {
    const result = await checks.checkSelfie(toJpeg(pad(cutSample('authorWebcam'), 1.6)));
    expect(result.faces).toBe(1);
    expect(result.problems).toContain('face_too_small');
  });

  it('that is not an image, or is over the size limit, is refused as unreadable_image', async () => {
    expect(await checks.checkSelfie(new TextEncoder().encode('not an image at all'))).toMatchObject({ passed: false, problems: ['unreadable_image'] });
    const huge = new Uint8Array(MAX_IMAGE_BYTES + 1);
    huge.set(toJpeg(cutSample('authorWebcam')));
    expect(await checks.checkSelfie(huge)).toMatchObject({ passed: false, problems: ['unreadable_image'] });
  });

  it('whose header claims more pixels than the limit is refused before decoding', () => {
    const png = new Uint8Array(33);
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    new DataView(png.buffer).setUint32(16, 60_000);
    new DataView(png.buffer).setUint32(20, 60_000);
    expect(() => decodeImage(png)).toThrow('image dimensions out of range');
  });
});

describe('The spoof samples', () => {
  // Each shows one face that meets every quality limit, so a flow's test of a held-up photo reaches its
  // liveness step; the anti-spoofing model does not refuse them (test/fixtures/faces/README.md).
  it.each(Object.entries(spoofs))('%s shows one usable face of the same person', async (_name, make) => {
    const [spoof, genuine] = await Promise.all([checks.checkSelfie(make()), checks.checkSelfie(toJpeg(cutSample('authorWebcam')))]);
    expect(spoof.faces).toBe(1);
    expect(spoof.problems.filter((problem) => problem !== 'spoof_suspected')).toEqual([]);
    expect(checks.similarity(spoof.descriptor!, genuine.descriptor!)).toBeGreaterThan(0.5);
  });
});

describe('Similarity', () => {
  it('rates two photos of one person above a photo of someone else', async () => {
    const [webcam, party, other] = await Promise.all(
      (['authorWebcam', 'authorParty', 'otherPerson'] as const).map(async (name) => (await checks.checkSelfie(toJpeg(cutSample(name)))).descriptor!),
    );
    expect(checks.similarity(webcam, webcam)).toBe(1);
    expect(checks.similarity(webcam, party)).toBeGreaterThan(checks.similarity(webcam, other) + 0.2);
  });
});

describe('A document image', () => {
  it('with a portrait gives the portrait description', async () => {
    const result = await checks.checkDocument(toJpeg(documentPhoto()), 'passport');
    expect(result).toMatchObject({ passed: true, problems: [] });
    expect(result.descriptor).toHaveLength(1024);
  });

  it('too small and without a portrait is refused with both reasons', async () => {
    const result = await checks.checkDocument(toJpeg(cutSample('noFace')), 'voters_card');
    expect(result.problems).toEqual(expect.arrayContaining(['low_resolution', 'no_face_on_document']));
  });

  it('cut off by the frame is refused as not framed, the server measuring as the page does', async () => {
    expect((await checks.checkDocument(toJpeg(documentPhoto({ left: -0.1 })), 'voters_card')).problems).toEqual(['document_not_framed']);
  });

  it('burnt out by a reflection is refused as glare', async () => {
    expect((await checks.checkDocument(toJpeg(documentPhoto({ face: null, glare: 0.1 })), 'drivers_licence_back')).problems).toEqual(['glare']);
  });
});
