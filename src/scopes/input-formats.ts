import { createHash } from 'node:crypto';
import type { JsonValue, Schema } from './shapes.js';

/**
 * The formats scope inputs are validated by (src/scopes/registry/ names them per input). Messages
 * name fields and rules, never values: the values are personal data.
 */

/** face_match images: decoded size bounds (the HTTP body limit is 2 MiB). */
export const MAX_IMAGE_BYTES = 1024 * 1024;
export const MIN_IMAGE_BYTES = 64;
/** Any single string input longer than this is refused before pattern checks (a file's content excepted). */
export const MAX_FIELD_LENGTH = 64;

/** An input's rule: its check, and what the OpenAPI document says of it (the same regex as the check). */
export interface InputFormat {
  readonly check: (value: string) => string | null;
  readonly regex?: RegExp;
  readonly description: string;
  /** A value that passes, and that the sandbox answers `found` (docs/sandbox.md). */
  readonly example: string;
  /** For an input that is a file's content: the media types it takes (the console offers a file picker); no MAX_FIELD_LENGTH. */
  readonly mediaTypes?: readonly string[];
  /** What the request echo and the event record instead of the value (a file's digest), and its schema. */
  readonly echo?: { readonly of: (value: string) => JsonValue; readonly schema: Schema };
}

const pattern = (regex: RegExp, message: string, description: string, example: string): InputFormat => ({
  check: (value: string): string | null => (regex.test(value) ? null : message),
  regex,
  description,
  example,
});

export const NIN = pattern(/^\d{11}$/, 'must be the 11-digit NIN', 'the 11-digit National Identification Number', '21440414976');
export const BVN = pattern(/^\d{11}$/, 'must be the 11-digit BVN', 'the 11-digit Bank Verification Number', '22126025250');
/** Nigerian mobile numbers: 070/080/081/090/091 + 8 digits, or the same after +234 / 234. */
export const PHONE_PATTERN = /^(?:0|\+234|234)[789][01]\d{8}$/;
export const PHONE = pattern(
  PHONE_PATTERN,
  'must be a Nigerian phone number: 080XXXXXXXX (11 digits), +234XXXXXXXXXX or 234XXXXXXXXXX',
  'a Nigerian mobile number: 080XXXXXXXX, +234XXXXXXXXXX or 234XXXXXXXXXX (one number in any of its forms)',
  '08150292236',
);
export const VNIN = pattern(
  /^[A-Za-z0-9]{16}$/,
  'must be a 16-character virtual NIN token (letters and digits)',
  'the 16-character virtual NIN token (letters and digits; case does not matter)',
  'YS79377970479239',
);
export const VIN = pattern(
  /^[A-Za-z0-9]{19}$/,
  "must be the 19-character Voter Identification Number of a voter's card (letters and digits)",
  "the 19-character Voter Identification Number of a permanent voter's card (case does not matter)",
  '70C99262607B747FB36',
);
export const PASSPORT = pattern(
  /^[A-Za-z]\d{8}$/,
  'must be a Nigerian passport number: a letter followed by 8 digits',
  'a Nigerian passport number: a letter and 8 digits',
  'B43975538',
);
export const ACCOUNT = pattern(/^\d{10}$/, 'must be the 10-digit account number (NUBAN)', 'the 10-digit account number (NUBAN)', '7753968106');
export const BANK = pattern(
  /^[A-Za-z0-9][A-Za-z0-9 &.()_-]{0,49}$/,
  'must be a bank code or identifier (up to 50 letters, digits, spaces or &.()_-)',
  'a bank code (`035`) or name (`Wema Bank`, `GTBank`): up to 50 letters, digits, spaces or &.()_-',
  '035',
);

export type ImageType = 'image/jpeg' | 'image/png';

export interface DecodedImage {
  readonly contentType: ImageType;
  readonly bytes: Buffer;
}

/** Base64 (optionally as a data URL) of a JPEG or PNG, sniffed by its magic bytes, within the size bounds. */
export function decodeImage(value: string): DecodedImage | string {
  const match = /^data:image\/(?:jpeg|jpg|png);base64,(.*)$/s.exec(value);
  const base64 = (match === null ? value : match[1]).replace(/\s+/g, '');
  if (base64.length === 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || base64.length % 4 !== 0) return 'must be base64 of a JPEG or PNG image';
  if ((base64.length / 4) * 3 > MAX_IMAGE_BYTES + 2) return `must be at most ${MAX_IMAGE_BYTES} bytes once decoded`;
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length < MIN_IMAGE_BYTES) return `must be at least ${MIN_IMAGE_BYTES} bytes once decoded`;
  if (bytes.length > MAX_IMAGE_BYTES) return `must be at most ${MAX_IMAGE_BYTES} bytes once decoded`;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { contentType: 'image/jpeg', bytes };
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return { contentType: 'image/png', bytes };
  return 'must be a JPEG or PNG image';
}

/** A 1×1 PNG (67 bytes): the smallest image face_match takes. */
const PNG_EXAMPLE = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

export const IMAGE: InputFormat = {
  check: (value: string): string | null => {
    const decoded = decodeImage(value);
    return typeof decoded === 'string' ? decoded : null;
  },
  description: `base64 (or a data:image/jpeg;base64, or data:image/png;base64, URL) of a JPEG or PNG, ${MIN_IMAGE_BYTES} bytes to 1 MiB once decoded; never stored or echoed`,
  example: PNG_EXAMPLE,
  mediaTypes: ['image/jpeg', 'image/png'],
  echo: {
    // Raw image bytes never go into events or responses: the echo carries what identifies the image.
    of: (value: string): JsonValue => {
      const decoded = decodeImage(value);
      if (typeof decoded === 'string') throw new Error('invariant: an image that passed validation does not decode');
      return { contentType: decoded.contentType, sizeBytes: decoded.bytes.length, sha256: createHash('sha256').update(decoded.bytes).digest('hex') };
    },
    schema: {
      type: 'object',
      required: ['contentType', 'sizeBytes', 'sha256'],
      properties: {
        contentType: { type: 'string', enum: ['image/jpeg', 'image/png'] },
        sizeBytes: { type: 'integer', minimum: 1 },
        sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      },
    },
  },
};

/** One input of a scope: whether it must be given, and its format. */
export interface FieldRule {
  readonly required: boolean;
  readonly format: InputFormat;
}

/** Local form 0XXXXXXXXXX of a Nigerian phone input (validated before it gets here). */
export function localPhone(phone: string): string {
  if (phone.startsWith('+234')) return `0${phone.slice(4)}`;
  if (phone.startsWith('234')) return `0${phone.slice(3)}`;
  return phone;
}

/** Raw base64 of an image input, for upstreams that want no data-URI prefix. */
export function rawBase64(image: string): string {
  return image.replace(/^data:image\/[a-z]+;base64,/i, '').replace(/\s+/g, '');
}
