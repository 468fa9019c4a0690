import { describe, expect, it } from '@jest/globals';
import { CsvWriter, csvField, JsonWriter, naira } from './audit-format.js';
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
    expect(row).toBe(`3,12000000001,${entry.eventId},2026-03-03T13:00:00.000+00:00,funding,"INV,""2026""",,123456,5,0,5,1234.56,0.05,0.05,operator:admin,hashed,${'a'.repeat(64)}\r\n`);
    expect(header.split(',').length).toBe(17);
  });

  it('writes one JSON document entry by entry', () => {
    const writer = new JsonWriter();
    const summary = { organizationId: 'org_1', environment: 'live', totals: {}, chain: {} } as unknown as ReplaySummary;
    const text = writer.begin() + writer.entry(entry) + writer.entry(entry) + writer.end(summary);
    const parsed = JSON.parse(text);
    expect(parsed.entries).toHaveLength(2);
    expect(parsed.entries[0]).toMatchObject({ revision: '3', position: '12000000001', amountKobo: 123456, reference: 'INV,"2026"' });
    expect(parsed.summary.organizationId).toBe('org_1');
    expect(JSON.parse(new JsonWriter().begin() + new JsonWriter().end(summary)).entries).toEqual([]);
  });
});

describe('ISO 8601 instants with an offset', () => {
  it('reads Z and ±hh:mm offsets, and refuses a missing offset or a day past the month', async () => {
    const { parseIsoInstant } = await import('../common/time.js');
    expect(parseIsoInstant('2026-03-03T14:00:00+01:00')?.toISOString()).toBe('2026-03-03T13:00:00.000Z');
    expect(parseIsoInstant('2026-03-03T14:00Z')?.toISOString()).toBe('2026-03-03T14:00:00.000Z');
    expect(parseIsoInstant('2024-02-29T00:00:00.123456-05:30')?.toISOString()).toBe('2024-02-29T05:30:00.123Z');
    for (const bad of ['2026-03-03T14:00:00', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z', '2026-03-03 14:00:00Z', 'yesterday', '2026-03-03T24:00:00Z']) expect(parseIsoInstant(bad)).toBeUndefined();
  });
});
