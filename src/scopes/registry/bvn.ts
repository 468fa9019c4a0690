import { BVN } from '../input-formats.js';
import { names, ownerOf, portraitOf } from '../sandbox-records.js';
import { isoDate, PLACES, Seed } from '../sandbox-world.js';
import { IDENTITY, PORTRAIT, text } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';

export const bvn = defineScope({
  name: 'bvn',
  summary: 'Verify a BVN',
  description: 'Looks up a Bank Verification Number.',
  defaultPriceKobo: 10_000,
  inputs: { bvn: { required: true, format: BVN } },
  results: {
    bvn: text(),
    ...IDENTITY,
    phoneNumber1: { kind: 'phone' },
    phoneNumber2: { kind: 'phone' },
    email: text(),
    stateOfOrigin: text(),
    lgaOfOrigin: text(),
    stateOfResidence: text(),
    residentialAddress: text(),
    nationality: text(),
    maritalStatus: text(),
    enrollmentBank: text(),
    enrollmentBranch: text(),
    registrationDate: { kind: 'date' },
    levelOfAccount: text(),
    watchListed: { kind: 'boolean' },
    nin: text('the NIN linked to the BVN'),
    ...PORTRAIT,
  },
  sandbox: {
    keyInput: (input) => input.bvn ?? '',
    record: (input) => {
      const { person: p } = ownerOf('bvn', input.bvn);
      const seed = new Seed(`sandbox-world:bvn:${p.index}`);
      const registered = 2014 + seed.int(10);
      return {
        result: {
          bvn: input.bvn,
          ...names(p),
          phoneNumber1: p.phones[0],
          phoneNumber2: p.phones[1],
          email: `${p.firstName}.${p.lastName}${seed.int(100)}@example.ng`.toLowerCase(),
          stateOfOrigin: p.stateOfOrigin,
          lgaOfOrigin: p.lgaOfOrigin,
          stateOfResidence: p.stateOfResidence,
          residentialAddress: p.residentialAddress,
          nationality: 'Nigerian',
          maritalStatus: seed.pick(['Single', 'Married', 'Married', 'Divorced', 'Widowed']),
          enrollmentBank: p.accounts[0].bankName,
          enrollmentBranch: `${seed.pick(PLACES).town} Branch`,
          registrationDate: isoDate(registered, 1 + seed.int(12), 1 + seed.int(28)),
          levelOfAccount: seed.pick(['Level 1 - Low Level Accounts', 'Level 2 - Medium Level Accounts', 'Level 3 - High Level Accounts']),
          watchListed: false,
        },
        portrait: portraitOf(p),
      };
    },
  },
});
