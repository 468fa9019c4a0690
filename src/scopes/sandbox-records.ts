import { crc32, deflateSync } from 'node:zlib';
import { sampleJpeg, type SampleName } from './sandbox-faces.js';
import type { JsonObject } from './shapes.js';
import { holderOf, sandboxPerson, Seed, type SandboxPerson, type WorldNumberKind } from './sandbox-world.js';

/**
 * What the scopes' sandbox answers share: the owner of a number in the sandbox world
 * (sandbox-world.ts), the parts of a record, and the portrait of a person.
 */

/** The person a record is about: the owner of the scope's main number (normalised: local phone form, upper case), and which of their numbers it is. */
export function ownerOf(kind: WorldNumberKind, number: string): { person: SandboxPerson; slot: number } {
  const owner = holderOf(kind, number);
  return { person: sandboxPerson(owner.index), slot: owner.slot };
}

export function names(p: SandboxPerson): JsonObject {
  return { firstName: p.firstName, middleName: p.middleName, lastName: p.lastName, gender: p.gender, dateOfBirth: p.dateOfBirth };
}

export function identityRecord(p: SandboxPerson, phoneNumber: string): JsonObject {
  return { ...names(p), phoneNumber, stateOfOrigin: p.stateOfOrigin, lgaOfOrigin: p.lgaOfOrigin, residentialAddress: p.residentialAddress };
}

/**
 * Ready-made people whose portrait is a real face, by NIN (docs/sandbox.md): face_match against them
 * compares faces (sandbox.provider.ts). Uche's is the library author's photo, Amaka's someone else's.
 */
export const SANDBOX_FACES: Readonly<Record<string, SampleName>> = { '85083057350': 'authorParty', '54265263716': 'otherPerson' };

/** One portrait per person, so the nin, pnv and bvn records of one person show the same face. */
export function portraitOf(p: SandboxPerson): Buffer {
  const face = SANDBOX_FACES[p.nin];
  return face === undefined ? sandboxPortrait(`sandbox-world:person:${p.index}`) : sampleJpeg(face);
}

/** A small, valid PNG (24×24, a colour derived from the identity): enough to exercise storage and links. */
export function sandboxPortrait(material: string): Buffer {
  const seed = new Seed(`portrait:${material}`);
  const [r, g, b] = [seed.int(256), seed.int(256), seed.int(256)];
  // The image depends on the colour only: keep the last few encoded (deflate is most of a check's
  // sandbox cost), keyed by the colour, so no identity stays in memory.
  const colour = (r << 16) | (g << 8) | b;
  let png = recentPortraits.get(colour);
  if (png === undefined) {
    png = encodePortrait(r, g, b);
    if (recentPortraits.size >= RECENT_PORTRAITS) recentPortraits.delete(recentPortraits.keys().next().value as number);
    recentPortraits.set(colour, png);
  }
  return png;
}

const RECENT_PORTRAITS = 256;
const recentPortraits = new Map<number, Buffer>();

function encodePortrait(r: number, g: number, b: number): Buffer {
  const size = 24;
  const raw = Buffer.alloc((size * 3 + 1) * size);
  for (let y = 0; y < size; y++) {
    const row = y * (size * 3 + 1);
    raw[row] = 0;
    for (let x = 0; x < size; x++) {
      const inFace = (x - 12) ** 2 + (y - 10) ** 2 < 49 || (y > 17 && Math.abs(x - 12) < 9);
      raw[row + 1 + x * 3] = inFace ? r : 235;
      raw[row + 2 + x * 3] = inFace ? g : 235;
      raw[row + 3 + x * 3] = inFace ? b : 235;
    }
  }
  const chunk = (type: string, data: Buffer): Buffer => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed) >>> 0);
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
