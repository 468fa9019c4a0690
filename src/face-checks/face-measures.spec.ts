import { describe, expect, it } from '@jest/globals';
import { type FaceMeasures, type FramePose, livenessStep, selfieProblems, sharpness, type Pixels } from './face-measures.js';

const good: FaceMeasures = { faces: 1, faceShare: 0.5, faceWidthPx: 300, centreOffset: 0.02, luma: 120, sharpness: 300, eyeOpenness: 0.38, realScore: 0.8, liveScore: 0.95 };

describe('Given the measures of a selfie', () => {
  it('when every one is within its limit, then there is no problem', () => expect(selfieProblems(good)).toEqual([]));
  it.each([
    [{ faces: 0 }, ['no_face']],
    [{ faces: 3 }, ['several_faces']],
    [{ faceShare: 0.2 }, ['face_too_small']],
    [{ faceWidthPx: 80 }, ['face_too_small']],
    [{ centreOffset: 0.3 }, ['face_off_centre']],
    [{ luma: 40 }, ['too_dark']],
    [{ sharpness: 20 }, ['blurred']],
    [{ eyeOpenness: 0.1 }, ['eyes_closed']],
    [{ realScore: 0.1 }, ['spoof_suspected']],
    [{ liveScore: null }, ['not_live']],
    [{ luma: 40, sharpness: 20, eyeOpenness: 0.1 }, ['too_dark', 'blurred', 'eyes_closed']],
  ] as const)('when %j, then the problems are %j', (change, problems) => expect(selfieProblems({ ...good, ...change })).toEqual(problems));
});

describe('Given the poses of the frames of a liveness step', () => {
  const pose = (yawRad: number | null, eyeOpenness: number | null = 0.38): FramePose => ({ yawRad, eyeOpenness });
  it('when the yaw spans 0.25 radians, then the head turned', () => expect(livenessStep([pose(0), pose(-0.1), pose(0.15)])).toBe('head_turn'));
  it('when it spans less, then no step was made', () => expect(livenessStep([pose(0), pose(-0.1), pose(0.1)])).toBeNull());
  it('when the eyes close between open frames, then it was a blink', () => expect(livenessStep([pose(0, 0.38), pose(0, 0.1), pose(0, 0.36)])).toBe('blink'));
  it('when the eyes are closed from the start and open once, then it was no blink', () => expect(livenessStep([pose(0, 0.1), pose(0, 0.36)])).toBeNull());
  it('when no frame had a face, then no step was made', () => expect(livenessStep([pose(null, null), pose(null, null)])).toBeNull());
});

describe('Sharpness', () => {
  const stripes = (contrast: number): Pixels => {
    const data = new Uint8Array(64 * 64 * 4);
    for (let i = 0; i < 64 * 64; i++) data.fill(Math.round(64 + (i % 2 === 0 ? contrast : 0)), i * 4, i * 4 + 4);
    return { width: 64, height: 64, data };
  };
  it('does not fall with the light: the same edges, dimmed, measure the same', () =>
    expect(sharpness(stripes(40), undefined, 64)).toBeCloseTo(sharpness({ ...stripes(40), data: stripes(40).data.map((v) => Math.round(v / 2)) }, undefined, 64), -1));
});
