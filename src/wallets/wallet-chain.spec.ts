import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createHash, randomUUID } from 'node:crypto';
import type { JsonValue } from '../event-store/event-store.port.js';
import { canonicalContent, canonicalJson, chainHash, checkLink, GENESIS_LINK, linkAfter, linkFor, type ChainedContent } from './wallet-chain.js';

function event(
  revision: bigint,
  data: Record<string, string | number> = { amountKobo: 500, reference: `vrf_${revision}` },
): ChainedContent & { metadata: Record<string, unknown> } {
  return {
    streamId: 'wallet-org_1.live',
    revision,
    id: randomUUID(),
    type: 'WalletFundsReserved',
    data,
    metadata: { occurredAt: '2026-03-03T13:00:00.000Z', actor: { type: 'system', id: 'test' } },
  };
}

/** A stream of `n` events chained as the ledger writes them. */
function chained(n: number) {
  const events = [];
  let link = GENESIS_LINK;
  for (let i = 0; i < n; i++) {
    const next = event(BigInt(i));
    const chain = linkFor(link, next);
    events.push({ ...next, metadata: { ...next.metadata, chain } });
    link = chain.hash;
  }
  return events;
}

describe('canonical JSON (RFC 8785)', () => {
  it('sorts keys at every depth by UTF-16 code units and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: true }], c: 'x' }, A: -0.5 })).toBe('{"A":-0.5,"a":{"c":"x","d":[3,{"y":true,"z":null}]},"b":1}');
    // "€" (U+20AC) sorts after "\u00e9" and before an astral character's surrogate pair (U+D83D…).
    expect(canonicalJson({ '😀': 1, '€': 2, é: 3 })).toBe('{"é":3,"€":2,"😀":1}');
  });

  it('escapes strings as ECMAScript does and formats numbers without a trailing zero', () => {
    expect(canonicalJson({ s: 'line\nquote" tab\t \u0001', n: 1e21, m: 10_000_000_000 })).toBe('{"m":10000000000,"n":1e+21,"s":"line\\nquote\\" tab\\t \\u0001"}');
  });

  it('is the plain definition of RFC 8785 for any JSON value: keys sorted at every depth, the rest as JSON.stringify writes it', () => {
    // The definition written the obvious way, against which the audit's faster serializer is checked.
    const reference = (value: JsonValue): string => {
      if (value === null || typeof value !== 'object') return JSON.stringify(value);
      if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
      return `{${Object.keys(value)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${reference(value[key])}`)
        .join(',')}}`;
    };
    // Keys of every kind: short ones that collide in order, array indices ("10" before "9"), astral characters, quotes.
    const key = fc.oneof(fc.constantFrom('a', 'b', 'B', '10', '9', '__proto__', 'é', '€', '😀', 'a"b', ''), fc.string({ unit: 'grapheme', maxLength: 6 }));
    const json = fc.letrec<{ value: JsonValue }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.string({ unit: 'binary', maxLength: 8 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(key, tie('value'), { maxKeys: 20 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, (value) => canonicalJson(value) === reference(value)),
      { numRuns: 2_000 },
    );
    // More keys than the insertion sort takes.
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${(i * 7) % 40}`, i]));
    expect(canonicalJson(many)).toBe(reference(many));
  });

  it("writes an event's content with its six members in order and the metadata without its chain", () => {
    const content = {
      streamId: 'wallet-org_1.live',
      revision: 7n,
      id: 'e1',
      type: 'WalletDebited',
      data: { b: 1, a: [2] },
      metadata: { z: null, chain: { version: 1 }, actor: { type: 'system', id: 'x' } },
    };
    expect(canonicalContent(content)).toBe(
      '{"data":{"a":[2],"b":1},"eventId":"e1","metadata":{"actor":{"id":"x","type":"system"},"z":null},"revision":7,"streamId":"wallet-org_1.live","type":"WalletDebited"}',
    );
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(RangeError);
  });

  it('is the same whatever order the keys came back in (jsonb reorders them)', () => {
    expect(canonicalJson({ x: 1, y: { a: 1, b: 2 } })).toBe(canonicalJson({ y: { b: 2, a: 1 }, x: 1 }));
  });
});

