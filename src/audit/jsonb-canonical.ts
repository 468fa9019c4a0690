import { hash } from 'node:crypto';

/**
 * The hash a wallet event's stored link claims (`chainHash(metadata.chain.previous, event)`,
 * src/wallets/wallet-chain.ts), computed from the bytes of its COPY row: the canonical form
 * (RFC 8785) is written straight from the text PostgreSQL prints for the jsonb `data` and `metadata`,
 * into one reused buffer, without decoding the row into a string or building the objects JSON.parse
 * would. The audit's worker thread does this for every event of a wallet; parsing each event only to
 * write it out again in another key order was most of its work.
 *
 * jsonb prints an object's members ordered by key length then bytes, separated by `, `, with `: `
 * after each key. This copies that text member by member, each object's keys re-sorted by UTF-16
 * code units as JCS orders them, the separators dropped. It handles only rows it can prove it writes
 * exactly as `canonicalContent` of the parsed row would, and answers undefined for any other, which
 * the caller then hashes the exact way (parsed):
 *  - bytes of ASCII only, without a backslash (an escape in a string, or COPY's own escaping) in
 *    the event id, type, data or metadata: a string then ends at the next quote and holds nothing
 *    JSON.stringify would escape (jsonb escapes quotes and control characters), so it is copied as
 *    it stands, and byte order is UTF-16 order;
 *  - numbers: integers of at most 15 digits (no fraction, exponent or `-0`), which stay below 2^53,
 *    where JSON.stringify writes the same digits; strings, `true`, `false`, `null` and objects
 *    (nested at most MAX_DEPTH deep); no arrays; jsonb's exact layout, nothing after the value;
 *  - a revision of at most 15 digits without a leading zero, and a metadata `chain` member that is
 *    an object without nested values whose `previous` is a string of 64 characters.
 */

const TAB = 0x09;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const LAST_ASCII = 0x7f;
/** More digits than this could reach 2^53, past which a number's shortest form may change its digits. */
const MAX_INTEGER_DIGITS = 15;
/** Deeper objects than this are left to the exact path (the events this service writes nest once). */
const MAX_DEPTH = 4;
/** Members per object handled here; a larger object takes the exact path. */
const MAX_MEMBERS = 32;
const PREVIOUS_LENGTH = 64;

const ascii = (text: string) => Buffer.from(text, 'latin1');
const DATA_OPEN = ascii('{"data":');
const EVENT_ID_OPEN = ascii(',"eventId":"');
const METADATA_OPEN = ascii('","metadata":');
const REVISION_OPEN = ascii(',"revision":');
const STREAM_ID_OPEN = ascii(',"streamId":');
const TYPE_OPEN = ascii(',"type":"');
const CONTENT_CLOSE = ascii('"}');
const CHAIN_KEY = ascii('"chain"');
const PREVIOUS_MEMBER = ascii('"previous": "');

/**
 * The row's bytes and the index of the next one to read. The loops below copy them into locals
 * first: a module variable is read from memory at every use, where a local can stay in a register.
 */
let source: Uint8Array = Buffer.alloc(0);
let at = 0;
/** The bytes hashed: `previous` (its 64 characters) then the canonical content; grown when a row needs more. */
let out = new Uint8Array(8_192);
let written = 0;

/**
 * Per nesting depth, the members of the object being read there: where each key starts (its
 * opening quote) and ends (after its closing quote), where its value starts and ends, and their
 * JCS order. Kept across calls, as this runs on every event.
 */
const keyStarts = Array.from({ length: MAX_DEPTH + 1 }, () => new Int32Array(MAX_MEMBERS));
const keyEnds = Array.from({ length: MAX_DEPTH + 1 }, () => new Int32Array(MAX_MEMBERS));
const valueStarts = Array.from({ length: MAX_DEPTH + 1 }, () => new Int32Array(MAX_MEMBERS));
const valueEnds = Array.from({ length: MAX_DEPTH + 1 }, () => new Int32Array(MAX_MEMBERS));
const orders = Array.from({ length: MAX_DEPTH + 1 }, () => new Int32Array(MAX_MEMBERS));
/** The span of the metadata's `chain` value, found while its members are read. */
let chainStart = -1;
let chainEnd = -1;
/** Whether that value holds an object (counted as it is read, so that it is not scanned again). */
let chainNested = false;
/** Objects `skipObject` has read, the chain value's own included: a count that moved by more than one across a value held nested objects. */
let nestedObjects = 0;

/**
 * The claimed-link hash of the COPY row from `rowStart` to `rowEnd` (its newline) of `rows` (the
 * columns the COPY reader selects: position, revision, event id, type, data, metadata, commit
 * time), or undefined when the row holds anything this does not handle. `streamId` is the
 * stream's id as JSON (quoted), in ASCII bytes.
 */
export function claimedHashOfCopyRow(rows: Uint8Array, rowStart: number, rowEnd: number, quotedStreamId: Uint8Array): string | undefined {
  source = rows;
  at = rowStart;
  return transcodeRow(rowEnd, quotedStreamId) ? hash('sha256', out.subarray(0, written), 'hex') : undefined;
}

