import type { FieldError } from '../common/errors.js';
import type { Scope } from '../scopes/scopes.js';
import type { UpstreamName } from './capabilities.js';
export { localPhone, rawBase64 } from '../scopes/input-formats.js';
import type { ProviderOutcome } from './provider.port.js';

/** Upstream answers above this size are refused unread (a portrait is at most 2 MiB, as base64 under 3). */
export const MAX_UPSTREAM_BODY_BYTES = 4 * 1024 * 1024;

/**
 * A check an upstream could not complete. `answered`: the upstream sent a response (so the
 * request reached it and may have been processed and billed there). `health`: a sign the
 * upstream itself is unwell (timeouts, resets, 5xx, garbage, "service unavailable"), counted by
 * the circuit breaker; an organization's own problem (bad credentials, its upstream wallet empty,
 * an input the upstream refuses) is not.
 */
export class UpstreamFailure extends Error {
  constructor(
    readonly reasonCode: string,
    readonly answered: boolean,
    readonly health: boolean,
  ) {
    super(`upstream failure: ${reasonCode}`);
    this.name = 'UpstreamFailure';
  }
}

/** Retrying is safe only when nothing was answered: the request never reached the upstream's application. */
export function isRetrySafe(error: unknown): boolean {
  return error instanceof UpstreamFailure && !error.answered && error.reasonCode === 'provider_unreachable';
}

/** What a found or not-found answer becomes; failures are thrown as UpstreamFailure so the policies see them. */
export type UpstreamAnswer = Exclude<ProviderOutcome, { outcome: 'failed' }>;

/** One HTTP upstream behind the resilience policies. */
export interface UpstreamAdapter {
  readonly name: UpstreamName;
  /** Field errors for inputs this upstream cannot take (422 before anything is written). */
  inputProblems(scope: Scope, input: Readonly<Record<string, string>>): FieldError[];
  call(scope: Scope, input: Readonly<Record<string, string>>, signal: AbortSignal): Promise<UpstreamAnswer>;
}

export interface HttpAnswer {
  readonly status: number;
  /** The parsed JSON body; `undefined` when the body was not JSON. */
  readonly json: unknown;
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

async function readBounded(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_UPSTREAM_BODY_BYTES) throw new UpstreamFailure('provider_malformed_response', true, true);
  if (response.body === null) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_UPSTREAM_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new UpstreamFailure('provider_malformed_response', true, true);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One request through Node's fetch (undici). Transport errors become UpstreamFailure: no answer
 * (refused, reset before the response, DNS) is `provider_unreachable`; an answer cut off or
 * aborted midway is not retry-safe. Never includes the URL or body in an error: both carry
 * identity numbers.
 */
export async function httpJson(url: URL, init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }, signal: AbortSignal): Promise<HttpAnswer> {
  let response: Response;
  try {
    response = await fetch(url, { method: init.method, headers: init.headers, body: init.body, signal, redirect: 'error' });
  } catch (error) {
    if (signal.aborted) throw new UpstreamFailure('provider_timeout', false, true);
    const code = causeCode(error);
    if (code !== undefined && UNREACHABLE_CODES.has(code)) throw new UpstreamFailure('provider_unreachable', false, true);
    throw new UpstreamFailure('provider_error', false, true);
  }
  let text: string;
  try {
    text = await readBounded(response);
  } catch (error) {
    if (error instanceof UpstreamFailure) throw error;
    if (signal.aborted) throw new UpstreamFailure('provider_timeout', true, true);
    throw new UpstreamFailure('provider_unavailable', true, true);
  }
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json };
}

/** The inputs a provider needs that the scope left optional and the caller left out (`needs`: field and what it is). */
export function missingInputs(needs: Readonly<Record<string, string>> | undefined, input: Readonly<Record<string, string>>): FieldError[] {
  return Object.entries(needs ?? {})
    .filter(([field]) => input[field] === undefined)
    .map(([field, what]) => ({ field, message: `is required by this organization's provider (${what})` }));
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The failure every upstream means by a 4xx/5xx status, when its body says nothing more specific. */
export function failureForStatus(status: number): UpstreamFailure {
  if (status === 401 || status === 403) return new UpstreamFailure('provider_unauthorized', true, false);
  if (status === 402) return new UpstreamFailure('provider_wallet_empty', true, false);
  if (status === 429) return new UpstreamFailure('provider_rate_limited', true, false);
  if (status >= 500) return new UpstreamFailure('provider_unavailable', true, true);
  if (status >= 400) return new UpstreamFailure('provider_rejected_input', true, false);
  return new UpstreamFailure('provider_malformed_response', true, true);
}

export function endpoint(baseUrl: string, path: string, query: Record<string, string> = {}): URL {
  const url = new URL(path.replace(/^\//, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}
