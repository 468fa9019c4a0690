import { NIN } from '../input-formats.js';
import { identityRecord, ownerOf, portraitOf } from '../sandbox-records.js';
import { NIN_RECORD } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';

export const nin = defineScope({
  name: 'nin',
  summary: 'Verify a NIN',
  description: 'Looks up a National Identification Number in the NIN register.',
  defaultPriceKobo: 10_000,
  inputs: { nin: { required: true, format: NIN } },
  results: NIN_RECORD,
  sandbox: {
    keyInput: (input) => input.nin ?? '',
    record: (input) => {
      const { person: p } = ownerOf('nin', input.nin);
      return { result: { nin: input.nin, ...identityRecord(p, p.phones[0]) }, portrait: portraitOf(p) };
    },
  },
});
