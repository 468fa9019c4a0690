import { VIN } from '../input-formats.js';
import { names, ownerOf } from '../sandbox-records.js';
import { Seed } from '../sandbox-world.js';
import { IDENTITY, text } from '../scope-results.js';
import { defineScope } from '../scope-definition.js';

export const pvc = defineScope({
  name: 'pvc',
  summary: "Verify a voter's card (VIN)",
  description: "Looks up the Voter Identification Number of a permanent voter's card.",
  defaultPriceKobo: 10_000,
  inputs: { vin: { required: true, format: VIN } },
  results: {
    vin: text(),
    fullName: text(),
    ...IDENTITY,
    occupation: text(),
    state: text(),
    lga: text(),
    registrationArea: text(),
    pollingUnit: text(),
    pollingUnitCode: text(),
  },
  sandbox: {
    keyInput: (input) => input.vin ?? '',
    record: (input) => {
      const { person: p } = ownerOf('vin', input.vin.toUpperCase());
      const seed = new Seed(`sandbox-world:pvc:${p.index}`);
      // Voters register where they live.
      return {
        result: {
          vin: input.vin.toUpperCase(),
          ...names(p),
          occupation: seed.pick(['Trader', 'Teacher', 'Civil Servant', 'Engineer', 'Farmer', 'Student', 'Nurse', 'Accountant']),
          state: p.stateOfResidence,
          lga: p.lgaOfResidence,
          registrationArea: `Ward ${1 + seed.int(12)}`,
          pollingUnit: `PU ${String(1 + seed.int(60)).padStart(3, '0')}, ${seed.pick(['Primary School', 'Town Hall', 'Market Square', 'Health Centre'])}`,
        },
      };
    },
  },
});
