import type { Environment } from '../common/environment.js';
import { streams } from '../common/streams.js';
import type { EventStore, JsonObject, RecordedEvent } from '../event-store/event-store.port.js';
import type { SidecarPagesReader, StreamPageReader, StreamPagesReader } from '../event-store/event-store.port.js';
import { occurredAt } from '../common/event.js';
import { checkLink, GENESIS_LINK, linkAfter, storedLink, type ChainBreak } from '../wallets/wallet-chain.js';
import { CHAIN_HASH_WIDTH } from './chain-hashes.js';
import type { WalletId } from '../wallets/wallet-ledger.port.js';
import type { WalletEntryType } from '../wallets/wallet.read-model.js';
import { availableOf, balanceOf, moveMoney, NO_MONEY, type WalletFigures } from '../wallets/money.rule.js';
import type { WalletEvent } from '../wallets/wallet.events.js';

/**
 * The auditor's replay of one wallet stream, straight from the event log: every entry with the
 * running figures after it, the hash chain verified event by event, stopped at an as-of time.
 * It reads the stream in pages and keeps only running totals and the open reservations (bounded by
 * the checks in flight), so memory does not grow with the wallet's history.
 */

export type EntryType = WalletEntryType;
/**
 * The entry type of a wallet event's type; undefined for any other. A switch rather than a lookup
 * in an object: each event's type is a fresh string, which a property lookup first looks up in
 * V8's table of internalized strings.
 */
function entryTypeOf(type: string): EntryType | undefined {
  switch (type) {
    case 'WalletFunded':
      return 'funding';
    case 'WalletFundsReserved':
      return 'reservation';
    case 'WalletDebited':
      return 'debit';
    case 'WalletReservationReleased':
      return 'release';
    default:
      return undefined;
  }
}

export interface AuditEntry {
  readonly revision: bigint;
  readonly position: bigint;
  readonly eventId: string;
  readonly eventType: string;
  readonly entryType: EntryType;
  /** The funding reference of a funding; the verification reference otherwise. */
  readonly reference: string;
  readonly scope: string | null;
  readonly amountKobo: number;
  /** Figures after this entry: balance = funded - debited; available = balance - reserved. */
  readonly balanceKobo: number;
  readonly reservedKobo: number;
  readonly availableKobo: number;
  readonly occurredAt: Date;
  /** `api_key:key_…`, `operator:admin`, `system:ledger`: who caused it (never personal data). */
  readonly actor: string;
  /** The event's stored chain hash; null for an event written before the chain existed. */
  readonly hash: string | null;
  readonly chain: 'hashed' | 'unhashed' | 'broken';
}

export interface Figures {
  readonly fundedKobo: number;
  readonly debitedKobo: number;
  readonly balanceKobo: number;
  readonly reservedKobo: number;
  readonly availableKobo: number;
}

export interface EntryTotals {
  readonly count: number;
  readonly amountKobo: number;
}

/** Where the replay found the log at fault: the event and what is wrong with it. */
export interface LogProblem {
  readonly revision: string;
  readonly position: string;
  readonly eventId: string;
  readonly kind: ChainBreak['kind'] | 'ledger_invalid';
  readonly message: string;
}

export interface OpenReservation {
  readonly reference: string;
  readonly amountKobo: number;
  readonly scope: string | null;
  readonly reservedAt: Date;
  readonly revision: bigint;
}

export interface ReplaySummary {
  readonly organizationId: string;
  readonly environment: Environment;
  readonly streamId: string;
  readonly from: Date | undefined;
  readonly to: Date | undefined;
  /** Events read and folded (from revision 0 up to the as-of point). */
  readonly eventsReplayed: number;
  /** The newest event at or before `to`: the as-of point. Null for a wallet with no event then. */
  readonly lastRevision: string | null;
  readonly lastPosition: string | null;
  /** The figures before the first entry shown (at `from`), and as of `to`. */
  readonly opening: Figures;
  readonly closing: Figures;
  /** Per entry type, over the entries shown (from `from` to `to`). */
  readonly totals: Readonly<Record<EntryType, EntryTotals>>;
  readonly entriesShown: number;
  readonly openReservations: number;
  readonly chain: {
    /** True when every event read is hashed and every link holds, apart from events written before the chain existed. */
    readonly verified: boolean;
    readonly hashedEvents: number;
    /** Events written before the chain existed (all of them come before the first hashed event). */
    readonly unhashedEvents: number;
    /** The revision of the first hashed event; null when none is hashed. */
    readonly hashedFromRevision: string | null;
    /** The link after the last event read: an auditor who records it can later tell a rewritten history from this one. */
    readonly head: string;
    readonly firstBreak: LogProblem | null;
    readonly breaks: number;
  };
  /** Events that break the ledger's rules (a debit of a reservation that is not open, a negative balance…), first ones only. */
  readonly ledgerProblems: readonly LogProblem[];
  readonly ledgerProblemCount: number;
}

