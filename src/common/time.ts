const MS_PER_DAY = 86_400_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1_000 }, (_, i) => String(i).padStart(3, '0'));
/** `YYYY-MM-DDT` of the last day formatted: rows of a list or an audit mostly fall on the same day as the row before. */
let cachedDay = Number.NaN;
let cachedDayPrefix = '';

/**
 * ISO 8601 with an explicit UTC offset (`+00:00`), as the spec asks of every timestamp: the
 * characters of toISOString with `+00:00` for its `Z`. The date part comes from toISOString once per
 * day and the time of day is written from the milliseconds, much cheaper than toISOString per
 * call (the finance audit writes one per event, a million or more).
 */
export function isoWithOffset(date: Date): string {
  const time = date.getTime();
  const day = Math.floor(time / MS_PER_DAY);
  if (day !== cachedDay) {
    // Throws a RangeError on an invalid date, as before.
    const iso = date.toISOString();
    // Years before 0 or after 9999 take a sign and six digits: written whole, not cached.
    if (iso.length !== 24) return `${iso.slice(0, -1)}+00:00`;
    cachedDay = day;
    cachedDayPrefix = iso.slice(0, 11);
  }
  let ms = time - day * MS_PER_DAY;
  const hours = Math.floor(ms / 3_600_000);
  ms -= hours * 3_600_000;
  const minutes = Math.floor(ms / 60_000);
  ms -= minutes * 60_000;
  const seconds = Math.floor(ms / 1_000);
  ms -= seconds * 1_000;
  return `${cachedDayPrefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[ms]}+00:00`;
}

/** The day of the last canonical text `parseInstantText` parsed whole: its first 11 characters and that day's midnight in epoch milliseconds. */
let parsedDayPrefix = '';
let parsedDayMs = Number.NaN;
/** The form `Date.prototype.toISOString` writes for years 0000 to 9999, which reads back as the same text (but a day past its month's end, which Date rolls over). */
export const CANONICAL_INSTANT = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const COLON = 0x3a;
const DOT = 0x2e;
const LETTER_Z = 0x5a;

/** The digits at `at` and `at + 1` of `text` as a number; NaN unless both are digits. */
function twoDigits(text: string, at: number): number {
  const tens = text.charCodeAt(at) - 0x30;
  const ones = text.charCodeAt(at + 1) - 0x30;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : Number.NaN;
}

/**
 * `Date.parse(text)`, for any text. An event's `occurredAt` is the canonical `toISOString` form,
 * and a wallet's events mostly fall on the day of the event before: for a text of the day last
 * parsed, the time of day is read from its digits (hours below 24, minutes and seconds below 60;
 * anything else is parsed whole), much cheaper than Date.parse. The day's midnight comes from
 * Date.parse itself, so a day Date rolls over (30 February) rolls over here alike.
 */
export function parseInstantText(text: string): number {
  if (
    text.length === 24 &&
    parsedDayPrefix.length === 11 &&
    text.startsWith(parsedDayPrefix) &&
    text.charCodeAt(13) === COLON &&
    text.charCodeAt(16) === COLON &&
    text.charCodeAt(19) === DOT &&
    text.charCodeAt(23) === LETTER_Z
  ) {
    const hours = twoDigits(text, 11);
    const minutes = twoDigits(text, 14);
    const seconds = twoDigits(text, 17);
    const tenths = text.charCodeAt(20) - 0x30;
    const hundredths = twoDigits(text, 21);
    if (hours < 24 && minutes < 60 && seconds < 60 && tenths >= 0 && tenths <= 9 && hundredths >= 0) {
      return parsedDayMs + ((hours * 60 + minutes) * 60 + seconds) * 1_000 + tenths * 100 + hundredths;
    }
  }
  const parsed = Date.parse(text);
  if (CANONICAL_INSTANT.test(text)) {
    parsedDayPrefix = text.slice(0, 11);
    parsedDayMs = Date.parse(`${parsedDayPrefix}00:00:00.000Z`);
  }
  return parsed;
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
