import { createHash } from 'node:crypto';
import type pg from 'pg';

/** Distinct statement texts remembered; past it the map starts over (names are derived, not counted, so nothing clashes). */
const MAX_REMEMBERED = 1_000;
const names = new Map<string, string>();

/**
 * A query as a named (prepared) statement. PostgreSQL then parses and plans the text once per
 * connection instead of on every call; for the projections' set-based statements planning costs
 * more than running them. The name
 * is derived from the text, so one text always has one name and two texts never share one.
 * Only for fixed texts with their variable parts in `values`: a text built around literal values
 * would leave a prepared statement per value on every connection.
 */
export function prepared(text: string, values?: readonly unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (name === undefined) {
    name = `s_${createHash('sha256').update(text).digest('base64url').slice(0, 24)}`;
    if (names.size >= MAX_REMEMBERED) names.clear();
    names.set(text, name);
  }
  return { name, text, values: values as unknown[] | undefined };
}
