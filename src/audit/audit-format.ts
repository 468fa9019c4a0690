import { groupedNaira, naira } from '../common/money.js';
import { isoWithOffset } from '../common/time.js';
import type { AuditEntry, Figures, LogProblem, ReplaySummary } from './wallet-replay.js';

/**
 * The three outputs of the audit command, written entry by entry (nothing is held back but the
 * header). Amounts are integers in kobo; the naira columns are exact decimal strings, never floats.
 */
export type AuditFormat = 'table' | 'csv' | 'json';
export const AUDIT_FORMATS: readonly AuditFormat[] = ['table', 'csv', 'json'];

export interface AuditWriter {
  begin(): string;
  entry(entry: AuditEntry): string;
  /**
   * The UTF-8 bytes of `entry(entry)` written into `into` at `at`, without building the string;
   * answers where they end, ENTRY_NO_ROOM when the room from `at` may be too small, or
   * ENTRY_AS_STRING for an entry it leaves to `entry`. Optional: a writer without it is written
   * through `entry`.
   */
  entryInto?(entry: AuditEntry, into: Buffer, at: number): number;
  /** What ends the document on stdout. */
  end(summary: ReplaySummary): string;
}

export { naira } from '../common/money.js';

/** AuditWriter.entryInto's answers when it wrote nothing usable. */
export const ENTRY_AS_STRING = -1;
export const ENTRY_NO_ROOM = -2;

/**
 * One RFC 4180 field. Text that a spreadsheet would run as a formula (a leading = + - @, tab or
 * carriage return) gets a leading apostrophe, as OWASP advises against CSV injection: references
 * come from operators and integrators.
 */
export function csvField(value: string | number | null, options: { text?: boolean } = {}): string {
  if (value === null) return '';
  let field = String(value);
  if (options.text === true && /^[=+\-@\t\r]/.test(field)) field = `'${field}`;
  return /[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}

const CRLF = '\r\n';
const TEXT = { text: true } as const;
export const CSV_COLUMNS = [
  'revision',
  'position',
  'event_id',
  'occurred_at',
  'entry_type',
  'reference',
  'scope',
  'amount_kobo',
  'balance_kobo',
  'reserved_kobo',
  'available_kobo',
  'amount_naira',
  'balance_naira',
  'reserved_naira',
  'available_naira',
  'actor',
  'chain',
  'hash',
] as const;

function csvRow(fields: readonly string[]): string {
  return fields.join(',') + CRLF;
}

/**
 * A revision or position in the command's JSON: a number where it is a safe integer (below 2^53,
 * which every real log stays under), a decimal string only where a number would lose digits.
 */
export function jsonInteger(value: bigint | string): number | string {
  const asNumber = Number(value);
  return Number.isSafeInteger(asNumber) ? asNumber : value.toString();
}

function problemJson(problem: LogProblem): Record<string, unknown> {
  return { ...problem, revision: jsonInteger(problem.revision), position: jsonInteger(problem.position) };
}

/** An entry of the admin API's history: revision and position as strings, as that API documents. */
export function entryJson(entry: AuditEntry): Record<string, unknown> {
  return {
    revision: entry.revision.toString(),
    position: entry.position.toString(),
    eventId: entry.eventId,
    occurredAt: isoWithOffset(entry.occurredAt),
    entryType: entry.entryType,
    reference: entry.reference,
    scope: entry.scope,
    amountKobo: entry.amountKobo,
    balanceKobo: entry.balanceKobo,
    reservedKobo: entry.reservedKobo,
    availableKobo: entry.availableKobo,
    actor: entry.actor,
    chain: entry.chain,
    hash: entry.hash,
  };
}

/** An entry of the command's JSON: revision and position as numbers where they fit (jsonInteger). */
export function auditEntryJson(entry: AuditEntry): Record<string, unknown> {
  return { ...entryJson(entry), revision: jsonInteger(entry.revision), position: jsonInteger(entry.position) };
}

export function summaryJson(summary: ReplaySummary): Record<string, unknown> {
  const { chain } = summary;
  return {
    organizationId: summary.organizationId,
    environment: summary.environment,
    from: summary.from === undefined ? null : isoWithOffset(summary.from),
    asOf: summary.to === undefined ? null : isoWithOffset(summary.to),
    eventsReplayed: summary.eventsReplayed,
    lastRevision: summary.lastRevision === null ? null : jsonInteger(summary.lastRevision),
    lastPosition: summary.lastPosition === null ? null : jsonInteger(summary.lastPosition),
    opening: summary.opening,
    closing: summary.closing,
    totals: summary.totals,
    entriesShown: summary.entriesShown,
    openReservations: summary.openReservations,
    chain: {
      ...chain,
      hashedFromRevision: chain.hashedFromRevision === null ? null : jsonInteger(chain.hashedFromRevision),
      firstBreak: chain.firstBreak === null ? null : problemJson(chain.firstBreak),
    },
    ledgerProblems: summary.ledgerProblems.map(problemJson),
    ledgerProblemCount: summary.ledgerProblemCount,
  };
}

const MAX_SAFE_BIGINT = BigInt(Number.MAX_SAFE_INTEGER);
/** The row's bytes besides its text fields: 18 separators, the line end, six integers and four naira amounts of at most 21 characters each, the time. */
const FIXED_ROW_BYTES = 512;
const COMMA = 0x2c;
const CARRIAGE_RETURN = 0x0d;
const LINE_FEED = 0x0a;
const ZERO = 0x30;
const MINUS = 0x2d;
const DOT = 0x2e;
const FIRST_NON_ASCII = 0x80;
const QUOTE = 0x22;

/** The characters of `text` as bytes, when all are ASCII; else -1 (nothing usable written). */
function writeAscii(into: Buffer, at: number, text: string): number {
  let to = at;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= FIRST_NON_ASCII) return -1;
    into[to++] = code;
  }
  return to;
}

