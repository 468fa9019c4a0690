// Pieces shared by the projections' folds in the database (Projection.foldInDatabase).

/**
 * Whether the metadata's `occurredAt` (when present) is text in the form `Date.prototype.toISOString`
 * writes (CANONICAL_INSTANT in src/common/time.ts), which means the same instant to JavaScript and to
 * PostgreSQL; any other form the page path parses with JavaScript's Date, which reads some texts
 * otherwise. Tested as a round trip through PostgreSQL's parser, cheaper than a regular
 * expression: a time that does not parse fails the statement, and the fold falls back.
 */
export const occurredAtNotCanonicalSql = `(jsonb_typeof(metadata -> 'occurredAt') <> 'string'
  or length(metadata ->> 'occurredAt') <> 24
  or to_char((metadata ->> 'occurredAt')::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') <> (metadata ->> 'occurredAt'))`;

/**
 * An event's time as the projections write it (occurredAtText): the metadata's `occurredAt`, else
 * the commit time to the millisecond, as the page reader hands it over (`floor` of the epoch's
 * milliseconds, which date_trunc matches for any time after 1970).
 */
export const occurredAtSql = `coalesce((metadata ->> 'occurredAt')::timestamptz, date_trunc('milliseconds', created_at))`;
