import { InvariantViolated } from '../common/errors.js';
import { isoWithOffset } from '../common/time.js';
import type { JsonObject } from '../event-store/event-store.port.js';
import type { VerificationState, VerificationStatus } from './verification.decider.js';

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
  readonly priceKobo: number;
  readonly charged: boolean;
  readonly createdAt: string;
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
  return {
    reference: requested.reference,
    scope: requested.scope,
    category: requested.category,
    countryCode: requested.countryCode,
    status: state.status,
    request: requested.request,
    result: state.result,
    errorMessage: state.errorMessage,
    priceKobo: requested.priceKobo,
    charged: state.status === 'found' || state.status === 'not_found',
    createdAt: isoWithOffset(new Date(requested.requestedAt)),
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
  price_kobo: string | number;
  charged: boolean;
  created_at: Date;
}

export function viewFromRow(row: VerificationRow): VerificationView {
  return {
    reference: row.reference,
    scope: row.scope,
    category: row.category,
    countryCode: row.country_code,
    status: row.status,
    request: row.request,
    result: row.result,
    errorMessage: row.error_message,
    priceKobo: Number(row.price_kobo),
    charged: row.charged,
    createdAt: isoWithOffset(row.created_at),
  };
}

export function summaryFromRow(row: Pick<VerificationRow, 'reference' | 'scope' | 'status' | 'price_kobo' | 'charged' | 'created_at'>): VerificationSummary {
  return { reference: row.reference, scope: row.scope, status: row.status, priceKobo: Number(row.price_kobo), charged: row.charged, createdAt: isoWithOffset(row.created_at) };
}