/** `csvField(text, { text: true })`: as it stands when nothing in it needs quoting or defusing, which is checked as it is copied. */
function writeText(into: Buffer, at: number, text: string): number {
  const first = text.charCodeAt(0);
  // = + - @ tab and carriage return start a formula: csvField prefixes an apostrophe.
  if (first === 0x3d || first === 0x2b || first === MINUS || first === 0x40 || first === 0x09 || first === CARRIAGE_RETURN) return writeAscii(into, at, csvField(text, TEXT));
  let to = at;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= FIRST_NON_ASCII) return -1;
    if (code === QUOTE || code === COMMA || code === CARRIAGE_RETURN || code === LINE_FEED) return writeAscii(into, at, csvField(text, TEXT));
    into[to++] = code;
  }
  return to;
}

/** The decimal digits of a safe integer, as String writes them (a minus sign before a negative one; -0 as 0). */
function writeInteger(into: Buffer, at: number, value: number): number {
  let to = at;
  let rest = value;
  if (rest < 0) {
    into[to++] = MINUS;
    rest = -rest;
  }
  let digits = 1;
  for (let power = 10; power <= rest; power *= 10) digits++;
  const end = to + digits;
  // From the last digit back: Math.floor(rest / 10) is exact below 2^53.
  for (let i = end - 1; i >= to; i--) {
    const quotient = Math.floor(rest / 10);
    into[i] = ZERO + (rest - quotient * 10);
    rest = quotient;
  }
  return end;
}

/** `naira(kobo)`: the sign, the whole naira (Math.floor(abs / 100), as naira computes it), a dot and two digits. */
function writeNaira(into: Buffer, at: number, kobo: number): number {
  let to = at;
  if (kobo < 0) into[to++] = MINUS;
  const abs = Math.abs(kobo);
  to = writeInteger(into, to, Math.floor(abs / 100));
  const cents = abs % 100;
  into[to++] = DOT;
  into[to++] = ZERO + Math.floor(cents / 10);
  into[to++] = ZERO + (cents % 10);
  return to;
}

export class CsvWriter implements AuditWriter {
  begin(): string {
    return csvRow([...CSV_COLUMNS]);
  }

  /** One template rather than an array joined: the audit writes a row per event, a million or more. */
  entry(entry: AuditEntry): string {
    return (
      `${entry.revision},${entry.position},${entry.eventId},${isoWithOffset(entry.occurredAt)},${entry.entryType},` +
      `${csvField(entry.reference, TEXT)},${csvField(entry.scope, TEXT)},${entry.amountKobo},${entry.balanceKobo},${entry.reservedKobo},${entry.availableKobo},` +
      `${naira(entry.amountKobo)},${naira(entry.balanceKobo)},${naira(entry.reservedKobo)},${naira(entry.availableKobo)},` +
      `${csvField(entry.actor, TEXT)},${entry.chain},${entry.hash ?? ''}${CRLF}`
    );
  }