function transcodeRow(rowEnd: number, quotedStreamId: Uint8Array): boolean {
  // position: skipped; revision: digits, kept for later.
  if (!skipTo(TAB, rowEnd)) return false;
  at++;
  const revisionStart = at;
  if (!integer() || source[revisionStart] === MINUS || source[at] !== TAB) return false;
  const revisionEnd = at;
  at++;
  const idStart = at;
  if (!plainTo(rowEnd)) return false;
  const idEnd = at;
  at++;
  const typeStart = at;
  if (!plainTo(rowEnd)) return false;
  const typeEnd = at;
  at++;
  // Room for the longest content this row could give: its own bytes and the fixed parts.
  const needed = PREVIOUS_LENGTH + (rowEnd - at) + 2 * (rowEnd - idStart) + quotedStreamId.length + 128;
  if (out.length < needed) out = new Uint8Array(2 * needed);
  written = PREVIOUS_LENGTH;
  put(DATA_OPEN);
  if (source[at] !== OPEN_BRACE || !object(0, false) || source[at] !== TAB) return false;
  at++;
  put(EVENT_ID_OPEN);
  copy(idStart, idEnd);
  put(METADATA_OPEN);
  chainStart = -1;
  if (source[at] !== OPEN_BRACE || !object(0, true) || source[at] !== TAB) return false;
  put(REVISION_OPEN);
  copy(revisionStart, revisionEnd);
  put(STREAM_ID_OPEN);
  put(quotedStreamId);
  put(TYPE_OPEN);
  copy(typeStart, typeEnd);
  put(CONTENT_CLOSE);
  return previousInChain();
}

/** Moves `at` to the next `byte` before `end`; false when there is none. */
function skipTo(byte: number, end: number): boolean {
  const bytes = source;
  let i = at;
  while (i < end && bytes[i] !== byte) i++;
  at = i;
  return i < end;
}

/** Moves `at` to the next tab, over bytes a JSON string holds as they are (printable ASCII but a quote or backslash); false on any other byte. */
function plainTo(end: number): boolean {
  const bytes = source;
  const start = at;
  for (let i = start; i < end; i++) {
    const byte = bytes[i];
    if (byte === TAB) {
      at = i;
      return i > start;
    }
    if (byte < SPACE || byte >= LAST_ASCII || byte === QUOTE || byte === BACKSLASH) return false;
  }
  return false;
}

function put(bytes: Uint8Array): void {
  out.set(bytes, written);
  written += bytes.length;
}

function copy(start: number, end: number): void {
  const bytes = source;
  const into = out;
  let to = written;
  for (let i = start; i < end; i++) into[to++] = bytes[i];
  written = to;
}

/**
 * `previous` of the metadata's `chain` (an object of plain members: its key then found by its
 * text), written before the content. jsonb puts the longest key last: in a link as the ledger
 * writes it (`hash`, `version`, `previous`), the member is the last 79 bytes before the closing
 * brace, which is looked at first.
 */
function previousInChain(): boolean {
  const bytes = source;
  if (chainStart < 0 || bytes[chainStart] !== OPEN_BRACE || chainNested) return false;
  const lastMemberAt = chainEnd - 1 - (PREVIOUS_MEMBER.length + PREVIOUS_LENGTH + 1);
  if (lastMemberAt > chainStart && bytes[chainEnd - 2] === QUOTE && sameBytes(lastMemberAt, PREVIOUS_MEMBER)) return copyPrevious(lastMemberAt + PREVIOUS_MEMBER.length);
  // A string holding the member's text would need an escaped quote, and the row has no backslash.
  const last = chainEnd - PREVIOUS_MEMBER.length;
  for (let i = chainStart; i <= last; i++) if (sameBytes(i, PREVIOUS_MEMBER)) return copyPrevious(i + PREVIOUS_MEMBER.length);
  return false;
}

/** The string value starting at `start` (after its opening quote) into the first 64 bytes of `out`, when it has 64 characters. */
function copyPrevious(start: number): boolean {
  const bytes = source;
  if (start + PREVIOUS_LENGTH >= chainEnd || bytes[start + PREVIOUS_LENGTH] !== QUOTE) return false;
  for (let j = 0; j < PREVIOUS_LENGTH; j++) {
    const byte = bytes[start + j];
    if (byte === QUOTE) return false;
    out[j] = byte;
  }
  return true;
}

/** Whether the key at a..aEnd sorts before the key at b..bEnd (the spans include the quotes): byte order, a prefix first. */
function keyBefore(a: number, aEnd: number, b: number, bEnd: number): boolean {
  const bytes = source;
  for (;;) {
    a++;
    b++;
    if (a === aEnd - 1) return b !== bEnd - 1;
    if (b === bEnd - 1) return false;
    const difference = bytes[a] - bytes[b];
    if (difference !== 0) return difference < 0;
  }
}

/**
 * Reads the object at `at` (its opening brace) and writes it in JCS order; leaves `at` after its
 * closing brace. At the metadata's top level (`isMetadata`), the `chain` member is not written but
 * its span noted.
 */
