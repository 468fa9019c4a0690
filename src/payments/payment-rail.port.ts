import type { Rail, VerifiedTransaction } from './topup.decider.js';

/** Where the payer goes to pay: the provider's checkout page. */
export interface Checkout {
  readonly authorizationUrl: string;
}

/** A bank account the rail assigned to an organization: transfers to it arrive as `charge.success` with the customer's code. */
export interface DedicatedAccount {
  readonly customerCode: string;
  readonly accountNumber: string;
  readonly accountName: string;
  readonly bankName: string;
}

/** The rail took the request for an account and assigns it later: its webhook names the account, or its failure. */
export interface PendingAccount {
  readonly customerCode: string;
  readonly pending: true;
}

/** A failure of the rail itself (unreachable, timed out, 5xx, unreadable, circuit open): retry later. No payer's detail in it. */
export class PaymentRailFailure extends Error {
  constructor(
    readonly reasonCode: string,
    readonly health: boolean,
  ) {
    super(`payment rail failure: ${reasonCode}`);
    this.name = 'PaymentRailFailure';
  }
}

/**
 * A payment provider, spoken to as Paystack documents its API: a transaction initialized for an
 * amount in kobo under our reference, verified by that reference, and webhooks signed with
 * `x-paystack-signature` (hex HMAC-SHA512 of the raw body under the secret key).
 */
export interface PaymentRail {
  readonly name: Rail;
  initialize(input: { reference: string; amountKobo: number; email: string; callbackUrl: string }): Promise<Checkout>;
  /** The transaction as the provider's API reports it; null when it knows no transaction by this reference. */
  verify(reference: string): Promise<VerifiedTransaction | null>;
  /** A customer for the organization, then a dedicated virtual account for it (`POST /customer`, `POST /dedicated_account`), now or later. */
  assignDedicatedAccount(input: { organizationId: string; email: string }): Promise<DedicatedAccount | PendingAccount>;
  /** Whether `signature` is the rail's signature of exactly these bytes (false while the rail has no key). */
  signatureValid(rawBody: string, signature: string | undefined): Promise<boolean>;
  /** Whether the rail can take payments here (Paystack: a secret key is set). */
  configured(): Promise<boolean>;
}
