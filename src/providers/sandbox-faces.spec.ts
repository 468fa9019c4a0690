import { beforeAll, describe, expect, it } from '@jest/globals';
import { HumanFaceChecks, loadHuman } from '../face-checks/human-face-checks.js';
import { sampleJpeg } from '../scopes/sandbox-faces.js';
import { sandboxRecord, SandboxProvider } from './sandbox.provider.js';

// The sandbox's face_match for the ready-made people with a real face (docs/sandbox.md), on real models.
const UCHE_NIN = '85083057350';
const UCHE_BVN = '22900278459';
const AMAKA_NIN = '54265263716';
const BLESSING_NIN = '21440414976';
const provider = new SandboxProvider(undefined, new HumanFaceChecks());
const options = { timeoutMs: 60_000, signal: new AbortController().signal };
const image = (name: Parameters<typeof sampleJpeg>[0]): string => sampleJpeg(name).toString('base64');

beforeAll(() => loadHuman(), 60_000);

describe('The sandbox face_match, for a person whose portrait is a real face', () => {
  it('their nin record carries that face as a JPEG portrait', () => {
    expect(sandboxRecord('nin', { nin: UCHE_NIN }).portrait?.equals(sampleJpeg('authorParty'))).toBe(true);
  });

  it('matches another photo of the same person, by nin or bvn', async () => {
    for (const subject of [{ nin: UCHE_NIN }, { bvn: UCHE_BVN }] as Record<string, string>[]) {
      const outcome = await provider.verify('face_match', { image: image('authorWebcam'), ...subject }, options);
      expect(outcome).toMatchObject({ outcome: 'found', result: { match: true } });
      expect((outcome as unknown as { result: { confidence: number } }).result.confidence).toBeGreaterThanOrEqual(40);
    }
  });

  it('does not match someone else, either way round', async () => {
    expect(await provider.verify('face_match', { image: image('otherPerson'), nin: UCHE_NIN }, options)).toMatchObject({ outcome: 'found', result: { match: false } });
    expect(await provider.verify('face_match', { image: image('authorWebcam'), nin: AMAKA_NIN }, options)).toMatchObject({ outcome: 'found', result: { match: false } });
  });

  it('does not match an image with no face, with confidence 0', async () => {
    expect(await provider.verify('face_match', { image: image('noFace'), nin: UCHE_NIN }, options)).toMatchObject({ outcome: 'found', result: { match: false, confidence: 0 } });
  });

  it('leaves everyone else to the last digit: any image matches Blessing', async () => {
    const outcome = await provider.verify('face_match', { image: image('otherPerson'), nin: BLESSING_NIN }, options);
    expect(outcome).toMatchObject({ outcome: 'found', result: { match: true } });
    expect((outcome as unknown as { result: { confidence: number } }).result.confidence).toBeGreaterThanOrEqual(80);
  });
});