/**
 * Everything the wallet replay carries from one event to the next, after the event at `revision`:
 * what a replay needs to go on from there as if it had read every event before (history
 * checkpoints, history-checkpoints.ts). Only a replay without `from` produces or takes one.
 */
export interface ReplayState {
  readonly revision: bigint;
  readonly position: bigint;
  /** The chain link of the event before `revision` (the genesis link at revision 0). */
  readonly linkBefore: string;
  /** The chain link after the event at `revision`: its stored hash, or the computed one for an event written before the chain. */
  readonly link: string;
  readonly chainStarted: boolean;
  readonly hashedEvents: number;
  readonly unhashedEvents: number;
  readonly hashedFromRevision: bigint | null;
  readonly firstBreak: LogProblem | null;
  readonly breaks: number;
  readonly fundedKobo: number;
  readonly debitedKobo: number;
  readonly reservedKobo: number;
  /** The reservations open after `revision`, bounded by the checks in flight. */
  readonly open: readonly OpenReservation[];
  readonly totals: Readonly<Record<EntryType, EntryTotals>>;
  /** Entries (valid wallet events) from revision 0 to `revision`: the index of the next entry. */
  readonly entries: number;
  readonly ledgerProblems: readonly LogProblem[];
  readonly ledgerProblemCount: number;
  /** The latest `occurredAt` of the events up to `revision` (they need not be in order): a replay as of any moment from it on passes this state. */
  readonly latestOccurredAt: Date;
}

export interface ReplayOptions {
  /** Entries before this time are folded but not shown; the opening figures are those at this time. */
  readonly from?: Date;
  /** The as-of time: the replay ends before the first event that occurred after it. */
  readonly to?: Date;
  /** Events per read. */
  readonly pageSize?: number;
  /**
   * How a page of the stream is read: the store's `readStream` by default, or the log reader's
   * leaner page reader (LogReader.streamPage) where the store has one.
   */
  readonly readPage?: StreamPageReader;
  /** Reads the stream from a revision to its end in one go (LogReader.streamPages, a COPY); takes precedence over `readPage`. */
  readonly readPages?: StreamPagesReader;
  /**
   * The COPY reader with the chain hash worker as its sidecar (`logReader.streamPagesWith(new
   * ChainHashWorker())`, chain-hashes.ts): each page comes with the hash each event's stored link
   * claims, computed on the worker thread; takes precedence over `readPages` and `readPage`.
   */
  readonly readHashedPages?: SidecarPagesReader;
  /** Called after each page with the number of events read so far. */
  readonly onProgress?: (eventsRead: number) => void;
  /** Sees every entry, shown or not (before `from`), before it is yielded: reconciliation needs them all. */
  readonly observe?: (entry: AuditEntry) => void | Promise<void>;
  /** Called with each reservation still open at the as-of point when the replay ends (for reconciliation). */
  readonly onOpenReservation?: (reservation: OpenReservation) => void;
  /** Start after the event a state was taken at (history checkpoints, trusted by the caller), not at revision 0. Not with `from`. */
  readonly resume?: ReplayState;
  /** With `onState`: hands over the running state after every event whose revision + 1 is a multiple of this. */
  readonly stateEvery?: number;
  /** With `onState`: also hands over the state after the last event read, when the replay ends (not when its consumer stops early). */
  readonly stateAtEnd?: boolean;
  readonly onState?: (state: ReplayState) => void | Promise<void>;
}

const DEFAULT_PAGE_SIZE = 1_000;
const MAX_LISTED_PROBLEMS = 100;

function figures(money: WalletFigures): Figures {
  return { fundedKobo: money.fundedKobo, debitedKobo: money.debitedKobo, balanceKobo: balanceOf(money), reservedKobo: money.reservedKobo, availableKobo: availableOf(money) };
}