  /**
   * The same row, written byte by byte: building it as a string of some forty pieces and then
   * encoding that (which flattens it first) cost about as much as the rest of the main thread's
   * work per event. Only entries of ASCII text, safe integer amounts and revisions and positions
   * below 2^53 are written here (where each number's digits are those String writes); any other
   * answers ENTRY_AS_STRING, and the caller writes `entry`'s string.
   */
  entryInto(entry: AuditEntry, into: Buffer, at: number): number {
    const { revision, position, amountKobo, balanceKobo, reservedKobo, availableKobo } = entry;
    if (revision > MAX_SAFE_BIGINT || position > MAX_SAFE_BIGINT || revision < 0n || position < 0n) return ENTRY_AS_STRING;
    if (!Number.isSafeInteger(amountKobo) || !Number.isSafeInteger(balanceKobo) || !Number.isSafeInteger(reservedKobo) || !Number.isSafeInteger(availableKobo))
      return ENTRY_AS_STRING;
    const { reference, scope, actor, hash } = entry;
    // Every field at most 3 bytes per UTF-16 unit, text fields doubled by quoting, numbers at most 21 characters each.
    const bound =
      at +
      FIXED_ROW_BYTES +
      6 * (reference.length + (scope?.length ?? 0) + actor.length) +
      3 * (entry.eventId.length + entry.entryType.length + entry.chain.length + (hash?.length ?? 0));
    if (bound > into.length) return ENTRY_NO_ROOM;
    let to = writeInteger(into, at, Number(revision));
    into[to++] = COMMA;
    to = writeInteger(into, to, Number(position));
    into[to++] = COMMA;
    to = writeAscii(into, to, entry.eventId);
    if (to < 0) return ENTRY_AS_STRING;
    into[to++] = COMMA;
    to = writeAscii(into, to, isoWithOffset(entry.occurredAt));
    if (to < 0) return ENTRY_AS_STRING;
    into[to++] = COMMA;
    to = writeAscii(into, to, entry.entryType);
    if (to < 0) return ENTRY_AS_STRING;
    into[to++] = COMMA;
    to = writeText(into, to, reference);
    if (to < 0) return ENTRY_AS_STRING;
    into[to++] = COMMA;
    if (scope !== null) to = writeText(into, to, scope);
    if (to < 0) return ENTRY_AS_STRING;
    into[to++] = COMMA;
    to = writeInteger(into, to, amountKobo);
    into[to++] = COMMA;
    to = writeInteger(into, to, balanceKobo);
    into[to++] = COMMA;
    to = writeInteger(into, to, reservedKobo);
    into[to++] = COMMA;
    to = writeInteger(into, to, availableKobo);
    into[to++] = COMMA;
    to = writeNaira(into, to, amountKobo);
    into[to++] = COMMA;
    to = writeNaira(into, to, balanceKobo);
    into[to++] = COMMA;
    to = writeNaira(into, to, reservedKobo);
    into[to++] = COMMA;
    to = writeNaira(into, to, availableKobo);
    into[to++] = COMMA;
    to = writeText(into, to, actor);
    if (to < 0) return ENTRY_AS_STRING;
    into[to++] = COMMA;
    to = writeAscii(into, to, entry.chain);
    if (to < 0) return ENTRY_AS_STRING;
    into[to++] = COMMA;
    if (hash !== null) to = writeAscii(into, to, hash);
    if (to < 0) return ENTRY_AS_STRING;
    into[to++] = CARRIAGE_RETURN;
    into[to++] = LINE_FEED;
    return to;
  }

  /** The CSV stays one rectangular table; the totals go to stderr (see the CLI). */
  end(): string {
    return '';
  }
}

/** One JSON document, `{entries: [...], summary: {...}}`, written as it goes. */
export class JsonWriter implements AuditWriter {
  private first = true;

  begin(): string {
    return '{"entries":[';
  }

  entry(entry: AuditEntry): string {
    const separator = this.first ? '\n' : ',\n';
    this.first = false;
    return separator + JSON.stringify(auditEntryJson(entry));
  }

  end(summary: ReplaySummary): string {
    return `${this.first ? '' : '\n'}],\n"summary":${JSON.stringify(summaryJson(summary), null, 2)}}\n`;
  }
}

