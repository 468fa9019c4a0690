import { resolveBank } from '../banks.js';
import { ACCOUNT, BANK } from '../input-formats.js';
import type { JsonObject } from '../shapes.js';
import { ownerOf } from '../sandbox-records.js';
import type { SandboxPerson } from '../sandbox-world.js';
import { BANK_ACCOUNT } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';

/** The sandbox's account record: the holder depends on the account number alone; the bank is the one asked for, else the account's own. */
export function sandboxAccount(input: Readonly<Record<string, string>>): { holder: SandboxPerson; account: JsonObject } {
  const { person: p, slot } = ownerOf('account', input.account_number);
  const own = p.accounts[slot];
  const bank = input.bank !== undefined ? resolveBank(input.bank) : { code: own.bankCode, name: own.bankName };
  const accountName = `${p.lastName} ${p.firstName} ${p.middleName}`.toUpperCase();
  return { holder: p, account: { accountNumber: input.account_number, accountName, bankCode: bank.code, bankName: bank.name } };
}

export const bankAccount = defineScope({
  name: 'bank_account',
  summary: 'Verify a bank account',
  description: 'Answers the name on a bank account (NUBAN) at a bank.',
  defaultPriceKobo: 5_000,
  inputs: { bank: { required: true, format: BANK }, account_number: { required: true, format: ACCOUNT } },
  results: BANK_ACCOUNT,
  sandbox: {
    keyInput: (input) => input.account_number ?? '',
    record: (input) => ({ result: sandboxAccount(input).account }),
  },
});
