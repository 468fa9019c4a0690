import { describe, expect, it } from '@jest/globals';
import { UnavailableError, UnknownError, WrongExpectedVersionError } from '@eventstore/db-client';
import {
  compareLogPositions,
  EsdbEventStore,
  type EsdbRecordedEvent,
  isUnavailable,
  passesFilter,
  serverSideFilter,
  toRecordedEvent,
  toWrongExpectedRevision,
} from './esdb-event-store.js';

/** The filters' regexes are evaluated by the server (.NET); these constructs mean the same in JavaScript. */
const serverMatches = (filter: ReturnType<typeof serverSideFilter>, value: string) => 'regex' in filter && new RegExp(filter.regex).test(value);

const recorded = (overrides: Partial<EsdbRecordedEvent> = {}): EsdbRecordedEvent => ({
  id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  streamId: 'wallet-org1.test',
  type: 'WalletFunded',
  revision: 3n,
  created: new Date('2024-11-22T10:00:00Z'),
  data: { schemaVersion: 1, amountKobo: 5_000 },
  metadata: { correlationId: 'req-1' },
  position: { commit: 4_242n, prepare: 4_242n },
  ...overrides,
});

describe('serverSideFilter', () => {
  describe('When only stream categories are given', () => {
    const filter = serverSideFilter({ streamCategories: ['wallet', 'verification'] });

    it('filters stream names on the exact categories, including a stream named after its category', () => {
      expect(filter.filterOn).toBe('streamName');
      expect(serverMatches(filter, 'wallet-org1.test')).toBe(true);
      expect(serverMatches(filter, 'verification-ref-1')).toBe(true);
      expect(serverMatches(filter, 'wallet')).toBe(true);
      expect(serverMatches(filter, 'wallets-1')).toBe(false);
      expect(serverMatches(filter, 'organization-1')).toBe(false);
      expect(serverMatches(filter, '$ce-wallet')).toBe(false);
    });
  });

  it('escapes regex characters in names', () => {
    const filter = serverSideFilter({ streamCategories: ['a.b'], eventTypes: [] });
    expect(serverMatches(filter, 'a.b-1')).toBe(true);
    expect(serverMatches(filter, 'axb-1')).toBe(false);
  });

  describe('When only event types are given', () => {
    it('filters event types exactly', () => {
      const filter = serverSideFilter({ eventTypes: ['WalletFunded', 'WalletDebited'] });
      expect(filter.filterOn).toBe('eventType');
      expect(serverMatches(filter, 'WalletFunded')).toBe(true);
      expect(serverMatches(filter, 'WalletFundedV2')).toBe(false);
      expect(serverMatches(filter, 'XWalletDebited')).toBe(false);
    });
  });

  describe('When both lists are given (category OR type) or neither', () => {
    it.each([[{ streamCategories: ['wallet'], eventTypes: ['ScopeActivated'] }], [{}], [undefined]])('only excludes system event types server-side (%j)', (eventFilter) => {
      const filter = serverSideFilter(eventFilter);
      expect(filter.filterOn).toBe('eventType');
      expect(serverMatches(filter, 'ScopeActivated')).toBe(true);
      expect(serverMatches(filter, 'WalletFunded')).toBe(true);
      expect(serverMatches(filter, '$>')).toBe(false);
      expect(serverMatches(filter, '$metadata')).toBe(false);
    });
  });
});

describe('passesFilter', () => {
  it('drops system streams and system event types whatever the filter', () => {
    expect(passesFilter({ streamId: '$ce-wallet', type: 'WalletFunded' }, undefined)).toBe(false);
    expect(passesFilter({ streamId: 'wallet-1', type: '$>' }, { streamCategories: ['wallet'] })).toBe(false);
  });

  it('keeps an event whose category OR type is listed', () => {
    const filter = { streamCategories: ['wallet'], eventTypes: ['ScopeActivated'] };
    expect(passesFilter({ streamId: 'wallet-1', type: 'WalletFunded' }, filter)).toBe(true);
    expect(passesFilter({ streamId: 'organization-1', type: 'ScopeActivated' }, filter)).toBe(true);
    expect(passesFilter({ streamId: 'organization-1', type: 'ApiKeyIssued' }, filter)).toBe(false);
  });
});

