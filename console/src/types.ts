import type { Environment } from './session';

export interface ApiKey {
  id: string;
  name: string | null;
  prefix: string;
  last4: string;
  environment: Environment;
  scopes: string[] | null;
  createdAt: string;
  lastUsedAt?: string | null;
  revokedAt?: string | null;
}

export interface IssuedApiKey extends ApiKey {
  key: string;
}

export type VerificationStatus = 'pending' | 'found' | 'not_found' | 'failed';

export interface VerificationSummary {
  reference: string;
  scope: string;
  status: VerificationStatus;
  priceKobo: number;
  charged: boolean;
  createdAt: string;
}

export interface Verification extends VerificationSummary {
  category: string;
  countryCode: string;
  request: Record<string, unknown>;
  result: Record<string, unknown>;
  errorMessage: string | null;
  failureReason?: string | null;
  personalDataErasedAt?: string | null;
}

export interface WalletFigures {
  balanceKobo: number;
  reservedKobo: number;
  availableKobo: number;
}

export interface Wallet extends WalletFigures {
  environment: Environment;
}

/** One movement of a wallet's money and the figures it left: a transaction, or an entry the audit replays. */
export interface MoneyEntry extends WalletFigures {
  reference: string;
  amountKobo: number;
}

export interface WalletTransaction extends MoneyEntry {
  type: string;
  scope: string | null;
  createdAt: string;
}

export interface ScopeField {
  name: string;
  required: boolean;
  description: string;
  example: string;
  /** Set when the input is a file's content (base64): the media types it takes. */
  mediaTypes?: string[];
}

export interface ScopeInfo {
  scope: string;
  active: boolean;
  priceKobo: number;
  /** A request the sandbox answers `found` (the API document's example). */
  example: Record<string, string>;
  fields: ScopeField[];
}

export interface Overview {
  environment: Environment;
  wallet: Wallet;
  days: { date: string; scope: string; status: string; count: number }[];
  recent: VerificationSummary[];
}
