import { hash } from 'node:crypto';
import type { JsonObject, JsonValue } from '../event-store/event-store.port.js';
import type { AppendHook } from '../event-sourcing/event-sourced-handler.js';

/**
 * Tamper evidence for wallet streams: every wallet event carries, in `metadata.chain`, the SHA-256
 * of its predecessor's link and its own canonical content, so changing, removing or reordering a
 * stored event breaks the chain at that event. README "Finance audit" states the same rules for an
 * auditor who re-verifies with their own tools.
 *
 *   content   = {streamId, revision, eventId, type, data, metadata without "chain"}
 *   canonical = RFC 8785 (JCS) serialization of content: keys sorted by UTF-16 code units, no
 *               whitespace, ECMAScript number and string formatting
 *   hash      = lowercase hex SHA-256 of the UTF-8 bytes of (previous + canonical)
 *   previous  = the link of the event at revision - 1, or 64 zeros at revision 0
 *   link(e)   = e.metadata.chain.hash when e has one, else the hash computed as above: events
 *               written before the chain existed are chained virtually, so the first hashed event
 *               commits to the whole history before it.
 *
 * The position and the store's commit time are not hashed: neither is known before the append.
 */

export const CHAIN_VERSION = 1;
export const GENESIS_LINK = '0'.repeat(64);
const HEX_SHA256 = /^[0-9a-f]{64}$/;

export interface ChainLink extends JsonObject {
  version: number;
  previous: string;
  hash: string;
}

/** What the chain covers of an event, as written (the append) or as read back (the recorded event). */
export interface ChainedContent {
  readonly streamId: string;
  readonly revision: bigint;
  readonly id: string;
  readonly type: string;
  readonly data: JsonObject;
  readonly metadata?: JsonObject;
}

/**
 * RFC 8785 for the JSON this service writes (strings, finite numbers, booleans, null, arrays,
 * objects). JSON.stringify already formats strings and numbers as JCS requires; what it does not do
 * is sort the keys. Undefined members are dropped, as JSON.stringify and the stores drop them.
 * Written as one string built in place (no per-member arrays): the audit runs it on every event of
 * a wallet, and the intermediate arrays of a filter/sort/map/join version cost it most of its time.
 */
export function canonicalJson(value: JsonValue): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new RangeError('canonical JSON has no representation for a non-finite number');
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
        return `${out}]`;
      }
      return canonicalMembers(value, undefined);
  }
}

/** Object keys as JCS writes them (quoted, with the colon), remembered: a wallet's events use a handful of keys over and over. Bounded, as a log could hold any keys. */
const MAX_QUOTED_KEYS = 10_000;
const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`;
    if (quotedKeys.size < MAX_QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** Above this many keys an object's keys are sorted with Array.prototype.sort; below, by insertion. */
const INSERTION_SORT_MAX_KEYS = 16;

/**
 * Sorts keys in place by UTF-16 code units, as JCS orders them (the `<` and `>` of two strings and
 * Array.prototype.sort without a comparator both compare code units). The handful of keys of an
 * event's data or metadata is sorted by insertion: Array.prototype.sort allocates on every call,
 * which made it the largest share of the garbage collector's work in the audit.
 */
function sortKeys(keys: string[]): void {
  if (keys.length > INSERTION_SORT_MAX_KEYS) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i];
    let j = i - 1;
    while (j >= 0 && keys[j] > key) {
      keys[j + 1] = keys[j];
      j--;
    }
    keys[j + 1] = key;
  }
}

/** An object's members in JCS order, leaving out `skip`. */
function canonicalMembers(value: JsonObject, skip: string | undefined): string {
  const keys = Object.keys(value);
  sortKeys(keys);
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = value[key];
    if (member === undefined || key === skip) continue;
    out += (first ? '' : ',') + quotedKey(key) + canonicalJson(member);
    first = false;
  }
  return `${out}}`;
}

const MAX_CHAINED_REVISION = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The canonical form of `{streamId, revision, eventId, type, data, metadata without chain}`: the
 * six top-level keys are written in their JCS order (data, eventId, metadata, revision, streamId,
 * type) rather than sorted each time, and `chain` is skipped rather than copied out of the metadata.
 */
export function canonicalContent(event: ChainedContent): string {
  if (event.revision < 0n || event.revision > MAX_CHAINED_REVISION) throw new RangeError(`revision ${event.revision} is outside the chain's range`);
  return (
    `{"data":${canonicalJson(event.data)},"eventId":${JSON.stringify(event.id)},"metadata":${canonicalMembers(event.metadata ?? {}, 'chain')}` +
    `,"revision":${Number(event.revision)},"streamId":${JSON.stringify(event.streamId)},"type":${JSON.stringify(event.type)}}`
  );
}

/** crypto.hash is the one-shot form of createHash().update().digest(): it skips the hash object, which dominates on inputs of a few hundred bytes. */
export function chainHash(previous: string, event: ChainedContent): string {
  return hash('sha256', previous + canonicalContent(event), 'hex');
}

/** The link an event appended after `previous` carries. */
export function linkFor(previous: string, event: ChainedContent): ChainLink {
  return { version: CHAIN_VERSION, previous, hash: chainHash(previous, event) };
}