describe('toWrongExpectedRevision', () => {
  it.each([
    ['no_stream' as const, 'no_stream'],
    [-1n, 'no_stream'],
    [0n, 0n],
    [7n, 7n],
  ])('maps the current revision %p to %p and keeps what was expected', (current, actual) => {
    const error = toWrongExpectedRevision('wallet-1', 5n, current);
    expect(error.streamId).toBe('wallet-1');
    expect(error.expected).toBe(5n);
    expect(error.actual).toBe(actual);
  });
});

describe('toRecordedEvent', () => {
  it('maps a self-committed event, its position being its commit position', () => {
    expect(toRecordedEvent(recorded())).toEqual({
      id: '0f8fad5b-d9cb-469f-a165-70867728950e',
      streamId: 'wallet-org1.test',
      type: 'WalletFunded',
      revision: 3n,
      position: 4_242n,
      data: { schemaVersion: 1, amountKobo: 5_000 },
      metadata: { correlationId: 'req-1' },
      createdAt: new Date('2024-11-22T10:00:00Z'),
    });
  });

  it('reads absent metadata as an empty object, and JSON bytes as JSON', () => {
    expect(toRecordedEvent(recorded({ metadata: undefined })).metadata).toEqual({});
    expect(toRecordedEvent(recorded({ data: new TextEncoder().encode('{"a":1}') })).data).toEqual({ a: 1 });
  });

  it.each([
    ['no position', { position: undefined }],
    ["the server's 'no position'", { position: { commit: 2n ** 64n - 1n, prepare: 2n ** 64n - 1n } }],
    ['a commit position shared by an explicit transaction', { position: { commit: 5_000n, prepare: 4_900n } }],
    ['data that is not an object', { data: [1, 2] }],
    ['data that is not JSON', { data: new TextEncoder().encode('not json') }],
  ])('refuses an event with %s', (_, overrides) => {
    expect(() => toRecordedEvent(recorded(overrides as Partial<EsdbRecordedEvent>))).toThrow(/invariant/);
  });
});

describe('compareLogPositions', () => {
  it('orders by commit position, then by prepare position', () => {
    expect(compareLogPositions({ commit: 1n, prepare: 9n }, { commit: 2n, prepare: 0n })).toBe(-1);
    expect(compareLogPositions({ commit: 2n, prepare: 1n }, { commit: 2n, prepare: 0n })).toBe(1);
    expect(compareLogPositions({ commit: 2n, prepare: 2n }, { commit: 2n, prepare: 2n })).toBe(0);
  });
});

describe('isUnavailable', () => {
  it('treats connection failures as unavailability', () => {
    expect(isUnavailable(new UnavailableError())).toBe(true);
    // The client's capabilities probe rejects with the raw gRPC error.
    expect(isUnavailable(Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14, details: 'No connection established' }))).toBe(true);
    expect(isUnavailable(new UnknownError({ code: 13, details: 'Received RST_STREAM', message: '13 INTERNAL' } as never))).toBe(true);
    expect(isUnavailable(new UnknownError(undefined, 'Could not recognize Server Is Not Ready'))).toBe(true);
  });

  it('does not treat refusals and bugs as unavailability', () => {
    expect(isUnavailable(new WrongExpectedVersionError(undefined, { streamName: 'wallet-1', expected: 0n, current: 1n }))).toBe(false);
    expect(isUnavailable(new UnknownError(undefined, 'something else'))).toBe(false);
    expect(isUnavailable(new RangeError('bad'))).toBe(false);
    expect(isUnavailable('a string')).toBe(false);
  });
});

describe('EsdbEventStore construction', () => {
  it('never echoes an invalid connection string, which may hold a password', () => {
    expect(() => new EsdbEventStore('esdb://admin:s3cret@host:notaport')).toThrow(/^(?!.*s3cret).*$/s);
  });

  it('refuses throwOnAppendFailure=false, under which refused appends would resolve', () => {
    expect(() => new EsdbEventStore('esdb://127.0.0.1:2113?tls=false&throwOnAppendFailure=false')).toThrow(/throwOnAppendFailure/);
  });
});
