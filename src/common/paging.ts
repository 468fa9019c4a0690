import { ValidationFailed, type FieldError } from './errors.js';

const MAX_PAGE = 1_000_000;

/** `page` from 1, `pageSize` from 1 (above 100 is capped, as on /v1). */
export function paging(query: Record<string, unknown>): { page: number; pageSize: number } {
  const errors: FieldError[] = [];
  const read = (name: string, fallback: number): number => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    if (typeof raw !== 'string' || !/^\d{1,7}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_PAGE) {
      errors.push({ field: name, message: `${name} must be an integer from 1 to ${MAX_PAGE}` });
      return fallback;
    }
    return Number(raw);
  };
  const page = read('page', 1);
  const pageSize = Math.min(read('pageSize', 20), 100);
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { page, pageSize };
}