/** The stored link of an event: undefined when it was written before the chain existed; 'malformed' when `chain` is there but is not a link. */
export function storedLink(metadata: JsonObject): ChainLink | 'malformed' | undefined {
  const chain = metadata.chain;
  if (chain === undefined) return undefined;
  if (typeof chain !== 'object' || chain === null || Array.isArray(chain)) return 'malformed';
  const { version, previous, hash } = chain;
  if (version !== CHAIN_VERSION || typeof previous !== 'string' || typeof hash !== 'string' || !HEX_SHA256.test(previous) || !HEX_SHA256.test(hash)) return 'malformed';
  return { version, previous, hash };
}

/** What the next event links to after `event`: its stored hash, or the virtual one for an event written before the chain. */
export function linkAfter(previous: string, event: ChainedContent & { readonly metadata: JsonObject }): string {
  const stored = storedLink(event.metadata);
  return stored !== undefined && stored !== 'malformed' ? stored.hash : chainHash(previous, event);
}

/**
 * The chain as the event-sourcing kernel's append hook: the link follows the stored events while a
 * wallet is folded, and each appended event carries its link in `metadata.chain`, computed on the
 * fold the append expects (a refused append is refolded and chained again). The stored link of the
 * event at a held fold's revision tells the kernel whether the log still holds that fold's history.
 */
export const WALLET_CHAIN: AppendHook<string> = {
  initial: GENESIS_LINK,
  afterRecorded: linkAfter,
  beforeAppend(previous, events) {
    let link = previous;
    const chained = events.map(({ streamId, revision, event }) => {
      const chain = linkFor(link, { ...event, streamId, revision });
      link = chain.hash;
      return { ...event, metadata: { ...event.metadata, chain } };
    });
    return { events: chained, link };
  },
  storedLink(recorded) {
    const stored = storedLink(recorded.metadata);
    return typeof stored === 'object' ? stored.hash : undefined;
  },
};

export type ChainBreak =
  | { readonly kind: 'content_changed'; readonly message: string }
  | { readonly kind: 'link_broken'; readonly message: string }
  | { readonly kind: 'hash_missing'; readonly message: string }
  | { readonly kind: 'malformed'; readonly message: string };

export type ChainCheck = { readonly status: 'hashed' } | { readonly status: 'unhashed' } | { readonly status: 'broken'; readonly problem: ChainBreak };

/**
 * The stored hash of the last event found hashed here: equal to a SHA-256 hex digest, so well
 * formed. The next event of a replay links to it, and its `previous` then needs no format check
 * (the regular expression is a visible share of the audit's time beside SHA-256 itself).
 */
let lastVerifiedHash = GENESIS_LINK;

const HASHED: ChainCheck = Object.freeze({ status: 'hashed' });
const UNHASHED: ChainCheck = Object.freeze({ status: 'unhashed' });

const DASH = 0x2d;

/**
 * Whether `chainHash(previous, event)` is `stored`. `claimedHashes`, from the audit's worker thread
 * (src/audit/chain-hashes.ts), holds at `claimedAt` the hash of the event's content on its stored
 * `previous`, which the caller has found equal to `previous`: the same hash, computed already;
 * dashes where the worker computed none.
 */
function computedHashIs(previous: string, event: ChainedContent, stored: string, claimedHashes: string | undefined, claimedAt: number): boolean {
  if (claimedHashes !== undefined && claimedAt < claimedHashes.length && claimedHashes.charCodeAt(claimedAt) !== DASH) {
    return stored.length === 64 && claimedHashes.startsWith(stored, claimedAt);
  }
  return chainHash(previous, event) === stored;
}

/**
 * Verifies one event against the link of its predecessor. `chainStarted`: a hashed event came
 * before, so an event without a hash now means one was stripped.
 *
 * The common case, a version 1 link whose `previous` is this link and whose `hash` is the hash
 * computed here, is decided first with one hash and two string comparisons: a stored hash equal to
 * a SHA-256 hex digest is well formed by construction, so only `previous` needs the format check,
 * and not even that when it is the hash the previous call verified.
 * Anything else takes the full classification below, which gives the same answer for that case.
 * `claimedHashes` and `claimedAt`: see computedHashIs.
 */
export function checkLink(previous: string, event: ChainedContent & { readonly metadata: JsonObject }, chainStarted: boolean, claimedHashes?: string, claimedAt = 0): ChainCheck {
  const chain = event.metadata.chain;
  if (
    typeof chain === 'object' &&
    chain !== null &&
    !Array.isArray(chain) &&
    chain.version === CHAIN_VERSION &&
    chain.previous === previous &&
    typeof chain.hash === 'string' &&
    (previous === lastVerifiedHash || HEX_SHA256.test(previous)) &&
    computedHashIs(previous, event, chain.hash, claimedHashes, claimedAt)
  ) {
    lastVerifiedHash = chain.hash;
    return HASHED;
  }
  const stored = storedLink(event.metadata);
  if (stored === 'malformed') return { status: 'broken', problem: { kind: 'malformed', message: 'metadata.chain is not a version 1 link' } };
  if (stored === undefined) {
    return chainStarted ? { status: 'broken', problem: { kind: 'hash_missing', message: 'no hash, after earlier events carried one' } } : UNHASHED;
  }
  if (stored.previous !== previous) {
    const message =
      chainStarted || event.revision === 0n
        ? 'its previous hash is not the link of the event before it (an event was removed, inserted or re-hashed)'
        : 'its previous hash does not match the unhashed events before it (one of them was changed)';
    return { status: 'broken', problem: { kind: 'link_broken', message } };
  }
  if (chainHash(previous, event) !== stored.hash)
    return { status: 'broken', problem: { kind: 'content_changed', message: 'its content does not match its hash (the event was changed)' } };
  return HASHED;
}
