import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';
import { DEFAULT_RETRY_POLICY, resilientFetch, type FetchLike, type RetryPolicy } from './transport.js';
import { webhookEndpoints, type JsonRequest, type WebhookEndpoints } from './webhook-endpoints.js';

/**
 * A typed client of the identity verification service. `raw` is the generated client
 * (openapi-fetch over the types openapi-typescript made from the OpenAPI document): every
 * operation, typed by path. Around it, a thin layer: answers unwrapped from the envelope, errors
 * thrown as typed `ApiError`s (the 402's details included), lists walked page by page, a timeout,
 * retries for reads (transport.ts), webhook endpoints, verification flows and sessions, and the
 * verification of webhook deliveries.
 */

export type { components, operations, paths } from './schema.js';
export { backoffDelayMs, DEFAULT_RETRY_POLICY, NetworkError, retryAfterMs, type RetryPolicy } from './transport.js';
export * from './webhooks.js';
export type * from './webhook-endpoints.js';
export type Schemas = components['schemas'];
export type Verification = Schemas['Verification'];
export type VerificationSummary = Schemas['VerificationSummary'];
export type Wallet = Schemas['Wallet'];
export type WalletTransaction = Schemas['WalletTransaction'];
export type PagingMeta = Schemas['PagingMeta'];
export type Scope = VerificationSummary['scope'];
export type VerificationFlow = Schemas['VerificationFlow'];
export type VerificationFlowInput = Schemas['VerificationFlowInput'];
export type VerificationSession = Schemas['VerificationSession'];
export type CreatedVerificationSession = Schemas['CreatedVerificationSession'];
export type VerificationSessionInput = Schemas['VerificationSessionInput'];
export type VerificationSessionStatus = VerificationSession['status'];

/** The key's verification flows: a flow's versions are whole definitions; sessions keep the version they started with. */
export interface VerificationFlows {
  create(input: VerificationFlowInput): Promise<VerificationFlow>;
  /** The next version of the flow (the whole definition again). */
  publish(id: string, input: VerificationFlowInput): Promise<VerificationFlow>;
  get(id: string): Promise<VerificationFlow>;
  list(page?: number, pageSize?: number): Promise<VerificationFlow[]>;
}

/** The key's verification sessions: one person's pass through a flow on the hosted page. */
export interface VerificationSessions {
  /** A session; send the person to `hostedUrl` (its `clientSecret` is shown this once). */
  create(input: VerificationSessionInput): Promise<CreatedVerificationSession>;
  get(id: string): Promise<VerificationSession>;
  list(filters?: { status?: VerificationSessionStatus; flowId?: string; page?: number; pageSize?: number }): Promise<VerificationSession[]>;
  cancel(id: string): Promise<VerificationSession>;
  /** Erases what the person gave (selfies, numbers, the customer id) and the session's verifications. */
  erase(id: string): Promise<VerificationSession>;
}

type CheckOperation<S extends Scope> = paths[`/v1/${S}`]['post'];
/** The body of a check of scope S. */
export type CheckInput<S extends Scope> = CheckOperation<S>['requestBody']['content']['application/json'];
/** The verification a check of scope S answers, its result typed for S. */
export type CheckVerification<S extends Scope> = CheckOperation<S>['responses'][201]['content']['application/json']['data'];

/** Every error envelope the document names, by its `error.code`. */
type ErrorEnvelope = Schemas[Exclude<Extract<keyof Schemas, `${string}Error`>, 'FieldError'>];
export type ErrorCode = ErrorEnvelope['error']['code'];
type DetailsOf<C extends ErrorCode> = Extract<ErrorEnvelope, { error: { code: C } }>['error']['details'];

/** An error answer: its HTTP status, the stable `code` and its `details`. */
export class ApiError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(
    readonly status: number,
    readonly code: C,
    message: string,
    readonly details: DetailsOf<C>,
    /** The answer's X-Request-Id: quote it when asking about a request. */
    readonly requestId: string | null,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Narrows to one code, so that `details` takes that code's type. */
  is<K extends ErrorCode>(code: K): this is ApiError<K> {
    return (this.code as ErrorCode) === code;
  }
}

/** 402: the wallet's available balance is below the price; no check ran, nothing was charged. */
export class InsufficientBalanceError extends ApiError<'insufficient_balance'> {
  get reference(): string {
    return this.details.reference;
  }
  get priceKobo(): number {
    return this.details.priceKobo;
  }
  get balanceKobo(): number {
    return this.details.balanceKobo;
  }
  /** How much to fund before the check can run, in kobo. */
  get shortfallKobo(): number {
    return Math.max(0, this.details.priceKobo - this.details.balanceKobo);
  }
}

/** The answer of an error in the envelope (or, for an answer that is not, an `internal_error` of its status). */
export function toApiError(status: number, body: unknown, requestId: string | null): ApiError {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)?.error;
  const code = (typeof error?.code === 'string' ? error.code : 'internal_error') as ErrorCode;
  const message = typeof error?.message === 'string' ? error.message : `HTTP ${status}`;
  const details = (typeof error?.details === 'object' && error.details !== null ? error.details : {}) as never;
  if (code === 'insufficient_balance') return new InsufficientBalanceError(status, code, message, details, requestId);
  return new ApiError<ErrorCode>(status, code, message, details, requestId);
}

