import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCOPES, type Scope } from '../scopes/scopes.js';
import { scopeBody } from '../../test/support/scope-bodies.js';
import { SandboxProvider, sandboxBehaviour, sandboxRecord } from './sandbox.provider.js';
import { READY_MADE_PEOPLE, sandboxPerson, type SandboxPerson } from '../scopes/sandbox-world.js';

const provider = new SandboxProvider();
const options = () => ({ timeoutMs: 50, signal: new AbortController().signal });

const inputFor = scopeBody;

describe('The sandbox provider', () => {
  it.each(SCOPES.map((scope) => [scope]))('%s: the last digit decides the outcome', async (scope) => {
    expect(await provider.verify(scope, inputFor(scope, '1'), options())).toEqual({ outcome: 'not_found' });
    expect(await provider.verify(scope, inputFor(scope, '2'), options())).toEqual({ outcome: 'failed', reasonCode: 'provider_error', retryable: true });
    const started = Date.now();
    expect(await provider.verify(scope, inputFor(scope, '3'), options())).toMatchObject({ outcome: 'failed', reasonCode: 'provider_timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(await provider.verify(scope, inputFor(scope, '5'), options())).toMatchObject({ outcome: 'found' });
  });

  it('answers after its configured latency, and gives up waiting when the caller does', async () => {
    const slowed = new SandboxProvider({ min: 80, max: 120 });
    let started = Date.now();
    expect(await slowed.verify('nin', inputFor('nin', '5'), options())).toMatchObject({ outcome: 'found' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 10);
    started = Date.now();
    await slowed.verify('nin', inputFor('nin', '1'), { timeoutMs: 5_000, signal: controller.signal });
    expect(Date.now() - started).toBeLessThan(75);
  });

  it('is deterministic: the same input gives the same record, another input another', () => {
    for (const scope of SCOPES) {
      expect(sandboxRecord(scope, inputFor(scope, '5'))).toEqual(sandboxRecord(scope, inputFor(scope, '5')));
      if (scope !== 'face_match') expect(sandboxRecord(scope, inputFor(scope, '5')).result).not.toEqual(sandboxRecord(scope, inputFor(scope, '7')).result);
    }
  });

  it('gives the nin and bvn records the spec lists, with a portrait beside the result', () => {
    const nin = sandboxRecord('nin', inputFor('nin', '5'));
    expect(Object.keys(nin.result)).toEqual(
      expect.arrayContaining(['firstName', 'middleName', 'lastName', 'gender', 'dateOfBirth', 'phoneNumber', 'stateOfOrigin', 'lgaOfOrigin', 'residentialAddress']),
    );
    expect(nin.portrait?.subarray(1, 4).toString()).toBe('PNG');
    const bvn = sandboxRecord('bvn', inputFor('bvn', '5'));
    expect(Object.keys(bvn.result)).toEqual(
      expect.arrayContaining([
        'phoneNumber1',
        'phoneNumber2',
        'email',
        'stateOfResidence',
        'nationality',
        'maritalStatus',
        'enrollmentBank',
        'enrollmentBranch',
        'registrationDate',
        'levelOfAccount',
        'watchListed',
      ]),
    );
    expect(bvn.portrait).toBeDefined();
    expect(sandboxRecord('pnv', inputFor('pnv', '5')).portrait).toBeDefined();
    expect(JSON.stringify(nin.result)).not.toMatch(/portrait/i);
  });

  it('returns the account name for bank accounts and the linked identity for phones, across phone forms', () => {
    expect(sandboxRecord('bank_account', { ...inputFor('bank_account', '5'), bank: '058' }).result).toMatchObject({
      accountName: expect.stringMatching(/^[A-Z]+ [A-Z]+ [A-Z]+$/),
      bankName: 'Guaranty Trust Bank',
    });
    const local = sandboxRecord('phone', { phone: '08031234565' }).result;
    expect(sandboxRecord('phone', { phone: '+2348031234565' }).result).toEqual(local);
    expect(local).toMatchObject({ phoneNumber: '08031234565', firstName: expect.any(String), nin: expect.stringMatching(/^\d{11}$/) });
  });

  it('face_match: 4 is a found result with match false; others match', async () => {
    expect(sandboxBehaviour('face_match', inputFor('face_match', '4'))).toBe('no_match');
    expect(await provider.verify('face_match', inputFor('face_match', '4'), options())).toMatchObject({
      outcome: 'found',
      result: { match: false, confidence: expect.any(Number) },
    });
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

describe('The sandbox tells one story', () => {
  const found = async (scope: Scope, input: Record<string, string>): Promise<Record<string, unknown>> => {
    const outcome = await provider.verify(scope, input, options());
    if (outcome.outcome !== 'found') throw new Error(`${scope} was ${outcome.outcome}, not found`);
    return outcome.result;
  };
  const namesOf = (p: SandboxPerson) => ({ firstName: p.firstName, middleName: p.middleName, lastName: p.lastName });
  const identityOf = (p: SandboxPerson) => ({ ...namesOf(p), gender: p.gender, dateOfBirth: p.dateOfBirth });

  describe.each(READY_MADE_PEOPLE.map((index) => [index]))('ready-made person %i', (index) => {
    const p = sandboxPerson(index);

    it('every check on their numbers is found and names them', async () => {
      expect(await found('nin', { nin: p.nin })).toMatchObject({ nin: p.nin, ...identityOf(p), phoneNumber: p.phones[0] });
      expect(await found('bvn', { bvn: p.bvn })).toMatchObject({
        bvn: p.bvn,
        ...identityOf(p),
        phoneNumber1: p.phones[0],
        phoneNumber2: p.phones[1],
        enrollmentBank: p.accounts[0].bankName,
      });
      for (const phone of p.phones) {
        expect(await found('pnv', { phone })).toMatchObject({ nin: p.nin, ...identityOf(p), phoneNumber: phone });
        expect(await found('phone', { phone: `+234${phone.slice(1)}` })).toMatchObject({ nin: p.nin, ...identityOf(p), phoneNumber: phone });
      }
      const accountName = `${p.lastName} ${p.firstName} ${p.middleName}`.toUpperCase();
      for (const account of p.accounts) {
        expect(await found('bank_account', { bank: account.bankCode, account_number: account.accountNumber })).toEqual({
          accountNumber: account.accountNumber,
          accountName,
          bankCode: account.bankCode,
          bankName: account.bankName,
        });
        expect(await found('premium_bank_account', { account_number: account.accountNumber })).toMatchObject({
          accountName,
          bankCode: account.bankCode,
          bankName: account.bankName,
          ...namesOf(p),
          bvn: p.bvn,
        });
      }
      expect(await found('pvc', { vin: p.vin.toLowerCase() })).toMatchObject({ vin: p.vin, ...identityOf(p), state: p.stateOfResidence });
      expect(await found('vnin', { vnin: p.vnin })).toEqual({ vnin: p.vnin, ...identityOf(p) });
      expect(await found('passport', { passport_number: p.passportNumber })).toMatchObject({ passportNumber: p.passportNumber, ...identityOf(p) });
      for (const against of [{ nin: p.nin }, { bvn: p.bvn }] as Record<string, string>[])
        expect(await found('face_match', { image: 'aW1hZ2U=', ...against })).toMatchObject({ match: true });
    });

    it('their nin, pnv and bvn records show one portrait', () => {
      const portrait = sandboxRecord('nin', { nin: p.nin }).portrait;
      expect(portrait).toBeDefined();
      expect(sandboxRecord('pnv', { phone: p.phones[1] }).portrait).toEqual(portrait);
      expect(sandboxRecord('bvn', { bvn: p.bvn }).portrait).toEqual(portrait);
    });
  });

  /** Follows every number a record links to, checking each is found and names the same person. */
  async function followLinks(scope: Scope, input: Record<string, string>): Promise<number> {
    const start = await found(scope, input);
    const who = { firstName: start.firstName, lastName: start.lastName };
    const queue: [Scope, Record<string, string>][] = [];
    const link = (result: Record<string, unknown>) => {
      if (typeof result.nin === 'string') queue.push(['nin', { nin: result.nin }]);
      if (typeof result.bvn === 'string') queue.push(['bvn', { bvn: result.bvn }]);
      for (const field of ['phoneNumber', 'phoneNumber1', 'phoneNumber2']) {
        if (typeof result[field] === 'string') queue.push(['pnv', { phone: result[field] }], ['phone', { phone: result[field] }]);
      }
    };
    link(start);
    const seen = new Set<string>();
    while (queue.length > 0 && seen.size < 50) {
      const [nextScope, nextInput] = queue.shift()!;
      const key = `${nextScope}:${JSON.stringify(nextInput)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const result = await found(nextScope, nextInput);
      expect(result).toMatchObject(who);
      link(result);
    }
    return seen.size;
  }

  it.each([
    ['nin', { nin: '12345678905' }],
    ['nin', { nin: '80417352965' }],
    ['bvn', { bvn: '22345678905' }],
    ['pnv', { phone: '08031234565' }],
    ['phone', { phone: '+2348095173640' }],
    ['premium_bank_account', { account_number: '0123456785' }],
    ['nin', { nin: sandboxPerson(READY_MADE_PEOPLE[0]).nin }],
  ] as [Scope, Record<string, string>][])('%s %j: following the links gives found records of the same person', async (scope, input) => {
    expect(await followLinks(scope, input)).toBeGreaterThan(2);
  });

  it('a made-up number names one person whichever scope reads it', async () => {
    expect(await found('pnv', { phone: '08031234565' })).toMatchObject(await found('phone', { phone: '08031234565' }).then(({ phoneNumber: _p, network: _n, ...rest }) => rest));
    const basic = await found('bank_account', { bank: '058', account_number: '0123456785' });
    const premium = await found('premium_bank_account', { account_number: '0123456785' });
    expect(premium.accountName).toBe(basic.accountName);
    expect(premium).toMatchObject({ firstName: expect.any(String), bvn: expect.stringMatching(/^22\d{9}$/) });
    expect(await found('bvn', { bvn: premium.bvn as string })).toMatchObject({ firstName: premium.firstName, lastName: premium.lastName });
  });

  it('a NIN record’s phone is answered found, for the same NIN holder', async () => {
    for (let n = 0; n < 200; n++) {
      const nin = `${String(10_000_000_00 + n * 7_919).padStart(10, '0')}${5 + (n % 5)}`;
      const record = await found('nin', { nin });
      const phone = record.phoneNumber as string;
      expect(sandboxBehaviour('pnv', { phone })).toBe('found');
      expect(await found('pnv', { phone })).toMatchObject({ firstName: record.firstName, lastName: record.lastName, dateOfBirth: record.dateOfBirth });
    }
  });

  it('echoes the bank asked for, normalised', async () => {
    expect(await found('bank_account', { bank: 'GTBank', account_number: '0123456785' })).toMatchObject({ bankCode: '058', bankName: 'Guaranty Trust Bank' });
    expect(await found('premium_bank_account', { bank: 'zenith', account_number: '0123456785' })).toMatchObject({ bankCode: '057', bankName: 'Zenith Bank' });
    expect(await found('bank_account', { bank: 'Lapo MFB', account_number: '0123456785' })).toMatchObject({ bankCode: 'Lapo MFB', bankName: 'Lapo MFB' });
  });

  it('docs/sandbox.md lists exactly the ready-made people, with their numbers', () => {
    const doc = readFileSync(join(process.cwd(), 'docs', 'sandbox.md'), 'utf8');
    const rows = doc.split('\n').filter((line) => /^\| [A-Z][a-z]+ [A-Z][a-z]+ [A-Z][a-z]+ \| (Male|Female), /.test(line));
    expect(rows.map((row) => row.split('|')[1].trim())).toEqual(
      READY_MADE_PEOPLE.map((index) => {
        const p = sandboxPerson(index);
        return `${p.firstName} ${p.middleName} ${p.lastName}`;
      }),
    );
    for (const [row, index] of rows.map((line, at) => [line, READY_MADE_PEOPLE[at]] as const)) {
      const p = sandboxPerson(index);
      const cells = row
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      const accounts = p.accounts.map((account) => `\`${account.accountNumber}\` ${account.bankName} (\`${account.bankCode}\`)`).join(', ');
      expect(cells).toEqual([
        `${p.firstName} ${p.middleName} ${p.lastName}`,
        `${p.gender}, ${p.dateOfBirth}`,
        `\`${p.nin}\``,
        `\`${p.bvn}\``,
        `\`${p.phones[0]}\`, \`${p.phones[1]}\``,
        accounts,
        `\`${p.vin}\``,
        `\`${p.vnin}\``,
        `\`${p.passportNumber}\``,
      ]);
    }
    // The input examples are the first person's numbers, and pass validation.
    const first = sandboxPerson(READY_MADE_PEOPLE[0]);
    for (const example of [first.nin, first.bvn, first.phones[0], first.vin, first.vnin, first.passportNumber, first.accounts[0].accountNumber])
      expect(doc).toContain(`| \`${example}\``);
  });
});
