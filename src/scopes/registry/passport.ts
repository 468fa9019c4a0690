import { PASSPORT } from '../input-formats.js';
import { names, ownerOf } from '../sandbox-records.js';
import { isoDate, Seed } from '../sandbox-world.js';
import { IDENTITY, PORTRAIT, text } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';

export const passport = defineScope({
  name: 'passport',
  summary: 'Verify a passport',
  description: 'Looks up a Nigerian passport number.',
  defaultPriceKobo: 15_000,
  inputs: { passport_number: { required: true, format: PASSPORT } },
  results: { passportNumber: text(), ...IDENTITY, issueDate: { kind: 'date' }, expiryDate: { kind: 'date' }, issuePlace: text(), nationality: text(), ...PORTRAIT },
  sandbox: {
    keyInput: (input) => input.passport_number ?? '',
    record: (input) => {
      const { person: p } = ownerOf('passport', input.passport_number.toUpperCase());
      const seed = new Seed(`sandbox-world:passport:${p.index}`);
      const issuedYear = 2016 + seed.int(8);
      const issued = isoDate(issuedYear, 1 + seed.int(12), 1 + seed.int(28));
      return {
        result: {
          passportNumber: input.passport_number.toUpperCase(),
          ...names(p),
          issueDate: issued,
          expiryDate: `${issuedYear + 10}${issued.slice(4)}`,
          issuePlace: seed.pick(['Ikoyi', 'Alausa', 'Abuja', 'Kano', 'Port Harcourt', 'Enugu']),
          nationality: 'Nigerian',
        },
      };
    },
  },
});
