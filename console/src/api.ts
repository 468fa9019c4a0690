// The console's one door to its server: every call goes to /console/api with the session cookie
// (same origin) and, when it changes something, the session's CSRF token in X-CSRF-Token.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | undefined,
    readonly details: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let csrfToken: string | undefined;

/** Set from the session answer (GET /console/api/session); sent on every state-changing request. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Asked for a fresh CSRF token after a 403 csrf_failed (session.tsx installs it). */
let renewCsrfToken: (() => Promise<void>) | undefined;
export function onCsrfRenewal(renew: () => Promise<void>): void {
  renewCsrfToken = renew;
}

/** Called when the server answers 401 to a signed-in request: the session expired or was revoked. */
let sessionLost: (() => void) | undefined;
export function onSessionLost(handler: () => void): void {
  sessionLost = handler;
}

async function send(method: Method, path: string, body: unknown, signal: AbortSignal | undefined): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== undefined) headers['x-csrf-token'] = csrfToken;
  return fetch(`/console/api${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal,
  });
}

async function parse(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function failure(status: number, parsed: unknown): ApiError {
  // The API's envelope: { status: false, error: { code, message, details } }.
  const error = ((parsed ?? {}) as { error?: { code?: unknown; message?: unknown; details?: unknown } }).error ?? {};
  const message = typeof error.message === 'string' ? error.message : `The server answered ${status}`;
  return new ApiError(status, message, typeof error.code === 'string' ? error.code : undefined, error.details);
}

export async function api<T>(method: Method, path: string, body?: unknown, init: { signal?: AbortSignal } = {}): Promise<T> {
  let response = await send(method, path, body, init.signal);
  let parsed = await parse(response);
  if (response.status === 403 && method !== 'GET' && renewCsrfToken !== undefined && failure(403, parsed).code === 'csrf_failed') {
    await renewCsrfToken();
    response = await send(method, path, body, init.signal);
    parsed = await parse(response);
  }
  if (!response.ok) {
    const error = failure(response.status, parsed);
    if (response.status === 401 && error.code === 'unauthenticated' && path !== '/session') sessionLost?.();
    throw error;
  }
  const envelope = parsed as { data?: unknown } | undefined;
  return (envelope !== undefined && envelope !== null && typeof envelope === 'object' && 'data' in envelope ? envelope.data : parsed) as T;
}

/** An answer with its meta: the list answers (rows and paging) and the audit's replay (entries and figures). */
export async function withMeta<T, M>(path: string, signal?: AbortSignal): Promise<{ data: T; meta: M | undefined }> {
  const response = await send('GET', path, undefined, signal);
  const parsed = (await parse(response)) as { data?: T; meta?: M } | undefined;
  if (!response.ok) {
    const error = failure(response.status, parsed);
    if (response.status === 401 && error.code === 'unauthenticated') sessionLost?.();
    throw error;
  }
  return { data: parsed?.data as T, meta: parsed?.meta };
}

export async function page<T>(path: string, signal?: AbortSignal): Promise<{ rows: T[]; meta: Paging }> {
  const { data, meta } = await withMeta<T[], Paging>(path, signal);
  return { rows: data ?? [], meta: meta ?? { total: 0, page: 1, pageSize: 0, totalPages: 0 } };
}

export interface Paging {
  total: number;
  page: number;
  pageSize: number;
  totalPages: number;
}

export const get = <T>(path: string, signal?: AbortSignal) => api<T>('GET', path, undefined, { signal });
export const post = <T>(path: string, body: unknown = {}) => api<T>('POST', path, body);
export const put = <T>(path: string, body: unknown = {}) => api<T>('PUT', path, body);
export const del = <T>(path: string) => api<T>('DELETE', path);

/** A query string from the defined values only. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    const fields = (error.details as { fields?: { field: string; message: string }[] } | undefined)?.fields;
    return fields && fields.length > 0 ? `${error.message} ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}` : error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

export const naira = (kobo: number | undefined | null) =>
  kobo === undefined || kobo === null ? '—' : `₦${(kobo / 100).toLocaleString('en-NG', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
