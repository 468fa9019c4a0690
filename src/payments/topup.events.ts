import type { Event } from '../common/event.js';

/**
 * Events of `topUp-{reference}`: one wallet top-up paid from outside. Amounts are kobo integers;
 * no payer's detail (name, email, card, account) is ever in them.
 */
type TopUpIds = {
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: string;
};
/** `day`: the Lagos day whose allowance counted it (absent on top-ups recorded before allowances). */
export type TopUpInitiated = Event<'TopUpInitiated', TopUpIds & { rail: string; channel: string; amountKobo: number; day?: string }>;
/** The provider confirmed the payment (verified by its API): `amountKobo` is what it settled, `feesKobo` its fees as it reported them. */
export type TopUpPaid = Event<'TopUpPaid', TopUpIds & { amountKobo: number; feesKobo: number; currency: string; paidAt: string; providerTransactionId: string }>;
export type TopUpCredited = Event<'TopUpCredited', TopUpIds & { amountKobo: number; fundingReference: string }>;
/**
 * The provider says the payment did not happen (`failed`, `reversed`, or `abandoned` past the checkout's
 * lifetime); a later success pays it if its day's allowance can count it again, else flags it.
 */
export type TopUpFailed = Event<'TopUpFailed', TopUpIds & { status: string }>;
/** Nothing credited: amounts or currency disagree, or (`over_daily_limit`) a failed top-up paid after its day's limit was spent; an operator looks. */
export type TopUpFlagged = Event<'TopUpFlagged', TopUpIds & { reason: string; initiatedKobo: number; verifiedKobo: number; reportedKobo: number | null; currency: string }>;

/**
 * An operator resolved a top-up that needed one (flagged, or settled at the provider and not credited).
 * `credit`: the provider's verified settlement, which the wallet is then credited with under the
 * top-up's funding reference, as any payment; `dismiss`: nothing is credited, for `reason`.
 */
export type TopUpResolved = Event<
  'TopUpResolved',
  TopUpIds & ({ resolution: 'credit'; amountKobo: number; feesKobo: number; paidAt: string; providerTransactionId: string } | { resolution: 'dismiss'; reason: string })
>;

export type TopUpEvent = TopUpInitiated | TopUpPaid | TopUpCredited | TopUpFailed | TopUpFlagged | TopUpResolved;
export const TOPUP_EVENT_TYPES: readonly TopUpEvent['type'][] = ['TopUpInitiated', 'TopUpPaid', 'TopUpCredited', 'TopUpFailed', 'TopUpFlagged', 'TopUpResolved'];

export const TOPUP_CATEGORY = 'topUp';
export const topUpStream = (reference: string): string => `${TOPUP_CATEGORY}-${reference}`;
/** The wallet's funding reference of a top-up: the wallet credits each at most once. */
export const topUpFundingReference = (reference: string): string => `topup:${reference}`;

type AccountIds = { organizationId: string; environment: string; rail: string; customerCode: string };
/**
 * `paymentAccount-{organizationId}.{environment}`: the organization's dedicated bank account on the rail (a business account: no person's data).
 * Requested when the rail assigns it later (Paystack's `dedicatedaccount.assign.success` or `.failed` webhook says which).
 */
export type DedicatedAccountRequested = Event<'DedicatedAccountRequested', AccountIds>;
export type DedicatedAccountAssigned = Event<'DedicatedAccountAssigned', AccountIds & { accountNumber: string; accountName: string; bankName: string }>;
export type DedicatedAccountAssignmentFailed = Event<'DedicatedAccountAssignmentFailed', AccountIds>;
export type PaymentAccountEvent = DedicatedAccountRequested | DedicatedAccountAssigned | DedicatedAccountAssignmentFailed;
export const PAYMENT_ACCOUNT_CATEGORY = 'paymentAccount';
export const paymentAccountStream = (organizationId: string, environment: string): string => `${PAYMENT_ACCOUNT_CATEGORY}-${organizationId}.${environment}`;

type AllowanceIds = { readonly organizationId: string; readonly environment: string; readonly day: string; readonly reference: string; readonly amountKobo: number };
/** A top-up's amount counted against its wallet's day (Lagos), under the limit in force: `limitKobo` null for a transfer, counted whatever the limit (the money has arrived). */
export type TopUpAllowanceReserved = Event<'TopUpAllowanceReserved', AllowanceIds & { limitKobo: number | null }>;
/** A top-up that failed or was flagged gives its amount back to its day. */
export type TopUpAllowanceReleased = Event<'TopUpAllowanceReleased', AllowanceIds>;
export type TopUpAllowanceEvent = TopUpAllowanceReserved | TopUpAllowanceReleased;
/**
 * `topUpAllowance-{organizationId}.{environment}.{YYYY-MM-DD}`: one wallet's day of top-ups. The daily
 * limit is decided on this stream and appended with its expected revision, so top-ups started at the
 * same time cannot both take the day's last naira.
 */
export const TOPUP_ALLOWANCE_CATEGORY = 'topUpAllowance';
export const topUpAllowanceStream = (organizationId: string, environment: string, day: string): string => `${TOPUP_ALLOWANCE_CATEGORY}-${organizationId}.${environment}.${day}`;

/** An operator's limits for one organization (both environments); null: the deployment's setting. */
export type TopUpLimitsSet = Event<'TopUpLimitsSet', { organizationId: string; maxTopUpKobo: number | null; dailyLimitKobo: number | null }>;
export const TOPUP_LIMITS_CATEGORY = 'topUpLimits';
export const topUpLimitsStream = (organizationId: string): string => `${TOPUP_LIMITS_CATEGORY}-${organizationId}`;