type Answer<T> = { data?: { data: T; meta?: unknown }; error?: unknown; response: Response };

/** `data` of a success envelope; an error answer thrown as an ApiError. */
export async function unwrap<T>(pending: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok || data === undefined) throw toApiError(response.status, error, response.headers.get('x-request-id'));
  return data.data;
}

/** Every item of a paged list, requesting page after page (the same filters throughout) until the last. */
export async function* allPages<T>(fetchPage: (page: number) => Promise<Answer<T[]>>, pageSize = 100): AsyncGenerator<T> {
  for (let page = 1; ; page++) {
    const { items, last } = await readPage(fetchPage, page, pageSize);
    yield* items;
    if (last) return;
  }
}

/** The highest `page` the service accepts on /v1/verifications: a bound on any walk. */
const MAX_PAGE = 100_000;

async function readPage<T>(fetchPage: (page: number) => Promise<Answer<T[]>>, page: number, pageSize: number): Promise<{ items: T[]; last: boolean }> {
  const { data, error, response } = await fetchPage(page);
  if (!response.ok || data === undefined) throw toApiError(response.status, error, response.headers.get('x-request-id'));
  const meta = data.meta as PagingMeta;
  return { items: data.data, last: meta.page >= meta.totalPages || data.data.length < Math.min(pageSize, 100) || page >= MAX_PAGE };
}

/**
 * Every item of a list ordered most recent first (by `createdAt`, then by reference), without
 * duplicates. The list is paged by offset, so a check that arrives during the walk goes to the
 * front and pushes the items already seen down into the next pages. Those, and the new arrivals,
 * are recognised by their place in the order: anything more recent than the last item walked has
 * been seen or arrived after the walk began, and is skipped. Items of the same millisecond as the
 * last are told apart by their reference, the only ones remembered.
 */
export async function* newestFirstPages<T extends { reference: string; createdAt: string }>(fetchPage: (page: number) => Promise<Answer<T[]>>, pageSize = 100): AsyncGenerator<T> {
  let lastAtMs = Infinity;
  let seenAtLast = new Set<string>();
  for (let page = 1; ; page++) {
    const { items, last } = await readPage(fetchPage, page, pageSize);
    for (const item of items) {
      const atMs = Date.parse(item.createdAt);
      if (Number.isNaN(atMs)) throw new Error(`A list item without a readable createdAt: ${item.reference}`);
      if (atMs > lastAtMs || (atMs === lastAtMs && seenAtLast.has(item.reference))) continue;
      if (atMs < lastAtMs) {
        lastAtMs = atMs;
        seenAtLast = new Set();
      }
      seenAtLast.add(item.reference);
      yield item;
    }
    if (last) return;
  }
}

/**
 * Every transaction of a wallet's ledger, most recent first, each once. The ledger is paged by
 * offset, newest first, and only ever grows at the front: a transaction that arrives during the
 * walk pushes those already walked down into the next pages. The walk counts the arrivals by the
 * ledger's total (each page answers it) and starts each page that many places further on, skipping
 * the arrivals (as the verifications' walk does) and what it has walked. A transaction is one
 * movement of one reference (`type` and `reference` name it once in a wallet), and those of the last
 * page walked are remembered too, in case one arrived between the count and the page's read.
 */
export async function* newestFirstLedger<T extends { type: string; reference: string }>(fetchPage: (page: number) => Promise<Answer<T[]>>, pageSize = 100): AsyncGenerator<T> {
  const name = (item: T) => `${item.type}\u0000${item.reference}`;
  let totalAtStart: number | undefined;
  let walked = 0;
  let recent = new Set<string>();
  for (let page = 1; page <= MAX_PAGE;) {
    const { data, error, response } = await fetchPage(page);
    if (!response.ok || data === undefined) throw toApiError(response.status, error, response.headers.get('x-request-id'));
    const meta = data.meta as PagingMeta;
    totalAtStart ??= meta.total;
    const arrived = Math.max(0, meta.total - totalAtStart);
    // The place, in the ledger as it is now, of the first transaction not walked yet.
    const next = walked + arrived;
    const first = (page - 1) * meta.pageSize;
    const seen = new Set<string>();
    for (const item of data.data.slice(Math.max(0, next - first))) {
      if (recent.has(name(item))) continue;
      seen.add(name(item));
      walked += 1;
      yield item;
    }
    recent = seen.size > 0 ? seen : recent;
    if (data.data.length < meta.pageSize || walked + arrived >= meta.total) return;
    page = Math.max(page + 1, Math.floor((walked + arrived) / meta.pageSize) + 1);
  }
}

