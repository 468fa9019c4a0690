import type { CommandContext } from '../common/event.js';
import type { Environment } from '../common/environment.js';

export interface WalletId {
  readonly organizationId: string;
  readonly environment: Environment;
}

export type ReserveOutcome = { readonly reserved: true } | { readonly reserved: false; readonly availableKobo: number };

export interface WalletBalance {
  readonly balanceKobo: number;
  readonly reservedKobo: number;
  readonly availableKobo: number;
}

/**
 * The write side of wallets, over the `wallet-{org}.{env}` stream with expected revisions.
 * Capture, release and funding are idempotent per reference: repeating one writes nothing more.
 * A reserve is idempotent while its reservation is open; closed reservations are not remembered
 * (memory stays proportional to checks in flight), which is safe because each verification
 * reference is reserved once, under its own stream's expected revision.
 */
export abstract class WalletLedger {
  /** Holds `amountKobo` for `reference` unless available = funded - debited - reserved is below it. */
  abstract reserve(wallet: WalletId, reservation: { reference: string; amountKobo: number; scope: string }, context: CommandContext): Promise<ReserveOutcome>;
  /** Debits an open reservation (the check is charged). No-op when it is not open. */
  abstract capture(wallet: WalletId, reference: string, context: CommandContext): Promise<void>;
  /** Releases an open reservation (not charged). No-op when it is not open. */
  abstract release(wallet: WalletId, reference: string, reason: string, context: CommandContext): Promise<void>;
  /** Credits the wallet once per funding reference; `funded: false` when the reference already credited this amount; FundingReferenceConflict when it credited another. */
  abstract fund(
    wallet: WalletId,
    funding: { fundingReference: string; amountKobo: number },
    context: CommandContext,
  ): Promise<{ funded: boolean; balance: WalletBalance; /** The position of the funding, or of the newest wallet event known when nothing was written: wait for projections up to it. */ position?: bigint }>;
  /** The authoritative balance, from the wallet stream. */
  abstract balance(wallet: WalletId): Promise<WalletBalance>;
}
