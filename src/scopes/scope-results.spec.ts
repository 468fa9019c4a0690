import { describe, expect, it } from '@jest/globals';
import { isRecordScope, normaliseRecord } from '../providers/normalise.js';
import { sandboxRecord } from '../providers/sandbox.provider.js';
import { scopeExample } from '../verifications/verification-inputs.js';
import type { ResultFieldKind } from './scope-results.js';
import { scopeDefinition, SCOPES, type Scope } from './scopes.js';

/**
 * The result fields the OpenAPI document names per scope are all the normaliser and the sandbox
 * can write: a field either writes that the list lacks would reach integrators undocumented.
 */

/** An upstream record carrying every name the normaliser reads, each with a value it keeps. */
const EVERYTHING: Record<string, unknown> = {
  first_name: 'ADA',
  middle_name: 'NGOZI',
  last_name: 'OBI',
  full_name: 'OBI ADA NGOZI',
  gender: 'f',
  date_of_birth: '10-06-1993',
  phone_number: '2348031234567',
  phone_number1: '08031234567',
  phone_number2: '08031234568',
  email: 'ada@example.ng',
  state_of_origin: 'Anambra',
  lga_of_origin: 'Onitsha North',
  state_of_residence: 'Lagos',
  residential_address: '1 Marina, Lagos',
  nin: '21440414976',
  vnin: 'YS79377970479239',
  bvn: '22126025250',
  nationality: 'Nigerian',
  marital_status: 'Single',
  enrollment_bank: '058',
  enrollment_branch: 'Ikeja',
  registration_date: '2016-03-04',
  level_of_account: 'Level 2',
  watch_listed: 'NO',
  voter_identification_number: '70C99262607B747FB36',
  occupation: 'Trader',
  state: 'Lagos',
  local_government: 'Ikeja',
  registration_area: 'Ward 3',
  polling_unit: 'PU 004',
  polling_unit_code: '24/09/03/004',
  account_number: '7753968106',
  account_name: 'OBI ADA NGOZI',
  bank_code: '035',
  bank_name: 'Wema Bank',
  account_currency: 'NGN',
  passport_number: 'B43975538',
  date_of_issue: '2019-01-02',
  expiry_date: '2029-01-01',
  issue_place: 'Ikoyi',
  identity_type: 'BVN',
  identity_number: '22126025250',
};

function kindOf(value: unknown): ResultFieldKind[] {
  if (typeof value === 'boolean') return ['boolean'];
  if (typeof value === 'number') return ['percent'];
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return ['date', 'text'];
  return ['text', 'gender', 'phone', 'url', 'timestamp'];
}

function undocumented(scope: Scope, result: Record<string, unknown>): string[] {
  const fields = scopeDefinition(scope).results;
  return Object.entries(result)
    .filter(([field, value]) => fields[field] === undefined || !kindOf(value).includes(fields[field].kind))
    .map(([field, value]) => `${scope}.${field} = ${JSON.stringify(value)}`);
}

describe('The result fields of every scope', () => {
  it.each(SCOPES.filter(isRecordScope))('name everything the normaliser writes for %s', (scope) => {
    const { result } = normaliseRecord(scope, EVERYTHING, { input: scopeExample(scope) }, { referenceYear: 2026 });
    expect(Object.keys(result).length).toBeGreaterThan(2);
    expect(undocumented(scope, result)).toEqual([]);
  });

  it.each([...SCOPES])('name everything the sandbox writes for %s', (scope) => {
    const { result } = sandboxRecord(scope, scopeExample(scope));
    expect(undocumented(scope, result)).toEqual([]);
  });
});
