import { Logger } from '@nestjs/common';
import { streams } from '../common/streams.js';
import type { EventStore } from '../event-store/event-store.port.js';
import type { WalletId } from '../wallets/wallet-ledger.port.js';
import type { HistoryCheckpoints } from './history-checkpoints.js';
import { WalletReplay, type AuditEntry, type ReplayState, type ReplaySummary } from './wallet-replay.js';

/** Events between two checkpoints of a wallet: a page replays at most this many to reach its first entry. */
export const DEFAULT_CHECKPOINT_EVERY = 100;
/** Events per read at most (the replay reads one read ahead). */
const MAX_READ = 1_000;

export interface HistoryPageRequest {
  /** From 1. */
  readonly page: number;
  readonly pageSize: number;
  readonly asOf?: Date;
}

export interface HistoryPage {
  readonly entries: readonly AuditEntry[];
  /** The replay to the as-of point (or the end): figures, totals and the chain as if every event had been replayed. */
  readonly summary: ReplaySummary;
  readonly stats: {
    /** Events read from the log and folded for this page (the checkpoints' own events, read to check them, apart). */
    readonly eventsReplayed: number;
    /** The revisions the replays started after (undefined: revision 0). */
    readonly pageFrom: bigint | undefined;
    readonly summaryFrom: bigint | undefined;
    readonly checkpointsRejected: number;
    readonly checkpointsWritten: number;
  };
}

/**
 * A page of a wallet's history as the auditor's replay gives it (wallet-replay.ts), from the
 * nearest history checkpoints (history-checkpoints.ts) instead of revision 0: one replay from the
 * newest checkpoint before the page's first entry to its last, and, for the figures as of the end
 * (or `asOf`), one from the newest checkpoint before that point, unless the first replay is
 * already past it. Each replay writes the checkpoints it passes: the first page request on a long
 * wallet replays it whole and leaves a checkpoint every `every` events; later ones replay at most
 * `every` events plus the page to fill the page, and the events since the newest checkpoint for the
 * figures.
 */
export class WalletHistory {
  private readonly logger = new Logger('WalletHistory');

  constructor(
    private readonly store: EventStore,
    private readonly checkpoints: HistoryCheckpoints,
    private readonly every: number = DEFAULT_CHECKPOINT_EVERY,
  ) {
    if (!Number.isSafeInteger(every) || every < 1) throw new RangeError('every must be a positive integer');
  }

  async page(wallet: WalletId, request: HistoryPageRequest): Promise<HistoryPage> {
    const streamId = streams.wallet(wallet.organizationId, wallet.environment);
    const { asOf } = request;
    const first = (request.page - 1) * request.pageSize;
    const end = first + request.pageSize;

    // Both looked up at once (two round trips saved); the one for the page is not needed when the newest lies before the page.
    const [atEnd, beforePage] = await Promise.all([
      this.checkpoints.newest(this.store, streamId, { asOf }),
      this.checkpoints.newest(this.store, streamId, { asOf, maxEntries: first }),
    ]);
    const atPage = atEnd.state !== undefined && atEnd.state.entries <= first ? atEnd : beforePage;
    const rejected = [...new Set([...atEnd.rejected, ...beforePage.rejected])];
    if (rejected.length > 0)
      this.logger.warn(`${rejected.length} history checkpoint(s) of ${streamId} did not match their MAC or the log's hash chain: replayed from an earlier one and written afresh`);

    const taken = new Map<bigint, ReplayState>();
    const onState = (state: ReplayState) => void taken.set(state.revision, state);
    // Without asOf, a replay that reaches the end leaves the state there as well (the tail checkpoint), so that the next request
    // replays only the events appended since.
    const options = { to: asOf, stateEvery: this.every, stateAtEnd: asOf === undefined, onState };
    let eventsReplayed: number;
    // One read covers the page from its checkpoint: the read ahead is then the only one wasted.
    const pageReplay = new WalletReplay(this.store, wallet, { ...options, resume: atPage.state, pageSize: Math.min(MAX_READ, this.every + request.pageSize) });
    const entries: AuditEntry[] = [];
    let index = atPage.state?.entries ?? 0;
    let last = atPage.state?.revision ?? -1n;
    let stoppedAfterPage = false;
    for await (const entry of pageReplay.entries()) {
      if (index >= first && index < end) entries.push(entry);
      index++;
      last = entry.revision;
      // Past the page, the figures at the end come quicker from the newest checkpoint, when it lies further on.
      if (index >= end && atEnd.state !== undefined && atEnd.state.revision > last) {
        stoppedAfterPage = true;
        break;
      }
    }
    let summary: ReplaySummary;
    let summaryFrom = atPage.state?.revision;
    if (stoppedAfterPage && atEnd.state !== undefined) {
      // As of a moment, the replay stops before the next checkpoint (which is past it); without, it reads the events appended since.
      const summaryReplay = new WalletReplay(this.store, wallet, { ...options, resume: atEnd.state, pageSize: Math.min(MAX_READ, this.every + 1) });
      for await (const _entry of summaryReplay.entries()) {
        // Only the figures at the end are needed.
      }
      summary = summaryReplay.summary;
      summaryFrom = atEnd.state.revision;
      eventsReplayed = Number(last - (atPage.state?.revision ?? -1n)) + summary.eventsReplayed - Number(atEnd.state.revision + 1n);
    } else {
      summary = pageReplay.summary;
      eventsReplayed = summary.eventsReplayed - Number((atPage.state?.revision ?? -1n) + 1n);
    }
    const states = [...taken.values()];
    const isTail = (state: ReplayState) => (state.revision + 1n) % BigInt(this.every) !== 0n;
    let written = await this.checkpoints.save(
      streamId,
      states.filter((state) => !isTail(state)),
      rejected,
    );
    // A new end only: one at or before the checkpoint the figures started from is no news.
    for (const state of states.filter(isTail)) if (state.revision > (atEnd.state?.revision ?? -1n)) written += await this.checkpoints.saveTail(streamId, state, this.every);
    return { entries, summary, stats: { eventsReplayed, pageFrom: atPage.state?.revision, summaryFrom, checkpointsRejected: rejected.length, checkpointsWritten: written } };
  }
}
