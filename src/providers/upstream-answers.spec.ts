import { describe, expect, it } from '@jest/globals';
import { dojahRequest, interpretDojah } from './dojah.provider.js';
import { interpretPrembly, premblyRequest } from './prembly.provider.js';
import { UpstreamFailure } from './upstream.js';
import { dojah, PORTRAIT, prembly } from './upstream-fixtures.testing.js';

const options = { referenceYear: 2026 };
const nin = { nin: '12345678905' };

function failure(run: () => unknown): { reasonCode: string; health: boolean; answered: boolean } {
  try {
    run();
  } catch (error) {
    if (!(error instanceof UpstreamFailure)) throw error;
    return { reasonCode: error.reasonCode, health: error.health, answered: error.answered };
  }
  throw new Error('expected an UpstreamFailure');
}

describe('Dojah answers', () => {
  it('builds GET requests with query strings, local phone numbers and raw base64 selfies', () => {
    expect(dojahRequest('nin', nin)).toEqual({ method: 'GET', path: '/api/v1/kyc/nin', query: { nin: '12345678905' } });
    expect(dojahRequest('pnv', { phone: '+2348031234567' })).toEqual({ method: 'GET', path: '/api/v1/kyc/phone_number', query: { phone_number: '08031234567' } });
    expect(dojahRequest('face_match', { image: 'data:image/png;base64,AAAA', bvn: '22222222222' })).toEqual({
      method: 'POST',
      path: '/api/v1/kyc/bvn/verify',
      body: { bvn: '22222222222', selfie_image: 'AAAA' },
    });
  });

  it('200 with an entity is found, with the portrait beside the result', () => {
    const answer = interpretDojah('nin', { status: 200, json: dojah.nin }, nin, options);
    expect(answer.outcome).toBe('found');
    if (answer.outcome !== 'found') return;
    expect(answer.result.firstName).toBe('MOSHOOD');
    expect(answer.portrait?.equals(PORTRAIT)).toBe(true);
  });

  it('404 {"error": ...} is not found', () => {
    expect(interpretDojah('nin', { status: 404, json: dojah.notFound }, nin, options)).toEqual({ outcome: 'not_found' });
  });

  it('selfie checks become {match, confidence}', () => {
    expect(interpretDojah('face_match', { status: 200, json: dojah.selfie }, { image: 'x', nin: '1' }, options)).toEqual({
      outcome: 'found',
      result: { match: true, confidence: 100 },
    });
  });

  it.each([
    ['malformed JSON', { status: 200, json: undefined }, 'provider_malformed_response', true],
    ['no entity', { status: 200, json: { data: {} } }, 'provider_malformed_response', true],
    ['an entity with nothing recognisable', { status: 200, json: { entity: { foo: 'bar' } } }, 'provider_malformed_response', true],
    ['500', { status: 500, json: { error: 'oops' } }, 'provider_unavailable', true],
    ['503 without a body', { status: 503, json: undefined }, 'provider_unavailable', true],
    ['401', { status: 401, json: { error: 'Unauthorized' } }, 'provider_unauthorized', false],
    ['400', { status: 400, json: { error: 'Invalid NIN' } }, 'provider_rejected_input', false],
    ['429', { status: 429, json: {} }, 'provider_rate_limited', false],
  ])('%s fails (%s), counted by the breaker: %s', (_name, answer, reasonCode, health) => {
    expect(failure(() => interpretDojah('nin', answer, nin, options))).toEqual({ reasonCode, health, answered: true });
  });
});

describe('Prembly answers', () => {
  it('builds POST bodies {"number": ...}', () => {
    expect(premblyRequest('nin', nin)).toEqual({ path: '/identitypass/verification/nin', body: { number: '12345678905' } });
    expect(premblyRequest('bank_account', { bank: '058', account_number: '0123456789' })).toEqual({
      path: '/identitypass/verification/bank_account/basic',
      body: { number: '0123456789', bank_code: '058' },
    });
  });

  it('"00" is found; the record is under nin_data, data or account_data', () => {
    const found = interpretPrembly('nin', { status: 200, json: prembly.nin }, nin, options);
    expect(found).toMatchObject({ outcome: 'found', result: { firstName: 'Ngozi', gender: 'Female' } });
    expect(interpretPrembly('bank_account', { status: 200, json: prembly.account }, { bank: '058', account_number: '0123456789' }, options)).toEqual({
      outcome: 'found',
      result: { accountNumber: '0123456789', accountName: 'OKAFOR NGOZI ADAEZE', bankCode: '058', bankName: 'Guaranty Trust Bank' },
    });
    expect(interpretPrembly('face_match', { status: 200, json: prembly.face }, { image: 'x', nin: '1' }, options)).toEqual({
      outcome: 'found',
      result: { match: true, confidence: 96.4 },
    });
  });

  it('"01" with HTTP 200 is not found', () => {
    expect(interpretPrembly('nin', { status: 200, json: prembly.notFound }, nin, options)).toEqual({ outcome: 'not_found' });
  });

  it.each([
    ['"02" service unavailable', { status: 200, json: prembly.unavailable }, 'provider_unavailable', true],
    ['"03" wallet empty', { status: 200, json: prembly.walletEmpty }, 'provider_wallet_empty', false],
    ['"07" blocked', { status: 200, json: { status: true, response_code: '07' } }, 'provider_record_blocked', false],
    ['malformed JSON', { status: 200, json: undefined }, 'provider_malformed_response', true],
    ['"00" without a record', { status: 200, json: { status: true, response_code: '00' } }, 'provider_malformed_response', true],
    ['status false, no code', { status: 200, json: { status: false, detail: 'x' } }, 'provider_error', false],
    ['502', { status: 502, json: undefined }, 'provider_unavailable', true],
    ['401', { status: 401, json: { detail: 'invalid key' } }, 'provider_unauthorized', false],
  ])('%s fails (%s), counted by the breaker: %s', (_name, answer, reasonCode, health) => {
    expect(failure(() => interpretPrembly('nin', answer, nin, options))).toEqual({ reasonCode, health, answered: true });
  });
});
