import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createHmac } from 'node:crypto';
import { blindToken, newTokensOf, normalisePhone, tokensOf } from './blind-index.js';

describe('The blind index of data subjects', () => {
  it('gives one NIN unrelated tokens in two organizations', () => {
    const [first, second] = [randomBytes(32), randomBytes(32)];
    expect(blindToken(first, 'nin', '21440414976')).not.toBe(blindToken(second, 'nin', '21440414976'));
    expect(blindToken(first, 'nin', '21440414976')).toBe(blindToken(first, 'nin', '21440414976'));
  });

  it('gives a phone number the same token in its three forms', () => {
    const key = randomBytes(32);
    const forms = ['08150292236', '+2348150292236', '2348150292236'];
    expect(forms.map(normalisePhone)).toEqual(['08150292236', '08150292236', '08150292236']);
    expect(new Set(forms.map((form) => blindToken(key, 'phone', form))).size).toBe(1);
    expect(blindToken(key, 'phone', '08150292237')).not.toBe(blindToken(key, 'phone', '08150292236'));
  });

  it('keeps kinds apart: the same digits as a NIN and as a BVN are different subjects', () => {
    const key = randomBytes(32);
    expect(blindToken(key, 'nin', '22126025250')).not.toBe(blindToken(key, 'bvn', '22126025250'));
  });

  it('ignores case in letter-bearing numbers (vNIN, VIN, passport)', () => {
    const key = randomBytes(32);
    expect(blindToken(key, 'vnin', 'ys79377970479239')).toBe(blindToken(key, 'vnin', 'YS79377970479239'));
  });

  it('indexes the identifiers of inputs and results, never other fields, and never the identifier itself', () => {
    const key = randomBytes(32);
    const tokens = tokensOf(key, { nin: '21440414976', image: { sha256: 'x' } }, { firstName: 'Blessing', phoneNumber: '08150292236', nin: '21440414976' });
    expect(tokens).toHaveLength(2);
    expect(tokens.join()).not.toContain('21440414976');
  });

  it("is HMAC-SHA-256 of the kind and the normalised identifier, under the organization's index key", () => {
    const key = randomBytes(32);
    expect(blindToken(key, 'phone', '+2348150292236')).toBe(createHmac('sha256', key).update('phone\n08150292236').digest('base64url'));
  });

  it("gives a result's new identifiers only, leaving out those its request already carried in any form", () => {
    const key = randomBytes(32);
    const request = { nin: '21440414976', phone: '+2348150292236' };
    const result = { nin: '21440414976', phoneNumber: '08150292236', bvn: '22150292236' };
    expect(newTokensOf(key, [result], [request])).toEqual([blindToken(key, 'bvn', '22150292236')]);
    expect(newTokensOf(key, [result], [])).toEqual(tokensOf(key, result));
  });

  it('tells bank accounts apart by their bank: one account number at two banks is two subjects, a bank by code or name is one', () => {
    const key = randomBytes(32);
    expect(blindToken(key, 'account_number', '7753968106', 'GTBank')).not.toBe(blindToken(key, 'account_number', '7753968106', 'Wema Bank'));
    expect(blindToken(key, 'account_number', '7753968106', 'GTBank')).toBe(blindToken(key, 'account_number', '7753968106', '058'));
    expect(blindToken(key, 'account_number', '7753968106')).not.toBe(blindToken(key, 'account_number', '7753968106', '058'));
    const atGtBank = tokensOf(key, { account_number: '7753968106', bank: 'gt bank plc' });
    const atWema = tokensOf(key, { account_number: '7753968106', bank: '035' });
    expect(atGtBank).toEqual([blindToken(key, 'account_number', '7753968106', '058')]);
    expect(atWema).toEqual([blindToken(key, 'account_number', '7753968106', 'Wema Bank')]);
    // The result names the bank by code: the same subject as the request's, no second token.
    expect(newTokensOf(key, [{ accountNumber: '7753968106', bankCode: '058', bankName: 'Guaranty Trust Bank' }], [{ account_number: '7753968106', bank: 'GTBank' }])).toEqual([]);
  });
});
