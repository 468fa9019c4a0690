/**
 * How every request of the client travels: a timeout per attempt, and retries for reads only.
 *
 * A read (GET, HEAD) is retried on 429 (after its Retry-After), 503 and network errors or
 * timeouts, with exponential backoff and jitter, because repeating it changes nothing. Nothing
 * else is ever retried: a check (POST /v1/{scope}) that reached the service may have run and been
 * charged even when its answer was lost, so only the caller can decide to run it again.
 */

export interface RetryPolicy {
  /** Attempts after the first, for a read. 0 turns retrying off. */
  readonly retries: number;
  /** The first retry waits between half and all of this; each further one twice as long. */
  readonly baseDelayMs: number;
  /** The longest backoff between two attempts. */
  readonly maxDelayMs: number;
  /** A 429 whose Retry-After asks for longer than this is thrown rather than waited for. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 3, baseDelayMs: 250, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

/** `fetch` as openapi-fetch calls it: a Request, and its `requestInitExt` (an undici dispatcher, say) passed through. */
export type FetchLike = (request: Request, init?: RequestInit) => Promise<Response>;

/** A request that got no answer: the connection failed, or the answer took longer than `timeoutMs`. */
export class NetworkError extends Error {
  constructor(
    readonly code: 'timeout' | 'network_error',
    message: string,
    /** How many times the request was sent before giving up (1 for anything but a read). */
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'NetworkError';
  }
}

/**
 * The wait before retry number `attempt + 1`: exponential, capped, with "equal jitter" (between
 * half and all of the step), so that clients refused together do not come back together, while
 * the spacing still grows with each attempt.
 */
export function backoffDelayMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const stepMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(stepMs / 2 + (random() * stepMs) / 2);
}

/** Retry-After as seconds or as an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const RETRIED_STATUSES = new Set([429, 503]);
const isRead = (method: string) => method === 'GET' || method === 'HEAD';

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `fetch` with a timeout per attempt and the retry policy above; the caller's own abort signal is obeyed at once. */
export function resilientFetch(send: FetchLike, options: { timeoutMs?: number; retry: RetryPolicy | false; random?: () => number }): FetchLike {
  const { timeoutMs, retry, random } = options;
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new RangeError('timeoutMs must be a positive number of milliseconds');
  return async (request, init) => {
    const attempts = isRead(request.method) && retry !== false ? 1 + Math.max(0, Math.floor(retry.retries)) : 1;
    for (let attempt = 1; ; attempt++) {
      const last = attempt === attempts;
      const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
      const signal = timeout === undefined ? request.signal : AbortSignal.any([request.signal, timeout]);
      let response: Response;
      try {
        const answer = await send(new Request(last ? request : request.clone(), { signal }), init);
        // The body is read here, inside the attempt: a timeout or a cut connection while it arrives
        // is then this attempt's failure (typed, and retried for a read), not an error of the caller's parsing.
        const body = await answer.arrayBuffer();
        response = new Response(body.byteLength === 0 ? null : body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
      } catch (error) {
        // The caller's own abort is theirs to handle: no retry, no wrapping.
        if (request.signal.aborted) throw error;
        const timedOut = timeout?.aborted === true;
        // fetch reports a failed or cut connection as a TypeError; anything else (a fetch of the
        // caller's own that throws, say) is not the network's, and is passed on as it is. By name:
        // fetch's errors may come from another realm (a test runner's), where instanceof fails.
        if (!timedOut && (error as Error | null)?.name !== 'TypeError') throw error;
        if (last) {
          const what = timedOut ? `no answer within ${timeoutMs} ms` : 'the connection failed';
          throw new NetworkError(timedOut ? 'timeout' : 'network_error', `${request.method} ${new URL(request.url).pathname}: ${what}`, attempt, { cause: error });
        }
        await sleep(backoffDelayMs(attempt - 1, retry as RetryPolicy, random), request.signal);
        continue;
      }
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const policy = retry as RetryPolicy;
      const askedMs = retryAfterMs(response.headers.get('retry-after'));
      if (askedMs !== undefined && askedMs > policy.maxRetryAfterMs) return response;
      await sleep(askedMs ?? backoffDelayMs(attempt - 1, policy, random), request.signal);
    }
  };
}
