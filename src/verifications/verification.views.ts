import { InvariantViolated } from '../common/errors.js';
import { isoWithOffset } from '../common/time.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import type { VerificationState, VerificationStatus } from './verification.decider.js';
import { failureReasonOf, type FailureReason } from './failure-reason.js';

/**
 * The spec's full verification. `status` is `pending` only while a check is in flight (a read
 * racing its own run); every finished check is found, not_found or failed.
 */
export interface VerificationView {
  readonly reference: string;
  readonly scope: string;
  readonly category: string;
  readonly countryCode: string;
  readonly status: VerificationStatus;
  readonly request: JsonObject;
  readonly result: JsonObject;
  readonly errorMessage: string | null;
  /** Why a failed check failed (failure-reason.ts); null unless `status` is failed. */
  readonly failureReason: FailureReason | null;
  readonly priceKobo: number;
  readonly charged: boolean;
  readonly createdAt: string;
  /** When the personal data (request, result) was erased; null while it is readable. */
  readonly personalDataErasedAt: string | null;
}

/** A failed check's public reason; a failure recorded without a reason code reads as the provider's. */
export function failureReasonFor(status: VerificationStatus, reasonCode: string | null | undefined): FailureReason | null {
  return status === 'failed' ? (failureReasonOf(reasonCode) ?? 'provider_error') : null;
}

export interface VerificationSummary {
  readonly reference: string;
  readonly scope: string;
  readonly status: VerificationStatus;
  readonly priceKobo: number;
  readonly charged: boolean;
  readonly createdAt: string;
}

export function verificationView(state: VerificationState): VerificationView {
  if (state.status === 'none') throw new InvariantViolated('a view of a verification that was never requested');
  const requested = state.requested;
  const erased = state.personalDataErasedAt !== null;
  return {
    reference: requested.reference,
    scope: requested.scope,
    category: requested.category,
    countryCode: requested.countryCode,
    status: state.status,
    request: erased ? {} : requested.request,
    result: erased ? {} : state.result,
    errorMessage: state.errorMessage,
    failureReason: failureReasonFor(state.status, state.reasonCode),
    priceKobo: requested.priceKobo,
    charged: state.status === 'found' || state.status === 'not_found',
    createdAt: isoWithOffset(new Date(requested.requestedAt)),
    personalDataErasedAt: erased ? isoWithOffset(new Date(state.personalDataErasedAt)) : null,
  };
}

/** A row of the `verifications` read model. */
export interface VerificationRow {
  reference: string;
  organization_id: string;
  environment: string;
  key_id: string;
  scope: string;
  category: string;
  country_code: string;
  status: VerificationStatus;
  request: JsonObject;
  result: JsonObject;
  error_message: string | null;
  /** A failed check's reason code; null on rows projected before the column existed (their stream has it). */
  reason_code?: string | null;
  price_kobo: string | number;
  charged: boolean;
  created_at: Date;
  /** Set by the projection from VerificationPersonalDataErased (request and result are then `{}`). */
  personal_data_erased_at?: Date | null;
}

/**
 * A row as served: `opened` is its request and result opened (the row itself holds them sealed),
 * and the reason code when the row has none (read from the stream).
 */
export function viewFromRow(
  row: VerificationRow,
  opened: { request: JsonObject; result: JsonObject; personalDataErasedAt: string | null; reasonCode?: string | null },
): VerificationView {
  return {
    reference: row.reference,
    scope: row.scope,
    category: row.category,
    countryCode: row.country_code,
    status: row.status,
    request: opened.request,
    result: opened.result,
    errorMessage: row.error_message,
    failureReason: failureReasonFor(row.status, row.reason_code ?? opened.reasonCode),
    priceKobo: Number(row.price_kobo),
    charged: row.charged,
    createdAt: isoWithOffset(row.created_at),
    personalDataErasedAt: opened.personalDataErasedAt,
  };
}

export function summaryFromRow(row: Pick<VerificationRow, 'reference' | 'scope' | 'status' | 'price_kobo' | 'charged' | 'created_at'>): VerificationSummary {
  return { reference: row.reference, scope: row.scope, status: row.status, priceKobo: Number(row.price_kobo), charged: row.charged, createdAt: isoWithOffset(row.created_at) };
}
