import { createHash } from 'node:crypto';
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
 */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError('canonical JSON has no representation for a non-finite number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const members = Object.keys(value)
    .filter((key) => value[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`);
  return `{${members.join(',')}}`;
}

function withoutChain(metadata: JsonObject | undefined): JsonObject {
  const { chain: _chain, ...rest } = metadata ?? {};
  return rest;
}

export function canonicalContent(event: ChainedContent): string {
  if (event.revision < 0n || event.revision > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`revision ${event.revision} is outside the chain's range`);
  return canonicalJson({
    streamId: event.streamId,
    revision: Number(event.revision),
    eventId: event.id,
    type: event.type,
    data: event.data,
    metadata: withoutChain(event.metadata),
  });
}

export function chainHash(previous: string, event: ChainedContent): string {
  return createHash('sha256').update(previous + canonicalContent(event), 'utf8').digest('hex');
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
 * Verifies one event against the link of its predecessor. `chainStarted`: a hashed event came
 * before, so an event without a hash now means one was stripped.
 */
export function checkLink(previous: string, event: ChainedContent & { readonly metadata: JsonObject }, chainStarted: boolean): ChainCheck {
  const stored = storedLink(event.metadata);
  if (stored === 'malformed') return { status: 'broken', problem: { kind: 'malformed', message: 'metadata.chain is not a version 1 link' } };
  if (stored === undefined) {
    return chainStarted ? { status: 'broken', problem: { kind: 'hash_missing', message: 'no hash, after earlier events carried one' } } : { status: 'unhashed' };
  }
  if (stored.previous !== previous) {
    const message =
      chainStarted || event.revision === 0n
        ? 'its previous hash is not the link of the event before it (an event was removed, inserted or re-hashed)'
        : 'its previous hash does not match the unhashed events before it (one of them was changed)';
    return { status: 'broken', problem: { kind: 'link_broken', message } };
  }
  if (chainHash(previous, event) !== stored.hash) return { status: 'broken', problem: { kind: 'content_changed', message: 'its content does not match its hash (the event was changed)' } };
  return { status: 'hashed' };
}
