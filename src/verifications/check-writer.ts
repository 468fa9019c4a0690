import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock.js';
import { InsufficientBalance, InvariantViolated, ServiceUnavailable, VerificationAlreadyExists } from '../common/errors.js';
import type { CommandContext } from '../common/event.js';
import { isConnectionError } from '../database/connection-errors.js';
import { AlongsideRefused } from '../event-sourcing/event-sourced-handler.js';
import { EVENT_STORE, EventStoreUnavailableError, type EventStore } from '../event-store/event-store.port.js';
import { chargedKoboTotal, verificationsTotal } from '../metrics/metrics.js';
import { WalletLedger, type WalletId } from '../wallets/wallet-ledger.port.js';
import type { VerificationCommand, VerificationState } from './verification.decider.js';
import { OutcomeNotKnown, VerificationStreams } from './verification.stream.js';

export type RequestCommand = Extract<VerificationCommand, { type: 'RequestVerification' }>;
export type TerminalCommand = Exclude<VerificationCommand, { type: 'RequestVerification' | 'ErasePersonalData' }>;

/**
 * How a check's run writes to the log: its request with the reservation, then its terminal event
 * with the capture or release. One writer per transaction shape, chosen once at wiring
 * (checkWriterFor) from the store's `multiStreamAppends`: TogetherCheckWriter where several
 * streams commit in one transaction (PostgreSQL: two commits per check), StepwiseCheckWriter where
 * each append is its own (EventStoreDB: the recovery process settles a check left between two).
 */
