import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { PaymentRailFailure } from './payment-rail.port.js';
import { interpretDedicatedAccount, interpretInitialize, interpretVerify, signatureMatches } from './paystack.rail.js';

const KEY = 'sk_test_0123456789abcdef';
const ref = 'top_01JD3Q9ZK8W6V2C4X7N5B0M1TR';
const verified = (data: Record<string, unknown>) => ({
  status: 200,
  json: {
    status: true,
    message: 'Verification successful',
    data: { id: 690075529, status: 'success', reference: ref, amount: 20000, fees: 300, currency: 'NGN', paid_at: '2020-05-19T12:30:56.000Z', ...data },
  },
});

describe('Paystack answers', () => {
  it('reads a verified success in kobo with its fees', () =>
    expect(interpretVerify(ref, verified({}))).toEqual({
      status: 'success',
      amountKobo: 20000,
      feesKobo: 300,
      currency: 'NGN',
      paidAt: '2020-05-19T12:30:56.000Z',
      providerTransactionId: '690075529',
    }));

  it('takes ongoing, processing and queued as pending, and keeps abandoned, failed and reversed', () => {
    expect(['ongoing', 'processing', 'queued', 'abandoned', 'failed', 'reversed'].map((status) => interpretVerify(ref, verified({ status }))?.status)).toEqual([
      'pending',
      'pending',
      'pending',
      'abandoned',
      'failed',
      'reversed',
    ]);
  });

  it('knows no transaction on 400 status false, and fails on another reference, a fractional amount, 401 and 5xx', () => {
    expect(interpretVerify(ref, { status: 400, json: { status: false, message: 'Transaction reference not found' } })).toBeNull();
    for (const answer of [verified({ reference: 'other' }), verified({ amount: 10.5 }), { status: 401, json: { status: false } }, { status: 502, json: undefined }]) {
      expect(() => interpretVerify(ref, answer)).toThrow(PaymentRailFailure);
    }
  });

  it('reads the checkout address and a dedicated account', () => {
    expect(
      interpretInitialize({
        status: 200,
        json: { status: true, data: { authorization_url: 'https://checkout.paystack.com/0peioxfhpn', access_code: '0peioxfhpn', reference: ref } },
      }),
    ).toEqual({ authorizationUrl: 'https://checkout.paystack.com/0peioxfhpn' });
    expect(() => interpretInitialize({ status: 200, json: { status: true, data: { authorization_url: 'javascript:alert(1)' } } })).toThrow(PaymentRailFailure);
    expect(
      interpretDedicatedAccount('CUS_1', {
        status: 200,
        json: { status: true, data: { bank: { name: 'Wema Bank' }, account_name: 'KORAPAY / IVL', account_number: '9930000737' } },
      }),
    ).toEqual({
      customerCode: 'CUS_1',
      accountNumber: '9930000737',
      accountName: 'KORAPAY / IVL',
      bankName: 'Wema Bank',
    });
    // Accepted, assigned later by the dedicatedaccount.assign.* webhook.
    expect(interpretDedicatedAccount('CUS_1', { status: 200, json: { status: true, message: 'Assign dedicated account in progress' } })).toEqual({
      customerCode: 'CUS_1',
      pending: true,
    });
    expect(interpretDedicatedAccount('CUS_1', { status: 200, json: { status: true, data: { assigned: false, customer: { customer_code: 'CUS_1' } } } })).toEqual({
      customerCode: 'CUS_1',
      pending: true,
    });
    expect(() => interpretDedicatedAccount('CUS_1', { status: 200, json: { status: true, data: { bank: { name: 'Wema Bank' }, account_number: 'x' } } })).toThrow(
      PaymentRailFailure,
    );
  });

  it('accepts only the hex HMAC-SHA512 of the exact body under the secret key', () => {
    const body = JSON.stringify({ event: 'charge.success', data: { reference: ref, amount: 20000 } });
    const signature = createHmac('sha512', KEY).update(body).digest('hex');
    expect(signatureMatches(KEY, body, signature)).toBe(true);
    expect(signatureMatches(KEY, body.replace('20000', '20001'), signature)).toBe(false);
    expect(signatureMatches('sk_test_another_key_000', body, signature)).toBe(false);
    expect(signatureMatches(KEY, body, undefined)).toBe(false);
    expect(signatureMatches(KEY, body, signature.slice(2))).toBe(false);
  });
});
