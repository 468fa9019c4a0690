import { describe, expect, it } from '@jest/globals';
import { ValidationFailed } from '../common/errors.js';
import { parseFlowDefinition, withDefaults } from './flow-definition.js';

const options = { allowHttp: false };
const withSelfie = { name: 'Onboarding', steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }, { type: 'selfie' }] };
const withoutSelfie = { name: 'Numbers only', steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin'] }] };

function fieldsRefused(body: unknown): string[] {
  try {
    parseFlowDefinition(body, options);
  } catch (error) {
    if (error instanceof ValidationFailed) return error.fields.map((problem) => problem.field);
    throw error;
  }
  return [];
}

describe('A flow definition’s liveness rule', () => {
  it('is required by default in a flow with a selfie, and off in one without', () => {
    expect(parseFlowDefinition(withSelfie, options).decision).toEqual({ faceMatchThreshold: 80, reviewMarginPoints: 10, liveness: 'required' });
    expect(parseFlowDefinition(withoutSelfie, options).decision.liveness).toBe('off');
  });

  it('may be turned off in a flow with a selfie', () => expect(parseFlowDefinition({ ...withSelfie, decision: { liveness: 'off' } }, options).decision.liveness).toBe('off'));

  it('is refused when it is neither required nor off, or required without a selfie step', () => {
    expect(fieldsRefused({ ...withSelfie, decision: { liveness: 'maybe' } })).toEqual(['decision.liveness']);
    expect(fieldsRefused({ ...withSelfie, decision: { liveness: true } })).toEqual(['decision.liveness']);
    expect(fieldsRefused({ ...withoutSelfie, decision: { liveness: 'required' } })).toEqual(['decision.liveness']);
  });

  it('reads as off in a version stored before the rule existed, which keeps deciding as it did', () => {
    const stored = { ...parseFlowDefinition(withSelfie, options), decision: { faceMatchThreshold: 80, reviewMarginPoints: 10 } };
    expect(withDefaults(stored).decision.liveness).toBe('off');
  });
});
