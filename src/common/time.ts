/** ISO 8601 with an explicit UTC offset (`+00:00`), as the spec asks of every timestamp. */
export function isoWithOffset(date: Date): string {
  // toISOString always ends in `Z` (it throws on an invalid date); a slice is cheaper than a regex
  // on lists that format one per row.
  return `${date.toISOString().slice(0, -1)}+00:00`;
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)(:[0-5]\d(\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/**
 * An ISO 8601 date-time with an explicit offset (`Z` or `±hh:mm`), or undefined. A time without an
 * offset would mean different instants on different machines; a day past the month's end (which
 * `Date` silently rolls over) is refused.
 */
export function parseIsoInstant(value: string): Date | undefined {
  const match = ISO_INSTANT.exec(value);
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return undefined;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}
