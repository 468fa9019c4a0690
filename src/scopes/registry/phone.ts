import { localPhone, PHONE } from '../input-formats.js';
import { names, ownerOf } from '../sandbox-records.js';
import { NETWORKS } from '../sandbox-world.js';
import { IDENTITY, PORTRAIT, text } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';

export const phone = defineScope({
  name: 'phone',
  summary: 'Verify a phone number',
  description: 'Answers the identity linked to a phone number.',
  defaultPriceKobo: 7_500,
  inputs: { phone: { required: true, format: { ...PHONE, example: '08131346060' } } },
  results: {
    phoneNumber: { kind: 'phone' },
    network: text(),
    nin: text('the NIN linked to the phone number'),
    ...IDENTITY,
    stateOfOrigin: text(),
    lgaOfOrigin: text(),
    residentialAddress: text(),
    ...PORTRAIT,
  },
  sandbox: {
    keyInput: (input) => input.phone ?? '',
    record: (input) => {
      const number = localPhone(input.phone);
      const { person: p } = ownerOf('phone', number);
      return { result: { phoneNumber: number, network: NETWORKS[number.slice(0, 4)] ?? 'MTN', nin: p.nin, ...names(p) } };
    },
  },
});
