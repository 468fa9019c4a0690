/**
 * Every date and time the console shows goes through here, in one format: "6 Dec 2026", with the
 * time as "6 Dec 2026, 14:05" (the browser's time zone). Days the server counts in UTC (the
 * overview's checks per day) are shown as the UTC day they are.
 */
const DATE_TIME = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
const UTC_DAY = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });
const TIME = new Intl.DateTimeFormat('en-GB', { timeStyle: 'short' });

/** A moment: "6 Dec 2026, 14:05"; "—" when there is none. */
export const when = (iso: string | undefined | null): string => (iso ? DATE_TIME.format(new Date(iso)) : '—');

/** A UTC day, from seconds since the epoch (a chart's axis): "6 Dec 2026". */
export const utcDay = (seconds: number): string => UTC_DAY.format(new Date(seconds * 1_000));

/** The time of day of a moment in seconds since the epoch (a chart over the last hour): "14:05". */
export const timeOfDay = (seconds: number): string => TIME.format(new Date(seconds * 1_000));