export interface LedgerClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the service answers, e.g. `https://verify.example.ng`. */
  readonly baseUrl: string;
  /** An integrator's key (`service_test_…` or `service_live_…`), sent as X-Service-Key. */
  readonly apiKey?: string;
  /** An operator's (or auditor's) token, sent as `Authorization: Bearer`. */
  readonly adminToken?: string;
  /** How long one attempt of a request may take, its answer's body included; none by default. */
  readonly timeoutMs?: number;
  /**
   * Retries of reads (GET) on 429, 503, network errors and timeouts; `false` for none. Checks and
   * other writes are never retried: a repeated check would run, and be charged, again.
   */
  readonly retry?: Partial<RetryPolicy> | false;
}

export interface VerificationFilters {
  readonly scope?: Scope;
  readonly status?: 'found' | 'not_found' | 'failed';
}

export interface LedgerClient {
  /** The generated client: every operation of the document, typed by path and method. */
  readonly raw: Client<paths>;
  /** Runs one check (a new, billed check each call). */
  verify<S extends Scope>(scope: S, input: CheckInput<S>): Promise<CheckVerification<S>>;
  getVerification(reference: string): Promise<Verification>;
  /**
   * Every verification summary matching the filters, most recent first, across all pages, each
   * once: checks that arrive during the walk are not included and do not make it repeat any.
   */
  verifications(filters?: VerificationFilters, pageSize?: number): AsyncGenerator<VerificationSummary>;
  wallet(): Promise<Wallet>;
  /**
   * Every transaction of the wallet, most recent first, across all pages, each once: transactions
   * that arrive during the walk are not included and do not make it repeat any.
   */
  walletTransactions(pageSize?: number): AsyncGenerator<WalletTransaction>;
  /** The webhook endpoints of the key's organization and environment, and their deliveries. */
  readonly webhookEndpoints: WebhookEndpoints;
  readonly verificationFlows: VerificationFlows;
  readonly verificationSessions: VerificationSessions;
}

export function createLedgerClient(options: LedgerClientOptions): LedgerClient {
  const { apiKey, adminToken, headers, timeoutMs, retry, fetch: send = (request: Request, init?: RequestInit) => globalThis.fetch(request, init), ...rest } = options;
  const transport = resilientFetch(send as FetchLike, { timeoutMs, retry: retry === false ? false : { ...DEFAULT_RETRY_POLICY, ...retry } });
  const baseHeaders: Record<string, string> = {
    ...(apiKey === undefined ? {} : { 'X-Service-Key': apiKey }),
    ...(adminToken === undefined ? {} : { Authorization: `Bearer ${adminToken}` }),
    ...(headers as Record<string, string> | undefined),
  };
  const raw = createClient<paths>({ ...rest, fetch: transport, headers: baseHeaders });
  const baseUrl = rest.baseUrl.replace(/\/+$/, '');
  const request: JsonRequest = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await transport(
      new Request(`${baseUrl}${path}`, {
        method,
        headers: { ...baseHeaders, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    const text = await response.text();
    const parsed: unknown = text === '' ? undefined : JSON.parse(text);
    if (!response.ok) throw toApiError(response.status, parsed, response.headers.get('x-request-id'));
    return (parsed as { data?: T } | undefined)?.data as T;
  };
  return {
    raw,
    verify: <S extends Scope>(scope: S, input: CheckInput<S>) =>
      // One operation per scope in the document; the path is picked at run time, the types by S.
      unwrap(raw.POST(`/v1/${scope}` as '/v1/nin', { body: input as CheckInput<'nin'> }) as Promise<Answer<CheckVerification<S>>>),
    getVerification: (reference) => unwrap(raw.GET('/v1/verifications/{reference}', { params: { path: { reference } } })),
    verifications: (filters = {}, pageSize = 100) => newestFirstPages((page) => raw.GET('/v1/verifications', { params: { query: { ...filters, page, pageSize } } }), pageSize),
    wallet: () => unwrap(raw.GET('/v1/wallet')),
    walletTransactions: (pageSize = 100) => newestFirstLedger((page) => raw.GET('/v1/wallet/transactions', { params: { query: { page, pageSize } } }), pageSize),
    webhookEndpoints: webhookEndpoints(request),
    verificationFlows: {
      create: (input) => unwrap(raw.POST('/v1/verification_flows', { body: input })),
      publish: (id, input) => unwrap(raw.POST('/v1/verification_flows/{id}/versions', { params: { path: { id } }, body: input })),
      get: (id) => unwrap(raw.GET('/v1/verification_flows/{id}', { params: { path: { id } } })),
      list: (page = 1, pageSize = 20) => unwrap(raw.GET('/v1/verification_flows', { params: { query: { page, pageSize } } })),
    },
    verificationSessions: {
      create: (input) => unwrap(raw.POST('/v1/verification_sessions', { body: input })),
      get: (id) => unwrap(raw.GET('/v1/verification_sessions/{id}', { params: { path: { id } } })),
      list: (filters = {}) => unwrap(raw.GET('/v1/verification_sessions', { params: { query: filters } })),
      cancel: (id) => unwrap(raw.POST('/v1/verification_sessions/{id}/cancel', { params: { path: { id } } })),
      erase: (id) => unwrap(raw.POST('/v1/verification_sessions/{id}/erase', { params: { path: { id } } })),
    },
  };
}
