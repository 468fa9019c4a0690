import { describe, expect, it } from '@jest/globals';
import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson, chainHash, checkLink, GENESIS_LINK, linkAfter, linkFor, type ChainedContent } from './wallet-chain.js';

function event(revision: bigint, data: Record<string, string | number> = { amountKobo: 500, reference: `vrf_${revision}` }): ChainedContent & { metadata: Record<string, unknown> } {
  return { streamId: 'wallet-org_1.live', revision, id: randomUUID(), type: 'WalletFundsReserved', data, metadata: { occurredAt: '2026-03-03T13:00:00.000Z', actor: { type: 'system', id: 'test' } } } as never;
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
    expect(chainHash(GENESIS_LINK, { ...first, metadata: { ...first.metadata, chain: { any: 'thing' } } } as never)).toBe(expected);
  });

  it('holds for events written in order, and breaks at a changed event only', () => {
    const events = chained(4);
    let link = GENESIS_LINK;
    for (const recorded of events) {
      expect(checkLink(link, recorded as never, recorded.revision > 0n)).toEqual({ status: 'hashed' });
      link = linkAfter(link, recorded as never);
    }

    const tampered = events.map((recorded, i) => (i === 2 ? { ...recorded, data: { ...recorded.data, amountKobo: 1 } } : recorded));
    const checks = [];
    link = GENESIS_LINK;
    for (const recorded of tampered) {
      checks.push(checkLink(link, recorded as never, recorded.revision > 0n).status);
      link = linkAfter(link, recorded as never);
    }
    expect(checks).toEqual(['hashed', 'hashed', 'broken', 'hashed']);
  });

  it('names a removed event: the next one does not follow the one before it', () => {
    const events = chained(3);
    const afterRemoval = { ...events[2], revision: 1n };
    const check = checkLink(linkAfter(GENESIS_LINK, events[0] as never), afterRemoval as never, true);
    expect(check).toMatchObject({ status: 'broken', problem: { kind: 'link_broken' } });
  });

  it('starts at the first hashed event, which commits to the unhashed events written before the chain existed', () => {
    const legacy = [event(0n), event(1n)];
    let link = GENESIS_LINK;
    for (const recorded of legacy) {
      expect(checkLink(link, recorded as never, false)).toEqual({ status: 'unhashed' });
      link = linkAfter(link, recorded as never);
    }
    const next = event(2n);
    const first = { ...next, metadata: { ...next.metadata, chain: linkFor(link, next) } };
    expect(checkLink(link, first as never, false)).toEqual({ status: 'hashed' });

    // Changing an unhashed event changes the link the first hashed event was written after.
    const changed = { ...legacy[1], data: { ...legacy[1].data, amountKobo: 1 } };
    const changedLink = linkAfter(linkAfter(GENESIS_LINK, legacy[0] as never), changed as never);
    expect(checkLink(changedLink, first as never, false)).toMatchObject({ status: 'broken', problem: { kind: 'link_broken' } });

    // Once the chain has started, an event without a hash is a stripped one.
    expect(checkLink(first.metadata.chain.hash, event(3n) as never, true)).toMatchObject({ status: 'broken', problem: { kind: 'hash_missing' } });
  });

  it('refuses a malformed link', () => {
    const bad = { ...event(0n), metadata: { chain: { version: 1, previous: 'x', hash: 'y' } } };
    expect(checkLink(GENESIS_LINK, bad as never, false)).toMatchObject({ status: 'broken', problem: { kind: 'malformed' } });
  });
});
