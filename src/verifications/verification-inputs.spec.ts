import { describe, expect, it } from '@jest/globals';
import { ValidationFailed } from '../common/errors.js';
import { SCOPES, type Scope } from '../scopes/scopes.js';
import { parseScope, scopeExample, validateInputs } from './verification-inputs.js';
import { sandboxPortrait } from '../providers/sandbox.provider.js';

function fieldErrors(run: () => unknown): { field: string; message: string }[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationFailed) return [...error.fields];
    throw error;
  }
  throw new Error('expected a ValidationFailed');
}

const PNG_BASE64 = sandboxPortrait('face').toString('base64');

const PICKED: Record<string, Record<string, string>> = {
  nin: { nin: '12345678905' },
  pnv: { phone: '08031234565' },
  vnin: { vnin: 'AB12CD34EF56GH75' },
  bvn: { bvn: '22345678905' },
  pvc: { vin: '90F5B0407E295593885' },
  passport: { passport_number: 'A12345675' },
  bank_account: { bank: '058', account_number: '0123456785' },
  premium_bank_account: { account_number: '0123456785' },
  phone: { phone: '+2348031234565' },
  face_match: { image: PNG_BASE64, nin: '12345678905' },
};
/** The hand-picked bodies; a scope without them is checked on its example. */
const VALID = (scope: Scope): Record<string, string> => PICKED[scope] ?? scopeExample(scope);

describe('Scope in the path', () => {
  it('refuses a missing scope and an unknown one with 422 on the scope field', () => {
    expect(fieldErrors(() => parseScope(undefined))).toEqual([expect.objectContaining({ field: 'scope' })]);
    expect(fieldErrors(() => parseScope('credit_score'))).toEqual([expect.objectContaining({ field: 'scope' })]);
    expect(parseScope('bvn')).toBe('bvn');
  });
});

describe('Inputs per scope', () => {
  it.each(SCOPES.map((scope) => [scope]))('accepts a valid %s body and echoes it', (scope) => {
    const valid = validateInputs(scope, VALID(scope));
    expect(valid.scope).toBe(scope);
    if (scope !== 'face_match') expect(valid.request).toEqual(VALID(scope));
  });

  it.each(SCOPES.map((scope) => [scope]))('lists every required %s field when the body is empty', (scope) => {
    const fields = fieldErrors(() => validateInputs(scope, {})).map((error) => error.field);
    expect(fields.length).toBeGreaterThan(0);
    expect(fields).toEqual(
      expect.arrayContaining(scope === 'face_match' ? ['image', 'nin'] : Object.keys(VALID(scope)).filter((field) => !(scope === 'premium_bank_account' && field === 'bank'))),
    );
  });

  it.each([
    ['nin', { nin: '1234567890' }, 'nin'],
    ['nin', { nin: '1234567890a' }, 'nin'],
    ['bvn', { bvn: '123456789012' }, 'bvn'],
    ['pnv', { phone: '0803123456' }, 'phone'],
    ['phone', { phone: '+23480312345' }, 'phone'],
    ['phone', { phone: '06031234565' }, 'phone'],
    ['vnin', { vnin: 'AB12CD34EF56GH7' }, 'vnin'],
    ['vnin', { vnin: 'AB12CD34EF56GH7!' }, 'vnin'],
    ['pvc', { vin: '90F5B0407E29559388' }, 'vin'],
    ['passport', { passport_number: '12345678A' }, 'passport_number'],
    ['passport', { passport_number: 'A1234567' }, 'passport_number'],
    ['bank_account', { bank: '058', account_number: '012345678' }, 'account_number'],
    ['premium_bank_account', { account_number: '01234567890' }, 'account_number'],
  ] as const)('refuses a malformed %s input (%j)', (scope, body, field) => {
    expect(fieldErrors(() => validateInputs(scope, body))).toEqual([expect.objectContaining({ field })]);
  });

  it('accepts the three Nigerian phone forms', () => {
    for (const phone of ['08031234565', '+2348031234565', '2348031234565', '09061234565', '07011234565']) expect(validateInputs('phone', { phone }).input.phone).toBe(phone);
  });

  it('lists unknown fields, wrong types and empty values together, without echoing values', () => {
    const errors = fieldErrors(() => validateInputs('bank_account', { bank: '', account_number: 1234567890, extra: 'x' }));
    expect(errors.map((error) => error.field).sort()).toEqual(['account_number', 'bank', 'extra']);
    expect(JSON.stringify(errors)).not.toContain('1234567890');
  });

  it('refuses a body that is not an object', () => {
    expect(fieldErrors(() => validateInputs('nin', ['12345678905']))).toEqual([expect.objectContaining({ field: 'body' })]);
  });
});

describe('face_match', () => {
  it('never echoes the image bytes: the request carries type, size and digest', () => {
    const valid = validateInputs('face_match', VALID('face_match'));
    expect(valid.request).toEqual({ nin: '12345678905', image: { contentType: 'image/png', sizeBytes: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(JSON.stringify(valid.request)).not.toContain(PNG_BASE64.slice(0, 40));
  });

  it('accepts a data URL and a JPEG', () => {
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100, 1)]).toString('base64');
    expect(validateInputs('face_match', { image: `data:image/jpeg;base64,${jpeg}`, bvn: '22345678905' }).request.image).toMatchObject({ contentType: 'image/jpeg' });
  });

  it('refuses images that are not JPEG or PNG, not base64, or too large', () => {
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(100)]).toString('base64');
    expect(fieldErrors(() => validateInputs('face_match', { image: gif, nin: '12345678905' }))).toEqual([expect.objectContaining({ field: 'image' })]);
    expect(fieldErrors(() => validateInputs('face_match', { image: 'not base64!', nin: '12345678905' }))).toEqual([expect.objectContaining({ field: 'image' })]);
    const huge = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(1024 * 1024 + 10)]).toString('base64');
    expect(fieldErrors(() => validateInputs('face_match', { image: huge, nin: '12345678905' }))).toEqual([
      expect.objectContaining({ field: 'image', message: expect.stringContaining('at most') }),
    ]);
  });

  it('needs exactly one of nin or bvn', () => {
    expect(fieldErrors(() => validateInputs('face_match', { image: PNG_BASE64 }))).toEqual([expect.objectContaining({ field: 'nin' })]);
    expect(fieldErrors(() => validateInputs('face_match', { image: PNG_BASE64, nin: '12345678905', bvn: '22345678905' }))).toEqual([expect.objectContaining({ field: 'bvn' })]);
  });
});
