import type { CommandContext } from '../common/event.js';
import type { Environment } from '../common/environment.js';
import type { AppendResult, StreamAppend } from '../event-store/event-store.port.js';

export interface WalletId {
  readonly organizationId: string;
  readonly environment: Environment;
}

/** `alongside`: the result of the command's append alongside, when it had one. */
export type ReserveOutcome = ({ readonly reserved: true } | { readonly reserved: false; readonly availableKobo: number }) & { readonly alongside?: AppendResult };

/** What a wallet command decided, for the append made alongside it: a reservation refused, with the balance available then. */
export interface AlongsideOutcome {
  readonly refusedAvailableKobo?: number;
}

/**
 * An append to another stream written in the same transaction as a wallet command's own event,
 * all or nothing (on a store whose multi-stream appends are atomic): a check's request beside its
 * reservation (or beside nothing, with its rejection, when the reservation is refused), its
 * completion beside the capture. `build` is called after each decision of the command (a batch
 * refused by another writer is decided again), with what it decided; it is written even when the
 * command itself writes nothing (a refusal, a capture already made), on a fold confirmed current.
 * When the other stream refuses its expected revision, nothing of the command is written and it
 * fails with AlongsideRefused; the other commands of its batch are decided again without it.
 */
export interface Alongside {
  readonly streamId: string;
  build(outcome: AlongsideOutcome): Promise<StreamAppend>;
}

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
  abstract reserve(
    wallet: WalletId,
    reservation: { reference: string; amountKobo: number; scope: string },
    context: CommandContext,
    alongside?: Alongside,
  ): Promise<ReserveOutcome>;
  /** Debits an open reservation (the check is charged). No-op when it is not open. */
  abstract capture(wallet: WalletId, reference: string, context: CommandContext, alongside?: Alongside): Promise<{ readonly alongside?: AppendResult }>;
  /** Releases an open reservation (not charged). No-op when it is not open. */
  abstract release(wallet: WalletId, reference: string, reason: string, context: CommandContext, alongside?: Alongside): Promise<{ readonly alongside?: AppendResult }>;
  /** Credits the wallet once per funding reference; `funded: false` when the reference already credited this amount; FundingReferenceConflict when it credited another. */
  abstract fund(
    wallet: WalletId,
    funding: { fundingReference: string; amountKobo: number },
    context: CommandContext,
  ): Promise<{
    funded: boolean;
    balance: WalletBalance;
    /** The position of the funding, or of the newest wallet event known when nothing was written: wait for projections up to it. */ position?: bigint;
  }>;
  /** The authoritative balance, from the wallet stream. */
  abstract balance(wallet: WalletId): Promise<WalletBalance>;
}
