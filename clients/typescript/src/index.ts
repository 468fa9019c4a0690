import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

/**
 * A typed client of the identity verification service. `raw` is the generated client
 * (openapi-fetch over the types openapi-typescript made from the OpenAPI document): every
 * operation, typed by path. Around it, a thin layer: answers unwrapped from the envelope, errors
 * thrown as typed `ApiError`s (the 402's details included), and lists walked page by page.
 */

export type { components, operations, paths } from './schema.js';
export type Schemas = components['schemas'];
export type Verification = Schemas['Verification'];
export type VerificationSummary = Schemas['VerificationSummary'];
export type Wallet = Schemas['Wallet'];
export type WalletTransaction = Schemas['WalletTransaction'];
export type PagingMeta = Schemas['PagingMeta'];
export type Scope = VerificationSummary['scope'];

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
    const { data, error, response } = await fetchPage(page);
    if (!response.ok || data === undefined) throw toApiError(response.status, error, response.headers.get('x-request-id'));
    yield* data.data;
    const meta = data.meta as PagingMeta;
    if (meta.page >= meta.totalPages || data.data.length < Math.min(pageSize, 100)) return;
  }
}

export interface LedgerClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the service answers, e.g. `https://verify.example.ng`. */
  readonly baseUrl: string;
  /** An integrator's key (`service_test_…` or `service_live_…`), sent as X-Service-Key. */
  readonly apiKey?: string;
  /** An operator's (or auditor's) token, sent as `Authorization: Bearer`. */
  readonly adminToken?: string;
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
  /** Every verification summary matching the filters, most recent first, across all pages. */
  verifications(filters?: VerificationFilters, pageSize?: number): AsyncGenerator<VerificationSummary>;
  wallet(): Promise<Wallet>;
  /** Every transaction of the wallet, most recent first, across all pages. */
  walletTransactions(pageSize?: number): AsyncGenerator<WalletTransaction>;
}

export function createLedgerClient(options: LedgerClientOptions): LedgerClient {
  const { apiKey, adminToken, headers, ...rest } = options;
  const raw = createClient<paths>({
    ...rest,
    headers: {
      ...(apiKey === undefined ? {} : { 'X-Service-Key': apiKey }),
      ...(adminToken === undefined ? {} : { Authorization: `Bearer ${adminToken}` }),
      ...(headers as Record<string, string> | undefined),
    },
  });
  return {
    raw,
    verify: <S extends Scope>(scope: S, input: CheckInput<S>) =>
      // One operation per scope in the document; the path is picked at run time, the types by S.
      unwrap(raw.POST(`/v1/${scope}` as '/v1/nin', { body: input as CheckInput<'nin'> }) as Promise<Answer<CheckVerification<S>>>),
    getVerification: (reference) => unwrap(raw.GET('/v1/verifications/{reference}', { params: { path: { reference } } })),
    verifications: (filters = {}, pageSize = 100) => allPages((page) => raw.GET('/v1/verifications', { params: { query: { ...filters, page, pageSize } } }), pageSize),
    wallet: () => unwrap(raw.GET('/v1/wallet')),
    walletTransactions: (pageSize = 100) => allPages((page) => raw.GET('/v1/wallet/transactions', { params: { query: { page, pageSize } } }), pageSize),
  };
}