const TABLE_COLUMNS: ReadonlyArray<{ title: string; width: number; right?: boolean }> = [
  { title: 'occurred at', width: 29 },
  { title: 'type', width: 11 },
  { title: 'reference', width: 30 },
  { title: 'scope', width: 20 },
  { title: 'amount ₦', width: 18, right: true },
  { title: 'balance ₦', width: 20, right: true },
  { title: 'reserved ₦', width: 18, right: true },
  { title: 'available ₦', width: 20, right: true },
  { title: 'actor', width: 40 },
  { title: 'rev', width: 7, right: true },
  { title: 'position', width: 20, right: true },
  { title: 'chain', width: 8 },
  { title: 'hash', width: 13 },
];

function cell(value: string, width: number, right = false): string {
  const clipped = value.length > width ? `${value.slice(0, width - 1)}…` : value;
  return right ? clipped.padStart(width) : clipped.padEnd(width);
}

function tableRow(values: readonly string[]): string {
  return `${values
    .map((value, i) => cell(value, TABLE_COLUMNS[i].width, TABLE_COLUMNS[i].right))
    .join('  ')
    .trimEnd()}\n`;
}

const kobo = (value: number) => value.toLocaleString('en-US');

function figuresLine(label: string, value: Figures): string {
  const both = (amountKobo: number) => `₦${groupedNaira(amountKobo)} (${kobo(amountKobo)} kobo)`;
  return `${label} balance ${both(value.balanceKobo)}, reserved ${both(value.reservedKobo)}, available ${both(value.availableKobo)}\n`;
}

/**
 * Human-readable lines for a terminal: amounts in naira with thousands separators (CSV and JSON
 * carry kobo); the hash is cut to its first 12 hex digits, enough to compare by eye. The summary ends the output.
 */
export class TableWriter implements AuditWriter {
  begin(): string {
    return tableRow(TABLE_COLUMNS.map((column) => column.title)) + tableRow(TABLE_COLUMNS.map((column) => '-'.repeat(column.width)));
  }

  entry(entry: AuditEntry): string {
    return tableRow([
      isoWithOffset(entry.occurredAt),
      entry.entryType,
      entry.reference,
      entry.scope ?? '',
      groupedNaira(entry.amountKobo),
      groupedNaira(entry.balanceKobo),
      groupedNaira(entry.reservedKobo),
      groupedNaira(entry.availableKobo),
      entry.actor,
      entry.revision.toString(),
      entry.position.toString(),
      entry.chain,
      entry.hash === null ? '' : `${entry.hash.slice(0, 12)}…`,
    ]);
  }

  end(summary: ReplaySummary): string {
    return `\n${summaryText(summary)}`;
  }
}

/** The totals and the as-of balance in words, for the table's end and for stderr beside CSV. */
export function summaryText(summary: ReplaySummary): string {
  const lines: string[] = [];
  lines.push(
    `wallet ${summary.streamId}: ${summary.eventsReplayed} events replayed${summary.lastRevision === null ? '' : ` (revisions 0 to ${summary.lastRevision})`}, ${summary.entriesShown} shown`,
  );
  if (summary.from !== undefined) lines.push(figuresLine(`opening at ${isoWithOffset(summary.from)}:`, summary.opening).trimEnd());
  for (const [type, total] of Object.entries(summary.totals))
    lines.push(`  ${type.padEnd(12)}${String(total.count).padStart(8)} entries  ${`₦${groupedNaira(total.amountKobo)}`.padStart(20)}  (${kobo(total.amountKobo)} kobo)`);
  lines.push(figuresLine(summary.to === undefined ? 'balance now:' : `balance as of ${isoWithOffset(summary.to)}:`, summary.closing).trimEnd());
  lines.push(`open reservations: ${summary.openReservations}`);
  const { chain } = summary;
  if (chain.verified) {
    lines.push(
      `hash chain: verified, ${chain.hashedEvents} hashed events${chain.unhashedEvents > 0 ? `, ${chain.unhashedEvents} written before the chain existed (revisions 0 to ${chain.unhashedEvents - 1})` : ''}; head ${chain.head}`,
    );
  } else if (chain.firstBreak !== null) {
    const broken = chain.firstBreak;
    lines.push(
      `hash chain: BROKEN at revision ${broken.revision} (position ${broken.position}, event ${broken.eventId}): ${broken.message}; ${chain.breaks} broken link(s) in all`,
    );
  }
  if (summary.ledgerProblemCount > 0) {
    lines.push(`ledger rules: ${summary.ledgerProblemCount} event(s) break them`);
    for (const problem of summary.ledgerProblems) lines.push(`  revision ${problem.revision} (event ${problem.eventId}): ${problem.message}`);
  }
  return `${lines.join('\n')}\n`;
}
