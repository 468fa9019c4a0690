import { describe, expect, it } from '@jest/globals';
import { decodePortrait, normaliseDate, normaliseFaceMatch, normaliseGender, normalisePhone, normaliseRecord } from './normalise.js';
import { dojah, PORTRAIT, PORTRAIT_WRAPPED, prembly } from './upstream-fixtures.testing.js';

const options = { referenceYear: 2026 };

describe('normalising upstream records', () => {
  describe('dates of birth become YYYY-MM-DD', () => {
    it.each([
      ['10-06-1993', '1993-06-10'],
      ['10/06/1982', '1982-06-10'],
      ['28-Jun-2000', '2000-06-28'],
      ['28-Jun-00', '2000-06-28'],
      ['15-Apr-85', '1985-04-15'],
      ['01-Jan-26', '2026-01-01'],
      ['1990-04-07', '1990-04-07'],
      ['1990-04-07T00:00:00.000Z', '1990-04-07'],
    ])('%s → %s', (given, expected) => expect(normaliseDate(given, options)).toBe(expected));

    it.each([['31-02-1990'], ['Not Available'], [''], ['06/1990'], ['yesterday'], [null], [19900407], ['32-Jan-90']])('leaves %p out rather than guessing', (given) =>
      expect(normaliseDate(given, options)).toBeUndefined(),
    );
  });

  it.each([
    ['m', 'Male'],
    ['M', 'Male'],
    ['male', 'Male'],
    ['Male', 'Male'],
    ['f', 'Female'],
    ['FEMALE', 'Female'],
    ['Undecided', 'Undecided'],
  ])('gender %s → %s', (given, expected) => expect(normaliseGender(given)).toBe(expected));

  it.each([
    ['2348137877844', '08137877844'],
    ['+234 803 123 4567', '08031234567'],
    ['8031234567', '08031234567'],
    ['08031234567', '08031234567'],
  ])('phone %s → %s', (given, expected) => expect(normalisePhone(given)).toBe(expected));

  describe('portraits', () => {
    it('decodes raw base64, a data URI and base64 wrapped in newlines to the same bytes', () => {
      for (const variant of [PORTRAIT.toString('base64'), `data:image/png;base64,${PORTRAIT.toString('base64')}`, PORTRAIT_WRAPPED, `${PORTRAIT_WRAPPED}\r\n`]) {
        expect(decodePortrait(variant)?.equals(PORTRAIT)).toBe(true);
      }
    });
    it.each([['Not Available'], [''], ['<base64 encoded image>'], [null], [42]])('%p means no portrait', (given) => expect(decodePortrait(given)).toBeUndefined());
  });

  it("maps Dojah's NIN entity to the spec's fields, the portrait beside the result", () => {
    const { result, portrait } = normaliseRecord('nin', dojah.nin.entity, { input: { nin: '12345678905' } }, options);
    expect(result).toEqual({
      nin: '12345678905',
      firstName: 'MOSHOOD',
      middleName: 'KOLAWOLE',
      lastName: 'SALIU',
      gender: 'Male',
      dateOfBirth: '1993-06-10',
      phoneNumber: '08137877844',
      stateOfOrigin: 'Ondo',
      lgaOfOrigin: 'Idanre',
      residentialAddress: 'NO 212 BROAD STREET ISALU QUARTERS II ODODE IDANRE',
      stateOfResidence: 'Ondo',
    });
    expect(portrait?.equals(PORTRAIT)).toBe(true);
    expect(JSON.stringify(result)).not.toContain(PORTRAIT.toString('base64').slice(0, 40));
  });

  it("maps Prembly's NIN data (lowercase names, ISO date, f, 234 phone) to the same fields", () => {
    const { result, portrait } = normaliseRecord('nin', prembly.nin.nin_data, { input: { nin: '12345678905' } }, options);
    expect(result).toMatchObject({
      firstName: 'Ngozi',
      middleName: 'Adaeze',
      lastName: 'Okafor',
      gender: 'Female',
      dateOfBirth: '1990-04-07',
      phoneNumber: '08031234567',
      stateOfOrigin: 'Anambra',
      lgaOfOrigin: 'Awka South',
      residentialAddress: '12 Zik Avenue, Awka',
    });
    expect(portrait?.equals(PORTRAIT)).toBe(true);
  });

  it("maps Dojah's full BVN: dd-Mon-yy dates, YES/NO flags, empty fields left out", () => {
    const { result, portrait } = normaliseRecord('bvn', dojah.bvn.entity, { input: { bvn: '22468537919' } }, options);
    expect(result).toMatchObject({
      bvn: '22468537919',
      dateOfBirth: '2000-06-28',
      registrationDate: '2018-03-21',
      watchListed: false,
      phoneNumber1: '07085460116',
      enrollmentBank: '058',
      levelOfAccount: 'Level 2 - Medium Level Accounts',
    });
    expect(result).not.toHaveProperty('phoneNumber2');
    expect(result).not.toHaveProperty('nin');
    expect(portrait?.equals(PORTRAIT)).toBe(true);
  });

  it('a BVN whose portrait is "Not Available" has none', () => {
    expect(normaliseRecord('bvn', prembly.bvn.data, { input: { bvn: '22222222222' } }, options).portrait).toBeUndefined();
  });

  it("reads Dojah's voter's card keys that end in a colon", () => {
    expect(normaliseRecord('pvc', dojah.vin.entity, { input: { vin: '90f5b1c5bd295355586' } }, options).result).toEqual({
      vin: '90F5B1C5BD295355586',
      fullName: 'SALIU MOSHOOD KOLAWOLE',
      gender: 'Male',
      occupation: 'STUDENT',
      state: 'ONDO',
      lga: 'IDANRE',
      registrationArea: 'ISALU JIGBOKIN',
      pollingUnit: 'OJAJIGBOKIN, O/S IN FRONT OF ABANA I & II',
      pollingUnitCode: '28/08/08/005',
    });
  });

  it('counts only fields the record itself gave, not the echoed input', () => {
    expect(normaliseRecord('nin', { unexpected: 'field' }, { input: { nin: '12345678905' } }, options)).toEqual({ result: { nin: '12345678905' }, recognised: 0 });
  });

  it('face matches in percent, one decimal; the threshold decides when the upstream does not', () => {
    expect(normaliseFaceMatch(99.99803924560547, true)).toEqual({ match: true, confidence: 100 });
    expect(normaliseFaceMatch(0.42, undefined)).toEqual({ match: false, confidence: 42 });
    expect(normaliseFaceMatch('95.26', undefined)).toEqual({ match: true, confidence: 95.3 });
    expect(normaliseFaceMatch('high', true)).toBeUndefined();
    expect(normaliseFaceMatch(140, true)).toBeUndefined();
  });
});
