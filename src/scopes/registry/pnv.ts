import { localPhone, PHONE } from '../input-formats.js';
import { identityRecord, ownerOf, portraitOf } from '../sandbox-records.js';
import { NIN_RECORD } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';

export const pnv = defineScope({
  name: 'pnv',
  summary: 'Verify a phone number against the NIN register (pnv)',
  description: 'Resolves the NIN registered against a phone number and answers its identity record.',
  defaultPriceKobo: 10_000,
  inputs: { phone: { required: true, format: PHONE } },
  results: NIN_RECORD,
  sandbox: {
    keyInput: (input) => input.phone ?? '',
    record: (input) => {
      const { person: p } = ownerOf('phone', localPhone(input.phone));
      return { result: { nin: p.nin, ...identityRecord(p, localPhone(input.phone)) }, portrait: portraitOf(p) };
    },
  },
});
