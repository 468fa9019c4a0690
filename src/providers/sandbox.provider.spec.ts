import { describe, expect, it } from '@jest/globals';
import { SCOPES, type Scope } from '../scopes/scopes.js';
import { SandboxProvider, sandboxBehaviour, sandboxRecord } from './sandbox.provider.js';

const provider = new SandboxProvider();
const options = () => ({ timeoutMs: 50, signal: new AbortController().signal });

function inputFor(scope: Scope, lastDigit: string): Record<string, string> {
  switch (scope) {
    case 'nin':
      return { nin: `1234567890${lastDigit}` };
    case 'pnv':
    case 'phone':
      return { phone: `0803123456${lastDigit}` };
    case 'vnin':
      return { vnin: `AB12CD34EF56GH7${lastDigit}` };
    case 'bvn':
      return { bvn: `2234567890${lastDigit}` };
    case 'pvc':
      return { vin: `90F5B0407E29559388${lastDigit}` };
    case 'passport':
      return { passport_number: `A1234567${lastDigit}` };
    case 'bank_account':
      return { bank: '058', account_number: `012345678${lastDigit}` };
    case 'premium_bank_account':
      return { account_number: `012345678${lastDigit}` };
    case 'face_match':
      return { image: 'aW1hZ2U=', nin: `1234567890${lastDigit}` };
  }
}

describe('The sandbox provider', () => {
  it.each(SCOPES.map((scope) => [scope]))('%s: the last digit decides the outcome', async (scope) => {
    expect(await provider.verify(scope, inputFor(scope, '1'), options())).toEqual({ outcome: 'not_found' });
    expect(await provider.verify(scope, inputFor(scope, '2'), options())).toEqual({ outcome: 'failed', reasonCode: 'provider_error', retryable: true });
    const started = Date.now();
    expect(await provider.verify(scope, inputFor(scope, '3'), options())).toMatchObject({ outcome: 'failed', reasonCode: 'provider_timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(await provider.verify(scope, inputFor(scope, '5'), options())).toMatchObject({ outcome: 'found' });
  });

  it('is deterministic: the same input gives the same record, another input another', () => {
    for (const scope of SCOPES) {
      expect(sandboxRecord(scope, inputFor(scope, '5'))).toEqual(sandboxRecord(scope, inputFor(scope, '5')));
      if (scope !== 'face_match') expect(sandboxRecord(scope, inputFor(scope, '5')).result).not.toEqual(sandboxRecord(scope, inputFor(scope, '7')).result);
    }
  });

  it('gives the nin and bvn records the spec lists, with a portrait beside the result', () => {
    const nin = sandboxRecord('nin', inputFor('nin', '5'));
    expect(Object.keys(nin.result)).toEqual(expect.arrayContaining(['firstName', 'middleName', 'lastName', 'gender', 'dateOfBirth', 'phoneNumber', 'stateOfOrigin', 'lgaOfOrigin', 'residentialAddress']));
    expect(nin.portrait?.subarray(1, 4).toString()).toBe('PNG');
    const bvn = sandboxRecord('bvn', inputFor('bvn', '5'));
    expect(Object.keys(bvn.result)).toEqual(
      expect.arrayContaining(['phoneNumber1', 'phoneNumber2', 'email', 'stateOfResidence', 'nationality', 'maritalStatus', 'enrollmentBank', 'enrollmentBranch', 'registrationDate', 'levelOfAccount', 'watchListed']),
    );
    expect(bvn.portrait).toBeDefined();
    expect(sandboxRecord('pnv', inputFor('pnv', '5')).portrait).toBeDefined();
    expect(JSON.stringify(nin.result)).not.toMatch(/portrait/i);
  });

  it('returns the account name for bank accounts and the linked identity for phones, across phone forms', () => {
    expect(sandboxRecord('bank_account', inputFor('bank_account', '5')).result).toMatchObject({ accountName: expect.stringMatching(/^[A-Z]+ [A-Z]+ [A-Z]+$/), bankName: 'Guaranty Trust Bank' });
    const local = sandboxRecord('phone', { phone: '08031234565' }).result;
    expect(sandboxRecord('phone', { phone: '+2348031234565' }).result).toEqual(local);
    expect(local).toMatchObject({ phoneNumber: '08031234565', firstName: expect.any(String), nin: expect.stringMatching(/^\d{11}$/) });
  });

  it('face_match: 4 is a found result with match false; others match', async () => {
    expect(sandboxBehaviour('face_match', inputFor('face_match', '4'))).toBe('no_match');
    expect(await provider.verify('face_match', inputFor('face_match', '4'), options())).toMatchObject({ outcome: 'found', result: { match: false, confidence: expect.any(Number) } });
    expect(await provider.verify('face_match', inputFor('face_match', '6'), options())).toMatchObject({ outcome: 'found', result: { match: true } });
    expect(sandboxBehaviour('nin', inputFor('nin', '4'))).toBe('found');
  });

  it('a slow check ends as soon as the caller aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 20);
    await provider.verify('nin', inputFor('nin', '3'), { timeoutMs: 10_000, signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
