import { ACCOUNT, BANK } from '../input-formats.js';
import { Seed } from '../sandbox-world.js';
import { BANK_ACCOUNT, IDENTITY, text } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';
import { sandboxAccount } from './bank-account.js';

export const premiumBankAccount = defineScope({
  name: 'premium_bank_account',
  summary: "Verify a bank account and its holder's identity",
  description: "The bank account check, enriched with the holder's identity and BVN; `bank` is optional.",
  defaultPriceKobo: 7_500,
  inputs: { account_number: { required: true, format: ACCOUNT }, bank: { required: false, format: BANK } },
  results: {
    ...BANK_ACCOUNT,
    ...IDENTITY,
    phoneNumber: { kind: 'phone' },
    bvn: text("the account holder's BVN"),
    currency: text(),
    accountType: text(),
    accountStatus: text(),
  },
  sandbox: {
    keyInput: (input) => input.account_number ?? '',
    record: (input) => {
      const { holder: p, account } = sandboxAccount(input);
      const seed = new Seed(`sandbox-world:account:${input.account_number}`);
      return {
        result: {
          ...account,
          firstName: p.firstName,
          middleName: p.middleName,
          lastName: p.lastName,
          accountType: seed.pick(['Savings', 'Current']),
          accountStatus: 'Active',
          currency: 'NGN',
          bvn: p.bvn,
        },
      };
    },
  },
});
