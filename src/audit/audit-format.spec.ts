import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { groupedNaira } from '../common/money.js';
import { CsvWriter, csvField, ENTRY_AS_STRING, ENTRY_NO_ROOM, JsonWriter, jsonInteger, naira, TableWriter } from './audit-format.js';
import type { AuditEntry, ReplaySummary } from './wallet-replay.js';

const entry: AuditEntry = {
  revision: 3n,
  position: 12_000_000_001n,
  eventId: '6f1c9a57-8f2e-4a3b-9a51-2d0c1e7b4a10',
  eventType: 'WalletFunded',
  entryType: 'funding',
  reference: 'INV,"2026"',
  scope: null,
  amountKobo: 123_456,
  balanceKobo: 5,
  reservedKobo: 0,
  availableKobo: 5,
  occurredAt: new Date('2026-03-03T13:00:00.000Z'),
  actor: 'operator:admin',
  hash: 'a'.repeat(64),
  chain: 'hashed',
};

describe('audit output', () => {
  it('gives naira as exact decimal strings', () => {
    expect([naira(0), naira(5), naira(123_456), naira(-250), naira(9_007_199_254_740_991)]).toEqual(['0.00', '0.05', '1234.56', '-2.50', '90071992547409.91']);
  });

  it('groups naira in thousands for people', () => {
    expect([groupedNaira(0), groupedNaira(99), groupedNaira(123_456), groupedNaira(123_456_789), groupedNaira(-100_000_000), groupedNaira(9_007_199_254_740_991)]).toEqual([
      '0.00',
      '0.99',
      '1,234.56',
      '1,234,567.89',
      '-1,000,000.00',
      '90,071,992,547,409.91',
    ]);
  });

  it('gives revisions and positions in JSON as numbers up to 2^53 - 1, as strings beyond', () => {
    expect([jsonInteger(0n), jsonInteger(9_007_199_254_740_991n), jsonInteger(9_007_199_254_740_992n), jsonInteger('12'), jsonInteger('18446744073709551615')]).toEqual([
      0,
      9_007_199_254_740_991,
      '9007199254740992',
      12,
      '18446744073709551615',
    ]);
  });

  it('writes a table row with every column, amounts in naira with thousands separators', () => {
    const writer = new TableWriter();
    const [titles] = writer.begin().split('\n');
    expect(titles.split(/ {2,}/)).toEqual([
      'occurred at',
      'type',
      'reference',
      'scope',
      'amount ₦',
      'balance ₦',
      'reserved ₦',
      'available ₦',
      'actor',
      'rev',
      'position',
      'chain',
      'hash',
    ]);
    const row = writer.entry({ ...entry, scope: 'nin', amountKobo: 123_456_789, balanceKobo: 200_000_000, reservedKobo: 1_500, availableKobo: 199_998_500 });
    expect(
      row
        .trimEnd()
        .split(/ {2,}/)
        .map((cell) => cell.trim()),
    ).toEqual([
      '2026-03-03T13:00:00.000+00:00',
      'funding',
      'INV,"2026"',
      'nin',
      '1,234,567.89',
      '2,000,000.00',
      '15.00',
      '1,999,985.00',
      'operator:admin',
      '3',
      '12000000001',
      'hashed',
      'aaaaaaaaaaaa…',
    ]);
  });

  it('quotes CSV fields as RFC 4180 asks and defuses formulas', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"');
    expect(csvField('=HYPERLINK("x")', { text: true })).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('-A1', { text: true })).toBe("'-A1");
    expect(csvField(null)).toBe('');
  });

  it('writes a CSV header and one CRLF-terminated row per entry, amounts as integers', () => {
    const writer = new CsvWriter();
    const header = writer.begin();
    const row = writer.entry(entry);
    expect(header.endsWith('\r\n')).toBe(true);
    expect(row).toBe(
      `3,12000000001,${entry.eventId},2026-03-03T13:00:00.000+00:00,funding,"INV,""2026""",,123456,5,0,5,1234.56,0.05,0.00,0.05,operator:admin,hashed,${'a'.repeat(64)}\r\n`,
    );
    expect(header).toBe(
      'revision,position,event_id,occurred_at,entry_type,reference,scope,amount_kobo,balance_kobo,reserved_kobo,available_kobo,amount_naira,balance_naira,reserved_naira,available_naira,actor,chain,hash\r\n',
    );
  });

  it('writes the bytes of the CSV row straight into a buffer, or leaves to the string what it does not handle', () => {
    const writer = new CsvWriter();
    // Mostly what it writes as bytes (ASCII text, safe integers), and what it leaves to the string besides.
    const text = fc.oneof(
      { arbitrary: fc.string({ maxLength: 20 }), weight: 8 },
      { arbitrary: fc.constantFrom('', '=1+2', '-5', '@x', '\tx', '\rx', '+x', 'a,b', 'say "hi"', 'two\r\nlines', "'", 'naïve', '😀'), weight: 2 },
      { arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }), weight: 1 },
    );
    const amount = fc.oneof(
      { arbitrary: fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }), weight: 10 },
      {
        arbitrary: fc.oneof(
          fc.constantFrom(0, -0, 5, 99, 100, -1, -99, -100, 9_007_199_254_740_991, -9_007_199_254_740_991),
          fc.maxSafeInteger(),
          fc.maxSafeInteger().map((value) => -value),
        ),
        weight: 4,
      },
      { arbitrary: fc.constantFrom(2 ** 53, 1e21, 0.5, Number.NaN), weight: 1 },
    );
    const sequence = fc.oneof(
      { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 53n - 1n }), weight: 20 },
      { arbitrary: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n }), fc.constantFrom(0n, 9_007_199_254_740_991n, 9_007_199_254_740_992n)), weight: 1 },
    );
    let written = 0;
    fc.assert(
      fc.property(
        fc.record({
          revision: sequence,
          position: sequence,
          eventId: fc.oneof(fc.uuid(), text),
          entryType: fc.constantFrom('funding', 'reservation', 'debit', 'release'),
          reference: text,
          scope: fc.option(text),
          amountKobo: amount,
          balanceKobo: amount,
          reservedKobo: amount,
          availableKobo: amount,
          occurredAt: fc.date({ noInvalidDate: true }),
          actor: text,
          hash: fc.option(fc.oneof(fc.stringMatching(/^[0-9a-f]{64}$/), text)),
          chain: fc.constantFrom('hashed', 'unhashed', 'broken'),
        }),
        fc.integer({ min: 0, max: 100 }),
        (generated, offset) => {
          const candidate = { ...generated, eventType: 'WalletFunded' } as AuditEntry;
          const into = Buffer.alloc(offset + 4_096, 0x7e);
          const end = writer.entryInto(candidate, into, offset);
          if (end === ENTRY_AS_STRING) return;
          written++;
          expect(into.subarray(0, offset).every((byte) => byte === 0x7e)).toBe(true);
          expect(into.subarray(offset, end).toString('utf8')).toBe(writer.entry(candidate));
        },
      ),
      { numRuns: 5_000 },
    );
    // Most generated entries were written as bytes, not only left to the string.
    expect(written).toBeGreaterThan(1_000);
    expect(writer.entryInto(entry, Buffer.alloc(100), 0)).toBe(ENTRY_NO_ROOM);
    expect(writer.entryInto({ ...entry, reference: 'naïve' }, Buffer.alloc(4_096), 0)).toBe(ENTRY_AS_STRING);
    expect(writer.entryInto({ ...entry, revision: 2n ** 53n }, Buffer.alloc(4_096), 0)).toBe(ENTRY_AS_STRING);
  });

  it('writes one JSON document entry by entry', () => {
    const writer = new JsonWriter();
    const summary = {
      organizationId: 'org_1',
      environment: 'live',
      lastRevision: '3',
      lastPosition: '18446744073709551615',
      totals: {},
      chain: { hashedFromRevision: '0', firstBreak: { revision: '2', position: '40', eventId: 'e', kind: 'link_broken', message: 'm' } },
      ledgerProblems: [],
    } as unknown as ReplaySummary;
    const text = writer.begin() + writer.entry(entry) + writer.entry(entry) + writer.end(summary);
    const parsed = JSON.parse(text);
    expect(parsed.entries).toHaveLength(2);
    expect(parsed.entries[0]).toMatchObject({ revision: 3, position: 12_000_000_001, amountKobo: 123456, reference: 'INV,"2026"' });
    expect(parsed.summary).toMatchObject({ organizationId: 'org_1', lastRevision: 3, lastPosition: '18446744073709551615', ledgerProblems: [] });
    expect(parsed.summary.chain).toMatchObject({ hashedFromRevision: 0, firstBreak: { revision: 2, position: 40 } });
    expect(JSON.parse(new JsonWriter().begin() + new JsonWriter().end(summary)).entries).toEqual([]);
  });
});

describe('ISO 8601 instants with an offset', () => {
  it('reads Z and ±hh:mm offsets, and refuses a missing offset or a day past the month', async () => {
    const { parseIsoInstant } = await import('../common/time.js');
    expect(parseIsoInstant('2026-03-03T14:00:00+01:00')?.toISOString()).toBe('2026-03-03T13:00:00.000Z');
    expect(parseIsoInstant('2026-03-03T14:00Z')?.toISOString()).toBe('2026-03-03T14:00:00.000Z');
    expect(parseIsoInstant('2024-02-29T00:00:00.123456-05:30')?.toISOString()).toBe('2024-02-29T05:30:00.123Z');
    for (const bad of ['2026-03-03T14:00:00', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-03-03 14:00:00Z', 'yesterday', '2026-03-03T24:00:00Z'])
      expect(parseIsoInstant(bad)).toBeUndefined();
  });
});
