import { createHash } from 'node:crypto';
import type { FieldError } from '../shapes.js';
import { BVN, IMAGE, NIN } from '../input-formats.js';
import { ownerOf } from '../sandbox-records.js';
import { Seed } from '../sandbox-world.js';
import { defineScope } from '../scope-definition.js';

/** face_match compares its image with the portrait of exactly one of these. */
export const FACE_MATCH_SUBJECTS = ['nin', 'bvn'] as const;

export const faceMatch = defineScope({
  name: 'face_match',
  summary: 'Match a face against a NIN or BVN portrait',
  description: 'Compares an image with the portrait on file for a NIN or a BVN (exactly one): `{match, confidence}`.',
  defaultPriceKobo: 20_000,
  inputs: { image: { required: true, format: IMAGE }, nin: { required: false, format: NIN }, bvn: { required: false, format: BVN } },
  across: {
    problems: (body) => {
      const given = FACE_MATCH_SUBJECTS.filter((field) => body[field] !== undefined && body[field] !== null);
      const problems: FieldError[] = [];
      if (given.length === 0) problems.push({ field: 'nin', message: 'one of nin or bvn is required to compare the image against' });
      if (given.length === 2) problems.push({ field: 'bvn', message: 'give nin or bvn, not both' });
      return problems;
    },
    schema: { oneOf: FACE_MATCH_SUBJECTS.map((field) => ({ required: [field] })), description: 'the image, and exactly one of nin or bvn' },
  },
  example: { image: IMAGE.example, nin: NIN.example },
  results: {
    match: { kind: 'boolean', description: 'whether the image shows the person on file' },
    confidence: { kind: 'percent', description: 'how alike, 0 to 100, one decimal' },
  },
  sandbox: {
    keyInput: (input) => input.nin ?? input.bvn ?? '',
    noMatchOnFour: true,
    record: (input, behaviour) => {
      const { person: p } = input.nin !== undefined ? ownerOf('nin', input.nin) : ownerOf('bvn', input.bvn);
      const seed = new Seed(
        `sandbox-world:face:${p.index}:${createHash('sha256')
          .update(input.image ?? '')
          .digest('hex')}`,
      );
      const match = behaviour !== 'no_match';
      // Confidence in percent with one decimal: high for a match, low otherwise.
      const confidence = match ? 80 + seed.int(200) / 10 : 5 + seed.int(400) / 10;
      return { result: { match, confidence } };
    },
  },
});
