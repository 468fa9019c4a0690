import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { livenessStep } from '../../src/face-checks/face-measures.js';
import { HumanFaceChecks, loadHuman } from '../../src/face-checks/human-face-checks.js';
import { extractFrame, type FakeCamera, makeFakeCamera } from '../support/fake-camera.js';

const checks = new HumanFaceChecks();
let turning: FakeCamera;
let still: FakeCamera;
// One turning clip of 3 s for both tests, and the same face held still for 1 s.
beforeAll(async () => {
  [turning, still] = await Promise.all([makeFakeCamera(), makeFakeCamera({ turn: 0, seconds: 1 }), loadHuman()]);
}, 120_000);
afterAll(() => Promise.all([turning, still].filter(Boolean).map((camera) => camera.dispose())));

/** The poses of the frames at `seconds`. */
async function poses(camera: FakeCamera, seconds: readonly number[]) {
  const frames = await Promise.all(seconds.map((at) => extractFrame(camera.path, at)));
  const found = [];
  for (const frame of frames) found.push(await checks.framePose(frame));
  return found;
}

describe('The fake camera', () => {
  it('writes a 640 by 480, 15 frames a second y4m of 3 s whose frames show exactly one face that passes the selfie checks', async () => {
    const video = await readFile(turning.path);
    expect(video.subarray(0, 40).toString('latin1')).toMatch(/^YUV4MPEG2 W640 H480 F15:1 /);
    const frameBytes = 'FRAME\n'.length + 640 * 480 * 1.5;
    expect(Math.round((video.length - video.indexOf('FRAME')) / frameBytes)).toBe(45);
    const selfie = await checks.checkSelfie(await extractFrame(turning.path, 1.2));
    expect(selfie).toMatchObject({ passed: true, faces: 1 });
  });

  it('turns the head enough for the liveness step, where the same face held still does not', async () => {
    // The swing's two extremes and its middle; the still clip at three moments.
    const [turned, held] = [await poses(turning, [0.75, 1.5, 2.25]), await poses(still, [0.1, 0.5, 0.9])];
    expect([...turned, ...held].every((pose) => pose?.faces === 1)).toBe(true);
    expect(livenessStep(turned.map((pose) => pose!))).toBe('head_turn');
    expect(livenessStep(held.map((pose) => pose!))).toBeNull();
  });
});
