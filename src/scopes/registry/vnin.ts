import { VNIN } from '../input-formats.js';
import { names, ownerOf } from '../sandbox-records.js';
import { IDENTITY, PORTRAIT, text } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';

export const vnin = defineScope({
  name: 'vnin',
  summary: 'Verify a virtual NIN',
  description: 'Looks up the identity behind a virtual NIN token.',
  defaultPriceKobo: 10_000,
  inputs: { vnin: { required: true, format: VNIN } },
  results: { vnin: text(), ...IDENTITY, phoneNumber: { kind: 'phone' }, ...PORTRAIT },
  sandbox: {
    keyInput: (input) => input.vnin ?? '',
    record: (input) => {
      const { person: p } = ownerOf('vnin', input.vnin.toUpperCase());
      return { result: { vnin: input.vnin.toUpperCase(), ...names(p) } };
    },
  },
});