function actorOf(metadata: JsonObject): string {
  const actor = metadata.actor;
  if (typeof actor === 'object' && actor !== null && !Array.isArray(actor) && typeof actor.type === 'string' && typeof actor.id === 'string') return `${actor.type}:${actor.id}`;
  return 'unknown';
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The newest revision of a stream (one read backwards), or -1 when it has no event: the size of a replay, for a progress bar. */
export async function lastRevisionOf(store: EventStore, streamId: string): Promise<bigint> {
  const [last] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
  return last === undefined ? -1n : last.revision;
}

export class WalletReplay {
  readonly streamId: string;
  private readonly pageSize: number;
  private summaryValue: ReplaySummary | undefined;

  constructor(
    private readonly store: EventStore,
    readonly wallet: WalletId,
    private readonly options: ReplayOptions = {},
  ) {
    this.streamId = streams.wallet(wallet.organizationId, wallet.environment);
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1 || this.pageSize > 10_000) throw new RangeError('pageSize must be 1 to 10000');
    if (options.from !== undefined && options.to !== undefined && options.from > options.to) throw new RangeError('from is after to');
    if (options.resume !== undefined && options.from !== undefined) throw new RangeError('a resumed replay has no from');
    if (options.resume !== undefined && options.to !== undefined && options.resume.latestOccurredAt > options.to) throw new RangeError('the resumed state is past to');
    if (options.stateEvery !== undefined && (!Number.isSafeInteger(options.stateEvery) || options.stateEvery < 1)) throw new RangeError('stateEvery must be a positive integer');
  }

  /**
   * The stream from `fromRevision` to its end a page at a time, through `readPage` or the store's
   * `readStream`: the next page is read while the caller folds this one (at most two pages in memory).
   */
  private async *pagesRead(fromRevision: bigint): AsyncGenerator<RecordedEvent[]> {
    const readPage = this.options.readPage;
    const read = (revision: bigint) =>
      readPage !== undefined
        ? readPage(this.streamId, revision, this.pageSize)
        : this.store.readStream(this.streamId, { direction: 'forwards', fromRevision: revision, maxCount: this.pageSize });
    let nextPage: Promise<RecordedEvent[]> | undefined = read(fromRevision);
    while (nextPage !== undefined) {
      const page: RecordedEvent[] = await nextPage;
      nextPage = page.length === this.pageSize ? read((page.at(-1) as RecordedEvent).revision + 1n) : undefined;
      // A consumer may stop early (a history page, the as-of point): the read ahead is then not
      // waited for, but must not fail unobserved.
      void nextPage?.catch(() => undefined);
      yield page;
    }
  }

  /** The pages to fold, with the claimed-link hashes when the worker computed them (else '' and the replay hashes each event itself). */
  private async *sourcePages(firstRevision: bigint): AsyncGenerator<{ events: RecordedEvent[]; side: string | undefined }> {
    const { readHashedPages, readPages } = this.options;
    if (readHashedPages !== undefined) {
      yield* readHashedPages(this.streamId, firstRevision, this.pageSize);
      return;
    }
    for await (const events of readPages?.(this.streamId, firstRevision, this.pageSize) ?? this.pagesRead(firstRevision)) yield { events, side: undefined };
  }

  /** Available once `entries()` has run to its end. */
  get summary(): ReplaySummary {
    if (this.summaryValue === undefined) throw new Error('the replay has not finished');
    return this.summaryValue;
  }

  /** The entries from `from` to `to`, oldest first; the summary is set when the iteration ends. */
  async *entries(): AsyncGenerator<AuditEntry> {
    for await (const page of this.pages()) yield* page;
  }

  /**
   * The same entries, one array per page read: a consumer that writes or inserts them in batches
   * pays one await per page instead of one per entry. The summary is set when the iteration ends.
   */
  async *pages(): AsyncGenerator<AuditEntry[]> {
    const { from, to, resume } = this.options;
    const { organizationId, environment } = this.wallet;
    const observe = this.options.observe;
    let money: WalletFigures = resume === undefined ? NO_MONEY : { fundedKobo: resume.fundedKobo, debitedKobo: resume.debitedKobo, reservedKobo: resume.reservedKobo };
    const open = new Map<string, OpenReservation>(resume?.open.map((reservation) => [reservation.reference, reservation]));
    let opening: Figures | undefined;
    const totals: Record<EntryType, { count: number; amountKobo: number }> = {
      funding: { count: resume?.totals.funding.count ?? 0, amountKobo: resume?.totals.funding.amountKobo ?? 0 },
      reservation: { count: resume?.totals.reservation.count ?? 0, amountKobo: resume?.totals.reservation.amountKobo ?? 0 },
      debit: { count: resume?.totals.debit.count ?? 0, amountKobo: resume?.totals.debit.amountKobo ?? 0 },
      release: { count: resume?.totals.release.count ?? 0, amountKobo: resume?.totals.release.amountKobo ?? 0 },
    };
    let entriesShown = resume?.entries ?? 0;
    let link = resume?.link ?? GENESIS_LINK;
    let linkBefore = resume?.linkBefore ?? GENESIS_LINK;
    let chainStarted = resume?.chainStarted ?? false;
    let hashedEvents = resume?.hashedEvents ?? 0;
    let unhashedEvents = resume?.unhashedEvents ?? 0;
    let hashedFromRevision: bigint | null = resume?.hashedFromRevision ?? null;
    let firstBreak: LogProblem | null = resume?.firstBreak ?? null;
    let breaks = resume?.breaks ?? 0;
    const ledgerProblems: LogProblem[] = [...(resume?.ledgerProblems ?? [])];
    let ledgerProblemCount = resume?.ledgerProblemCount ?? 0;
    let last: Pick<RecordedEvent, 'revision' | 'position'> | undefined = resume;
    // As milliseconds: comparing two Dates converts each to a number first, at every event.
    let latestOccurredAtMs = (resume?.latestOccurredAt ?? new Date(0)).getTime();
    let expectedRevision = resume === undefined ? 0n : resume.revision + 1n;
    let eventsRead = 0;
    const { stateEvery, onState } = this.options;
    const state = (): ReplayState => {
      if (last === undefined) throw new Error('invariant: a replay state is taken after an event');
      return {
        revision: last.revision,
        position: last.position,
        linkBefore,
        link,
        chainStarted,
        hashedEvents,
        unhashedEvents,
        hashedFromRevision,
        firstBreak,
        breaks,
        fundedKobo: money.fundedKobo,
        debitedKobo: money.debitedKobo,
        reservedKobo: money.reservedKobo,
        open: [...open.values()],
        totals: structuredClone(totals),
        entries: entriesShown,
        ledgerProblems: [...ledgerProblems],
        ledgerProblemCount,
        latestOccurredAt: new Date(latestOccurredAtMs),
      };
    };
    const stateDue = (revision: bigint) => onState !== undefined && stateEvery !== undefined && (revision + 1n) % BigInt(stateEvery) === 0n;

    const problemAt = (recorded: RecordedEvent, kind: LogProblem['kind'], message: string): LogProblem => ({
      revision: recorded.revision.toString(),
      position: recorded.position.toString(),
      eventId: recorded.id,
      kind,
      message,
    });
    let lastProblemRevision = -1n;
    // One problem per event, the first found: the count is of events that break the rules.
    const ledgerProblem = (recorded: RecordedEvent, message: string) => {
      if (recorded.revision === lastProblemRevision) return;
      lastProblemRevision = recorded.revision;
      ledgerProblemCount++;
      if (ledgerProblems.length < MAX_LISTED_PROBLEMS) ledgerProblems.push(problemAt(recorded, 'ledger_invalid', message));
    };

    let done = false;
    const firstRevision = resume === undefined ? 0n : resume.revision + 1n;
    for await (const { events: page, side: claimedHashes } of this.sourcePages(firstRevision)) {
      const shown: AuditEntry[] = [];
      for (let index = 0; index < page.length; index++) {
        const recorded = page[index];
        if (recorded.revision !== expectedRevision) {
          throw new Error(`invariant: wallet stream ${this.streamId} read revision ${recorded.revision} after ${String(last?.revision ?? 'none')}`);
        }
        expectedRevision++;
        const at = occurredAt(recorded);
        if (to !== undefined && at > to) {
          done = true;
          break;
        }
        const atMs = at.getTime();
        if (atMs > latestOccurredAtMs) latestOccurredAtMs = atMs;
        linkBefore = link;

        const check = checkLink(link, recorded, chainStarted, claimedHashes, index * CHAIN_HASH_WIDTH);
        let hash: string | null;
        if (check.status === 'hashed') {
          hashedEvents++;
          if (!chainStarted) hashedFromRevision = recorded.revision;
          chainStarted = true;
          // A hashed event's stored hash is the one just verified: the next link.
          link = (recorded.metadata.chain as { hash: string }).hash;
          hash = link;
        } else {
          if (check.status === 'unhashed') {
            unhashedEvents++;
          } else {
            breaks++;
            firstBreak ??= problemAt(recorded, check.problem.kind, check.problem.message);
            if (storedLink(recorded.metadata) !== undefined) chainStarted = true;
          }
          const stored = storedLink(recorded.metadata);
          hash = stored === undefined || stored === 'malformed' ? null : stored.hash;
          link = linkAfter(link, recorded);
        }

        const entryType = entryTypeOf(recorded.type);
        const data = recorded.data;
        if (entryType === undefined) {
          ledgerProblem(recorded, `${recorded.type} is not a wallet event`);
          last = recorded;
          if (stateDue(recorded.revision)) await onState?.(state());
          continue;
        }
        const reference = (entryType === 'funding' ? text(data.fundingReference) : text(data.reference)) ?? '';
        const held = entryType === 'debit' || entryType === 'release' ? open.get(reference) : undefined;
        const moved = moveMoney(money, { type: recorded.type as WalletEvent['type'], amountKobo: data.amountKobo, heldKobo: held?.amountKobo ?? null });
        if (moved.refused === 'not_an_amount') {
          ledgerProblem(recorded, moved.message);
          last = recorded;
          if (stateDue(recorded.revision)) await onState?.(state());
          continue;
        }
        const amountKobo = data.amountKobo as number;
        if (data.organizationId !== organizationId || data.environment !== environment) ledgerProblem(recorded, 'it names another wallet than its stream');
        if (from !== undefined && opening === undefined && at >= from) opening = figures(money);

        let scope = entryType === 'reservation' ? text(data.scope) : null;
        if (entryType === 'reservation') {
          if (open.has(reference)) ledgerProblem(recorded, 'it reserves a reference that is already open');
          else open.set(reference, { reference, amountKobo, scope, reservedAt: at, revision: recorded.revision });
        } else if (entryType === 'debit' || entryType === 'release') {
          scope = held?.scope ?? null;
          open.delete(reference);
        }
        // The money rule's refusal after the reservation's own: one problem per event, the first found.
        if (moved.refused !== undefined) ledgerProblem(recorded, moved.message);
        money = moved.figures;
        const balanceKobo = balanceOf(money);
        const reservedKobo = money.reservedKobo;
        const availableKobo = availableOf(money);
        last = recorded;

        const entry: AuditEntry = {
          revision: recorded.revision,
          position: recorded.position,
          eventId: recorded.id,
          eventType: recorded.type,
          entryType,
          reference,
          scope,
          amountKobo,
          balanceKobo,
          reservedKobo,
          availableKobo,
          occurredAt: at,
          actor: actorOf(recorded.metadata),
          hash,
          chain: check.status,
        };
        if (observe !== undefined) {
          const observed = observe(entry);
          if (observed !== undefined) await observed;
        }
        if (from === undefined || at >= from) {
          entriesShown++;
          totals[entryType].count++;
          totals[entryType].amountKobo += amountKobo;
          shown.push(entry);
        }
        if (stateDue(recorded.revision)) await onState?.(state());
      }
      eventsRead += page.length;
      this.options.onProgress?.(eventsRead);
      if (shown.length > 0) yield shown;
      // Past the as-of point: leaving the loop ends the read (and a COPY under way).
      if (done) break;
    }

    if (this.options.stateAtEnd === true && last !== undefined && last !== resume) await onState?.(state());
    for (const reservation of open.values()) this.options.onOpenReservation?.(reservation);
    const closing = figures(money);
    this.summaryValue = {
      organizationId: this.wallet.organizationId,
      environment: this.wallet.environment,
      streamId: this.streamId,
      from,
      to,
      eventsReplayed: last === undefined ? 0 : Number(last.revision) + 1,
      lastRevision: last?.revision.toString() ?? null,
      lastPosition: last?.position.toString() ?? null,
      opening: opening ?? (from === undefined ? figures(NO_MONEY) : closing),
      closing,
      totals,
      entriesShown,
      openReservations: open.size,
      chain: {
        verified: breaks === 0,
        hashedEvents,
        unhashedEvents,
        hashedFromRevision: hashedFromRevision?.toString() ?? null,
        head: link,
        firstBreak,
        breaks,
      },
      ledgerProblems,
      ledgerProblemCount,
    };
  }
}
