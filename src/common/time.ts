/** ISO 8601 with an explicit UTC offset (`+00:00`), as the spec asks of every timestamp. */
export function isoWithOffset(date: Date): string {
  return date.toISOString().replace(/Z$/, '+00:00');
}