function object(depth: number, isMetadata: boolean): boolean {
  if (depth > MAX_DEPTH) return false;
  const keyStart = keyStarts[depth];
  const keyEnd = keyEnds[depth];
  const valueStart = valueStarts[depth];
  const valueEnd = valueEnds[depth];
  const order = orders[depth];
  at++;
  let count = 0;
  if (source[at] === CLOSE_BRACE) {
    at++;
  } else {
    for (;;) {
      if (source[at] !== QUOTE || count === MAX_MEMBERS) return false;
      const start = at;
      if (!string()) return false;
      const end = at;
      if (source[at] !== COLON || source[at + 1] !== SPACE) return false;
      at += 2;
      const valueAt = at;
      const nestedBefore = nestedObjects;
      if (!value(depth)) return false;
      if (isMetadata && end - start === CHAIN_KEY.length && sameBytes(start, CHAIN_KEY)) {
        chainStart = valueAt;
        chainEnd = at;
        chainNested = nestedObjects - nestedBefore > 1;
      } else {
        keyStart[count] = start;
        keyEnd[count] = end;
        valueStart[count] = valueAt;
        valueEnd[count] = at;
        // Insertion into the sorted run: a handful of keys per object.
        let index = count;
        while (index > 0 && keyBefore(start, end, keyStart[order[index - 1]], keyEnd[order[index - 1]])) {
          order[index] = order[index - 1];
          index--;
        }
        order[index] = count;
        count++;
      }
      const next = source[at];
      if (next === CLOSE_BRACE) {
        at++;
        break;
      }
      if (next !== COMMA || source[at + 1] !== SPACE) return false;
      at += 2;
    }
  }
  const after = at;
  out[written++] = OPEN_BRACE;
  for (let i = 0; i < count; i++) {
    const member = order[i];
    if (i > 0) out[written++] = COMMA;
    copy(keyStart[member], keyEnd[member]);
    out[written++] = COLON;
    if (source[valueStart[member]] === OPEN_BRACE) {
      // A nested object, read again to be written in its own order (its bytes were checked above).
      at = valueStart[member];
      if (!object(depth + 1, false)) return false;
    } else {
      copy(valueStart[member], valueEnd[member]);
    }
  }
  out[written++] = CLOSE_BRACE;
  at = after;
  return true;
}

function sameBytes(start: number, bytes: Uint8Array): boolean {
  const from = source;
  for (let i = 0; i < bytes.length; i++) if (from[start + i] !== bytes[i]) return false;
  return true;
}

/** A string at `at` (its opening quote) of ASCII without a backslash or control character: skips it. */
function string(): boolean {
  const bytes = source;
  const length = bytes.length;
  for (let i = at + 1; i < length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      at = i + 1;
      return true;
    }
    if (byte < SPACE || byte >= LAST_ASCII || byte === BACKSLASH) return false;
  }
  return false;
}

/** Checks and skips the value at `at` (a nested object's members are checked, not yet written). */
function value(depth: number): boolean {
  const first = source[at];
  if (first === QUOTE) return string();
  if (first === OPEN_BRACE) return skipObject(depth + 1);
  if (first === MINUS || (first >= ZERO && first <= NINE)) return integer();
  return literal();
}

/** Checks and skips a nested object: the same rules as `object`, nothing written. */
function skipObject(depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  nestedObjects++;
  at++;
  if (source[at] === CLOSE_BRACE) {
    at++;
    return true;
  }
  for (let count = 0; ; count++) {
    if (source[at] !== QUOTE || count === MAX_MEMBERS || !string()) return false;
    if (source[at] !== COLON || source[at + 1] !== SPACE) return false;
    at += 2;
    if (!value(depth)) return false;
    const next = source[at];
    if (next === CLOSE_BRACE) {
      at++;
      return true;
    }
    if (next !== COMMA || source[at + 1] !== SPACE) return false;
    at += 2;
  }
}

const TRUE = ascii('true');
const FALSE = ascii('false');
const NULL = ascii('null');

/** `true`, `false` or `null` at `at`: skips it. */
function literal(): boolean {
  const first = source[at];
  const word = first === 0x74 ? TRUE : first === 0x66 ? FALSE : first === 0x6e ? NULL : undefined;
  if (word === undefined || !sameBytes(at, word)) return false;
  at += word.length;
  return true;
}

/** An integer of at most 15 digits without a leading zero, and not `-0`, at `at`: skips it; anything else is false. */
function integer(): boolean {
  const bytes = source;
  const start = at;
  const digitsStart = bytes[start] === MINUS ? start + 1 : start;
  let i = digitsStart;
  while (i < bytes.length && bytes[i] >= ZERO && bytes[i] <= NINE) i++;
  at = i;
  const digits = i - digitsStart;
  if (digits === 0 || digits > MAX_INTEGER_DIGITS) return false;
  if (bytes[digitsStart] === ZERO && (digits > 1 || digitsStart > start)) return false;
  const next = bytes[i];
  // A fraction or an exponent follows: not an integer.
  return next !== 0x2e && next !== 0x65 && next !== 0x45;
}
