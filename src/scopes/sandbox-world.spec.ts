import { describe, expect, it } from '@jest/globals';
import { validateInputs } from '../verifications/verification-inputs.js';
import { sandboxBehaviour } from '../providers/sandbox.provider.js';
import { FOUND_DIGITS, holderOf, numberOf, resolveBank, sandboxPerson, Seed, WORLD_PEOPLE, type WorldNumberKind } from './sandbox-world.js';

/** A fixed spread of people over the whole world (first, last and a pseudo-random sample). */
const seed = new Seed('sandbox.world.spec');
const SAMPLE = [0, 1, WORLD_PEOPLE - 1, ...Array.from({ length: 400 }, () => seed.int(WORLD_PEOPLE))];

const SLOTS: Record<WorldNumberKind, number> = { nin: 1, bvn: 1, phone: 2, account: 2, vin: 1, vnin: 1, passport: 1 };

/** The scope whose main input each kind of number is, and its body. */
const AS_INPUT: Record<WorldNumberKind, (number: string) => [Parameters<typeof validateInputs>[0], Record<string, string>]> = {
  nin: (number) => ['nin', { nin: number }],
  bvn: (number) => ['bvn', { bvn: number }],
  phone: (number) => ['phone', { phone: number }],
  account: (number) => ['premium_bank_account', { account_number: number }],
  vin: (number) => ['pvc', { vin: number }],
  vnin: (number) => ['vnin', { vnin: number }],
  passport: (number) => ['passport', { passport_number: number }],
};

describe('The sandbox world', () => {
  it.each(Object.keys(SLOTS) as WorldNumberKind[])('%s: every number handed out leads back to its person and slot, passes validation and is answered found', (kind) => {
    const seen = new Set<string>();
    for (const index of SAMPLE) {
      for (let slot = 0; slot < SLOTS[kind]; slot++) {
        const number = numberOf(kind, index, slot);
        expect(holderOf(kind, number)).toEqual({ index, slot, handedOut: true });
        const [scope, body] = AS_INPUT[kind](number);
        expect(() => validateInputs(scope, body)).not.toThrow();
        expect(FOUND_DIGITS).toContain(number.slice(-1));
        expect(sandboxBehaviour(scope, body)).toBe('found');
        seen.add(`${index}:${slot}:${number}`);
      }
    }
    // Different people (and slots) never share a number.
    expect(new Set([...seen].map((entry) => entry.split(':')[2])).size).toBe(seen.size);
  });

  it('gives a made-up number a person by hashing it: always the same one, different for different numbers', () => {
    const made = holderOf('nin', '12345678905');
    expect(made).toEqual(holderOf('nin', '12345678905'));
    expect(made.handedOut).toBe(false);
    expect(made.index).toBeGreaterThanOrEqual(0);
    expect(made.index).toBeLessThan(WORLD_PEOPLE);
    expect(holderOf('nin', '12345678907').index).not.toBe(made.index);
    // Wrong shapes for the world (a BVN not starting with 22, a phone prefix it does not use) are made up too.
    expect(holderOf('bvn', '12345678905').handedOut).toBe(false);
    expect(holderOf('phone', '09112345675').handedOut).toBe(false);
  });

  it('a person is a pure function of the index, and neighbours are not alike', () => {
    expect(sandboxPerson(42)).toEqual(sandboxPerson(42));
    const [a, b] = [sandboxPerson(42), sandboxPerson(43)];
    for (const field of ['nin', 'bvn', 'vin', 'vnin', 'passportNumber'] as const) expect(a[field]).not.toBe(b[field]);
    expect(a.phones[0]).not.toBe(b.phones[0]);
    expect(a.accounts[0].accountNumber).not.toBe(b.accounts[0].accountNumber);
    // The first six of eleven digits: sequential indexes must not give sequential-looking numbers.
    expect(a.nin.slice(0, 6)).not.toBe(b.nin.slice(0, 6));
    expect(a.accounts[0].bankCode).not.toBe(a.accounts[1].bankCode);
  });

  describe('resolveBank', () => {
    it.each([
      ['058', '058', 'Guaranty Trust Bank'],
      ['GTBank', '058', 'Guaranty Trust Bank'],
      ['gt bank plc', '058', 'Guaranty Trust Bank'],
      ['Guaranty Trust Bank', '058', 'Guaranty Trust Bank'],
      ['GTCO', '058', 'Guaranty Trust Bank'],
      ['Access', '044', 'Access Bank'],
      ['First Bank of Nigeria', '011', 'First Bank of Nigeria'],
      ['FirstBank', '011', 'First Bank of Nigeria'],
      ['UBA', '033', 'United Bank for Africa'],
      ['Kuda MFB', '50211', 'Kuda Microfinance Bank'],
      ['zenith bank', '057', 'Zenith Bank'],
    ])('%s is %s %s', (asked, code, name) => expect(resolveBank(asked)).toEqual({ code, name }));

    it('echoes a bank it does not know, spaces collapsed', () => {
      expect(resolveBank('  Lapo   Microfinance ')).toEqual({ code: 'Lapo Microfinance', name: 'Lapo Microfinance' });
      expect(resolveBank('999')).toEqual({ code: '999', name: '999' });
    });
  });
});
