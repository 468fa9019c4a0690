import { ValidationFailed } from '../common/errors.js';
import { isPlainObject } from '../common/validation.js';

function object(body: unknown, fields: readonly string[]): Record<string, unknown> {
  const input = body === undefined || body === null ? {} : body;
  if (!isPlainObject(input)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object' }]);
  const unknown = Object.keys(input).filter((field) => !fields.includes(field));
  if (unknown.length > 0) throw new ValidationFailed(unknown.slice(0, 20).map((field) => ({ field: field.slice(0, 50), message: 'is not a field of this request' })));
  return input;
}

/** `{overlapSeconds?}` of a rotation; the decider checks its range. */
export function parseOverlap(body: unknown): number | undefined {
  const { overlapSeconds } = object(body, ['overlapSeconds']);
  if (overlapSeconds === undefined) return undefined;
  if (typeof overlapSeconds !== 'number' || !Number.isInteger(overlapSeconds))
    throw new ValidationFailed([{ field: 'overlapSeconds', message: 'must be a whole number of seconds' }]);
  return overlapSeconds;
}

/** `{from, to}` of a resend: two instants, from before to, at most 31 days apart. */
export function parseRange(body: unknown): { from: Date; to: Date } {
  const { from, to } = object(body, ['from', 'to']);
  const instant = (value: unknown, field: string) => {
    const parsed = typeof value === 'string' ? new Date(value) : new Date(NaN);
    if (Number.isNaN(parsed.getTime())) throw new ValidationFailed([{ field, message: 'must be an ISO 8601 instant' }]);
    return parsed;
  };
  const range = { from: instant(from, 'from'), to: instant(to, 'to') };
  if (range.to <= range.from) throw new ValidationFailed([{ field: 'to', message: 'must be after from' }]);
  if (range.to.getTime() - range.from.getTime() > 31 * 86_400_000) throw new ValidationFailed([{ field: 'to', message: 'must be at most 31 days after from' }]);
  return range;
}

/** `{thresholdKobo}`: a whole number of kobo, or null to turn the alert off. */
export function parseThreshold(body: unknown): number | null {
  const input = object(body, ['thresholdKobo']);
  if (!('thresholdKobo' in input)) throw new ValidationFailed([{ field: 'thresholdKobo', message: 'is required (kobo, or null)' }]);
  const { thresholdKobo } = input;
  if (thresholdKobo !== null && (typeof thresholdKobo !== 'number' || !Number.isSafeInteger(thresholdKobo) || thresholdKobo < 0)) {
    throw new ValidationFailed([{ field: 'thresholdKobo', message: 'must be a whole number of kobo, or null' }]);
  }
  return thresholdKobo;
}