describe('the wallet hash chain', () => {
  it('is SHA-256 over the previous link and the canonical content, as the README states it', () => {
    const first = event(0n);
    const expected = createHash('sha256')
      .update(GENESIS_LINK + canonicalJson({ streamId: first.streamId, revision: 0, eventId: first.id, type: first.type, data: first.data, metadata: first.metadata as never }))
      .digest('hex');
    expect(chainHash(GENESIS_LINK, first)).toBe(expected);
    // The link itself is not part of what it hashes.
    expect(chainHash(GENESIS_LINK, { ...first, metadata: { ...first.metadata, chain: { any: 'thing' } } })).toBe(expected);
  });

  it('holds for events written in order, and breaks at a changed event only', () => {
    const events = chained(4);
    let link = GENESIS_LINK;
    for (const recorded of events) {
      expect(checkLink(link, recorded as never, recorded.revision > 0n)).toEqual({ status: 'hashed' });
      link = linkAfter(link, recorded);
    }

    const tampered = events.map((recorded, i) => (i === 2 ? { ...recorded, data: { ...recorded.data, amountKobo: 1 } } : recorded));
    const checks = [];
    link = GENESIS_LINK;
    for (const recorded of tampered) {
      checks.push(checkLink(link, recorded, recorded.revision > 0n).status);
      link = linkAfter(link, recorded);
    }
    expect(checks).toEqual(['hashed', 'hashed', 'broken', 'hashed']);
  });

  it('names a removed event: the next one does not follow the one before it', () => {
    const events = chained(3);
    const afterRemoval = { ...events[2], revision: 1n };
    const check = checkLink(linkAfter(GENESIS_LINK, events[0]), afterRemoval, true);
    expect(check).toMatchObject({ status: 'broken', problem: { kind: 'link_broken' } });
  });

  it('starts at the first hashed event, which commits to the unhashed events written before the chain existed', () => {
    const legacy = [event(0n), event(1n)];
    let link = GENESIS_LINK;
    for (const recorded of legacy) {
      expect(checkLink(link, recorded as never, false)).toEqual({ status: 'unhashed' });
      link = linkAfter(link, recorded);
    }
    const next = event(2n);
    const first = { ...next, metadata: { ...next.metadata, chain: linkFor(link, next) } };
    expect(checkLink(link, first as never, false)).toEqual({ status: 'hashed' });

    // Changing an unhashed event changes the link the first hashed event was written after.
    const changed = { ...legacy[1], data: { ...legacy[1].data, amountKobo: 1 } };
    const changedLink = linkAfter(linkAfter(GENESIS_LINK, legacy[0]), changed);
    expect(checkLink(changedLink, first as never, false)).toMatchObject({ status: 'broken', problem: { kind: 'link_broken' } });

    // Once the chain has started, an event without a hash is a stripped one.
    expect(checkLink(first.metadata.chain.hash, event(3n) as never, true)).toMatchObject({ status: 'broken', problem: { kind: 'hash_missing' } });
  });

  it('takes a link with the right hashes but another version, or a hash in capitals, as malformed, not hashed', () => {
    const [first] = chained(1);
    const { chain } = first.metadata;
    expect(checkLink(GENESIS_LINK, first as never, false)).toEqual({ status: 'hashed' });
    for (const changed of [{ ...chain, version: 2 }, { ...chain, version: '1' }, { ...chain, hash: chain.hash.toUpperCase() }, [chain]]) {
      const check = checkLink(GENESIS_LINK, { ...first, metadata: { ...first.metadata, chain: changed } }, false);
      expect(check).toMatchObject({ status: 'broken', problem: { kind: 'malformed' } });
    }
    // A previous link that is not 64 hex digits is never taken as a match, even when the event repeats it.
    const odd = { ...first, metadata: { ...first.metadata, chain: { ...chain, previous: 'x' } } };
    expect(checkLink('x', odd as never, false).status).toBe('broken');
  });

  it('refuses a malformed link', () => {
    const bad = { ...event(0n), metadata: { chain: { version: 1, previous: 'x', hash: 'y' } } };
    expect(checkLink(GENESIS_LINK, bad as never, false)).toMatchObject({ status: 'broken', problem: { kind: 'malformed' } });
  });
});
