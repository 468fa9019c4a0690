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

function concat(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const whole = new Uint8Array(chunks.reduce((length, chunk) => length + chunk.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

/**
 * One attempt: its deadline and the caller's abort as a promise that rejects when either comes,
 * and the attempt's own abort controller. The attempt races that promise rather than trusting
 * fetch to notice its signal: once the answer's headers are in, undici links its request's signal
 * to the one given only through a weak reference, so a garbage collection while the body arrives
 * can lose the abort and leave the read waiting for ever (seen under load). Ending the attempt
 * also cancels the body, which closes the connection.
 */
class Attempt {
  timedOut = false;
  private ended = false;
  private body: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private reject!: (reason: unknown) => void;
  readonly stopped = new Promise<never>((_resolve, reject) => (this.reject = reject));
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onCallerAbort = () => this.end(this.caller.reason);

  constructor(
    private readonly caller: AbortSignal,
    timeoutMs: number | undefined,
  ) {
    this.stopped.catch(() => undefined);
    if (caller.aborted) this.end(caller.reason);
    else caller.addEventListener('abort', this.onCallerAbort, { once: true });
    if (timeoutMs !== undefined)
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.end(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
      }, timeoutMs);
  }

  private end(reason: unknown): void {
    if (this.ended) return;
    this.ended = true;
    // Rejected first: cancelling the body settles a pending read as done, which must not win the race.
    this.reject(reason);
    this.controller.abort(reason);
    void this.body?.cancel(reason).catch(() => undefined);
  }

  /** Sends the request and reads the whole answer, body included, unless the attempt ends first. */
  async run(send: FetchLike, request: Request, init: RequestInit | undefined): Promise<Response> {
    const sent = send(new Request(request, { signal: this.controller.signal }), init);
    // An answer that comes after the attempt ended is dropped, its connection closed.
    sent.then((late) => (this.ended ? late.body?.cancel().catch(() => undefined) : undefined)).catch(() => undefined);
    const answer = await Promise.race([sent, this.stopped]);
    const chunks: Uint8Array[] = [];
    if (answer.body !== null) {
      this.body = answer.body.getReader();
      if (this.ended) void this.body.cancel().catch(() => undefined);
      for (;;) {
        const { done, value } = await Promise.race([this.body.read(), this.stopped]);
        if (done) break;
        chunks.push(value);
      }
    }
    const body = chunks.length === 0 ? null : concat(chunks);
    return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
  }

  close(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener('abort', this.onCallerAbort);
    this.ended = true;
  }
}

/** `fetch` with a timeout per attempt and the retry policy above; the caller's own abort signal is obeyed at once. */
export function resilientFetch(send: FetchLike, options: { timeoutMs?: number; retry: RetryPolicy | false; random?: () => number }): FetchLike {
  const { timeoutMs, retry, random } = options;
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new RangeError('timeoutMs must be a positive number of milliseconds');
  return async (request, init) => {
    const attempts = isRead(request.method) && retry !== false ? 1 + Math.max(0, Math.floor(retry.retries)) : 1;
    for (let attempt = 1; ; attempt++) {
      const last = attempt === attempts;
      const current = new Attempt(request.signal, timeoutMs);
      let response: Response;
      try {
        // The body is read here, inside the attempt: a timeout or a cut connection while it arrives
        // is then this attempt's failure (typed, and retried for a read), not an error of the caller's parsing.
        response = await current.run(send, last ? request : request.clone(), init);
      } catch (error) {
        // The caller's own abort is theirs to handle: no retry, no wrapping.
        if (request.signal.aborted) throw error;
        const timedOut = current.timedOut;
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
      } finally {
        current.close();
      }
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const policy = retry as RetryPolicy;
      const askedMs = retryAfterMs(response.headers.get('retry-after'));
      if (askedMs !== undefined && askedMs > policy.maxRetryAfterMs) return response;
      await sleep(askedMs ?? backoffDelayMs(attempt - 1, policy, random), request.signal);
    }
  };
}
