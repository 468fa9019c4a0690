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
  /** What ends the document on stdout. */
  end(summary: ReplaySummary): string;
}

export { naira } from '../common/money.js';

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
  return `${values.map((value, i) => cell(value, TABLE_COLUMNS[i].width, TABLE_COLUMNS[i].right)).join('  ').trimEnd()}\n`;
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
  lines.push(`wallet ${summary.streamId}: ${summary.eventsReplayed} events replayed${summary.lastRevision === null ? '' : ` (revisions 0 to ${summary.lastRevision})`}, ${summary.entriesShown} shown`);
  if (summary.from !== undefined) lines.push(figuresLine(`opening at ${isoWithOffset(summary.from)}:`, summary.opening).trimEnd());
  for (const [type, total] of Object.entries(summary.totals)) lines.push(`  ${type.padEnd(12)}${String(total.count).padStart(8)} entries  ${`₦${groupedNaira(total.amountKobo)}`.padStart(20)}  (${kobo(total.amountKobo)} kobo)`);
  lines.push(figuresLine(summary.to === undefined ? 'balance now:' : `balance as of ${isoWithOffset(summary.to)}:`, summary.closing).trimEnd());
  lines.push(`open reservations: ${summary.openReservations}`);
  const { chain } = summary;
  if (chain.verified) {
    lines.push(
      `hash chain: verified, ${chain.hashedEvents} hashed events${chain.unhashedEvents > 0 ? `, ${chain.unhashedEvents} written before the chain existed (revisions 0 to ${chain.unhashedEvents - 1})` : ''}; head ${chain.head}`,
    );
  } else if (chain.firstBreak !== null) {
    const broken = chain.firstBreak;
    lines.push(`hash chain: BROKEN at revision ${broken.revision} (position ${broken.position}, event ${broken.eventId}): ${broken.message}; ${chain.breaks} broken link(s) in all`);
  }
  if (summary.ledgerProblemCount > 0) {
    lines.push(`ledger rules: ${summary.ledgerProblemCount} event(s) break them`);
    for (const problem of summary.ledgerProblems) lines.push(`  revision ${problem.revision} (event ${problem.eventId}): ${problem.message}`);
  }
  return `${lines.join('\n')}\n`;
}
