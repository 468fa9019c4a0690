import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/** A value of one COPY column: null is SQL NULL, objects go as JSON, dates as ISO 8601. */
export type CopyValue = string | number | bigint | boolean | Date | null | Readonly<Record<string, unknown>>;

/** Rows per chunk handed to the COPY stream: big enough that the stream's own work per chunk is noise, small enough to bound the memory held. */
const CHUNK_ROWS = 2_000;
const MAX_COLUMNS = 64;

/** COPY's text format: backslash, tab, newline and carriage return escaped; everything else as is. */
const NEEDS_ESCAPE = /[\\\t\n\r]/;

function escapeText(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : text;
}

function field(value: CopyValue): string {
  if (value === null) return '\\N';
  switch (typeof value) {
    case 'string':
      return escapeText(value);
    case 'number':
      if (!Number.isFinite(value)) throw new RangeError('invariant: a COPY value is not a finite number');
      return String(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 't' : 'f';
    default:
      return value instanceof Date ? value.toISOString() : escapeText(JSON.stringify(value));
  }
}

/**
 * Writes rows into `table` with `COPY … FROM STDIN` on the caller's client, inside its
 * transaction. A row that breaks a constraint fails the whole COPY (and the transaction), as a
 * plain multi-row insert would. Nothing is logged: rows may hold sealed personal data.
 */
export async function copyRows(client: pg.PoolClient | pg.Client, table: string, columns: readonly string[], rows: readonly (readonly CopyValue[])[]): Promise<number> {
  if (rows.length === 0) return 0;
  if (columns.length === 0 || columns.length > MAX_COLUMNS) throw new RangeError(`invariant: COPY into ${table} with ${columns.length} columns`);
  const width = columns.length;
  function* chunks(): Generator<string> {
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const end = Math.min(rows.length, start + CHUNK_ROWS);
      let text = '';
      for (let r = start; r < end; r++) {
        const row = rows[r];
        if (row.length !== width) throw new RangeError(`invariant: a row of ${row.length} values for ${width} columns of ${table}`);
        text += field(row[0]);
        for (let c = 1; c < width; c++) text += `\t${field(row[c])}`;
        text += '\n';
      }
      yield text;
    }
  }
  const stream = client.query(copyFrom(`copy ${table} (${columns.join(', ')}) from stdin`));
  await pipeline(Readable.from(chunks()), stream);
  return rows.length;
}