export interface CheckWriter {
  /** The request and its reservation; answers the pending request (or the state another writer left), throws InsufficientBalance when the reservation is refused. */
  request(command: RequestCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState>;
  /**
   * The terminal event and the money. When the pair is refused (another finisher won), or its
   * answer is lost, or the wallet stays busy, the stream decides and the money follows what it
   * shows; capture and release are idempotent per reference.
   */
  finishAndSettle(reference: string, state: VerificationState, command: TerminalCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState>;
}

export const CHECK_WRITER = Symbol('CheckWriter');

const NOT_RUN_MESSAGE = 'The check could not be run; the wallet was not charged';

/** What both writers share: the settlement from the stream, and the failure of a check whose run broke off. */
abstract class CheckWriterBase implements CheckWriter {
  protected readonly logger = new Logger('RunVerification');

  constructor(
    protected readonly streams: VerificationStreams,
    protected readonly ledger: WalletLedger,
    protected readonly clock: Clock,
  ) {}

  abstract request(command: RequestCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState>;
  abstract finishAndSettle(reference: string, state: VerificationState, command: TerminalCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState>;

  /** Capture for found / not_found, release otherwise. Both are idempotent per reference. */
  protected async settle(reference: string, state: VerificationState, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    if (state.status === 'found' || state.status === 'not_found') {
      const { scope, priceKobo } = state.requested;
      await this.ledger.capture(wallet, reference, context).then(
        () => chargedKoboTotal.inc({ scope, environment: wallet.environment }, priceKobo),
        () => this.logger.warn('Capture deferred to the recovery process'),
      );
    } else if (state.status === 'failed') {
      await this.ledger.release(wallet, reference, state.reasonCode ?? 'failed', context).catch(() => this.logger.warn('Release deferred to the recovery process'));
    }
    return state;
  }

  /** The check's state once failed here, or undefined when that could not be written (recovery settles it). */
  protected async settleAfterError(reference: string, state: VerificationState, wallet: WalletId, context: CommandContext): Promise<VerificationState | undefined> {
    try {
      return await this.finishAndSettle(
        reference,
        state,
        { type: 'FailVerification', reasonCode: 'internal_error', errorMessage: NOT_RUN_MESSAGE, at: this.clock.now() },
        wallet,
        context,
      );
    } catch {
      this.logger.warn('A failed check is left to the recovery process');
      return undefined;
    }
  }
}

/**
 * A store with atomic multi-stream appends: the request with its reservation (or its rejection) in
 * one transaction, the terminal event with its capture or release in another.
 */
export class TogetherCheckWriter extends CheckWriterBase {
  async request(command: RequestCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    const { reference, priceKobo, scope } = command.data;
    const made = await this.streams.requestAlongside(command, context);
    let reservation;
    try {
      reservation = await this.ledger.reserve(wallet, { reference, amountKobo: priceKobo, scope }, context, made.alongside);
    } catch (error) {
      made.notWritten();
      if (error instanceof AlongsideRefused) throw new VerificationAlreadyExists('This reference is already in use');
      // Written together or not at all: when the stream shows the request, its reservation is held
      // too. Fail the check now if we can; the recovery process settles the rest.
      const seen = await this.streams.load(reference).catch(() => undefined);
      // Not written: nothing to name. Unreadable: it may have been, so the client gets the reference.
      if (seen?.status === 'none') throw error;
      const settled = seen?.status === 'pending' ? await this.settleAfterError(reference, seen, wallet, context) : seen;
      throw withReference(error, reference, settled);
    }
    if (reservation.alongside === undefined) throw new InvariantViolated(`the request of ${reference} was not written with its reservation`);
    const requested = await made.written(reservation.alongside);
    if (!reservation.reserved) {
      verificationsTotal.inc({ scope, environment: wallet.environment, outcome: 'rejected' });
      throw new InsufficientBalance('The wallet balance is too low for this check', { reference, priceKobo, balanceKobo: reservation.availableKobo });
    }
    return requested.state;
  }

  async finishAndSettle(reference: string, state: VerificationState, command: TerminalCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    const made = await this.streams.finishAlongside(reference, state, command, context);
    let written;
    try {
      written =
        command.type === 'CompleteVerification'
          ? await this.ledger.capture(wallet, reference, context, made.alongside)
          : await this.ledger.release(wallet, reference, command.type === 'FailVerification' ? command.reasonCode : 'failed', context, made.alongside);
    } catch (error) {
      if (!(error instanceof AlongsideRefused)) this.logger.warn('A finished check and its settlement were not confirmed together; settling from the stream');
      const finished = await this.streams.finishAgain(reference, state, command, context);
      return this.settle(reference, finished.state, wallet, context);
    }
    if (written.alongside === undefined) throw new InvariantViolated(`the terminal event of ${reference} was not written with its settlement`);
    const finished = await made.written(written.alongside);
    if (finished.state.status === 'found' || finished.state.status === 'not_found') {
      chargedKoboTotal.inc({ scope: finished.state.requested.scope, environment: wallet.environment }, finished.state.requested.priceKobo);
    }
    return finished.state;
  }
}

/** Each an append of its own, in the order of the run: the request, the reservation, the rejection if refused; the terminal event, then the capture or release. */
export class StepwiseCheckWriter extends CheckWriterBase {
  async request(command: RequestCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    const { reference, priceKobo, scope } = command.data;
    const requested = await this.streams.request(command, context);
    let reservation;
    try {
      reservation = await this.ledger.reserve(wallet, { reference, amountKobo: priceKobo, scope }, context);
    } catch (error) {
      // Nothing may be held (the reservation's fate is unknown): fail the check now if we can; the recovery process settles the rest.
      const settled = await this.settleAfterError(reference, requested.state, wallet, context);
      throw withReference(error, reference, settled);
    }
    if (!reservation.reserved) {
      const rejected = await this.streams.finish(
        reference,
        requested.state,
        { type: 'RejectVerification', priceKobo, balanceKobo: reservation.availableKobo, at: this.clock.now() },
        context,
      );
      if (rejected.won) {
        verificationsTotal.inc({ scope, environment: wallet.environment, outcome: 'rejected' });
        throw new InsufficientBalance('The wallet balance is too low for this check', { reference, priceKobo, balanceKobo: reservation.availableKobo });
      }
      return this.settle(reference, rejected.state, wallet, context);
    }
    return requested.state;
  }

  async finishAndSettle(reference: string, state: VerificationState, command: TerminalCommand, wallet: WalletId, context: CommandContext): Promise<VerificationState> {
    const finished = await this.streams.finish(reference, state, command, context);
    return this.settle(reference, finished.state, wallet, context);
  }
}

/** The writer for the store's transaction shape: chosen once, at wiring (the verifications module's CHECK_WRITER provider). */
export function checkWriterFor(store: EventStore, streams: VerificationStreams, ledger: WalletLedger, clock: Clock): CheckWriter {
  return store.multiStreamAppends === 'atomic' ? new TogetherCheckWriter(streams, ledger, clock) : new StepwiseCheckWriter(streams, ledger, clock);
}

/** The CHECK_WRITER provider. */
export const checkWriterProvider = {
  provide: CHECK_WRITER,
  useFactory: checkWriterFor,
  inject: [EVENT_STORE, VerificationStreams, WalletLedger, Clock],
};

/**
 * A store failure after the request was (or may have been) written: still 503, but naming the
 * check, so the client can read its outcome rather than run and pay for it again. Other errors
 * (a bug, a refusal with its own details) pass unchanged.
 */
function withReference(error: unknown, reference: string, settled: VerificationState | undefined): unknown {
  const unavailable = error instanceof EventStoreUnavailableError || isConnectionError(error) || (error instanceof ServiceUnavailable && error.details.reference === undefined);
  if (!unavailable) return error;
  if (settled?.status === 'failed') return new ServiceUnavailable(NOT_RUN_MESSAGE, { reference });
  return new OutcomeNotKnown(reference);
}
