// The console's names for what its server answers: each an alias of the types generated from the
// server's own document (api-schema.ts, from openapi/console.json), never a type written here.
import type { components, operations } from './api-schema';

export type Schemas = components['schemas'];

type SuccessStatus = 200 | 201 | 202;
type JsonBody<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never;
type SuccessBody<Id extends keyof operations> = JsonBody<operations[Id]['responses'][Extract<keyof operations[Id]['responses'], SuccessStatus>]>;

/** The `data` of an operation's success answer, by its operationId in openapi/console.json. */
export type Data<Id extends keyof operations> = SuccessBody<Id> extends { data: infer D } ? D : never;
/** The `meta` of a list operation's success answer (paging, or the audit's summary). */
export type Meta<Id extends keyof operations> = SuccessBody<Id> extends { meta: infer M } ? M : never;

/** The JSON body an operation takes. */
export type Body<Id extends keyof operations> = JsonBody<NonNullable<operations[Id]['requestBody']>>;

export type Environment = Schemas['Environment'];
export type Role = Schemas['IntegratorRole'];
export type OperatorRole = Schemas['OperatorRole'];
export type Scope = Schemas['Scope'];
export type Session = Schemas['Session'];
export type User = NonNullable<Session['user']>;
export type Organization = Schemas['ConsoleOrganization'];
export type ApiKey = Schemas['ApiKey'];
export type IssuedApiKey = Schemas['IssuedApiKey'];
export type VerificationSummary = Schemas['VerificationSummary'];
export type VerificationStatus = VerificationSummary['status'];
export type Verification = Schemas['Verification'];
export type WalletFigures = Schemas['WalletFigures'];
export type Wallet = Schemas['Wallet'];
export type WalletTransaction = Schemas['WalletTransaction'];
export type ScopeField = Schemas['ScopeField'];
export type ScopeInfo = Schemas['ScopeInfo'];
export type Overview = Schemas['Overview'];
export type TopUp = Schemas['TopUp'];
/** One movement of a wallet's money and the figures it left: a transaction, or an entry the audit replays. */
export type MoneyEntry = WalletFigures & { reference: string; amountKobo: number };
