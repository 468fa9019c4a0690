import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { isConnectionError } from '../database/connection-errors.js';
import { GroupCommit } from '../database/group-commit.js';
import { KeptSessions } from '../database/kept-sessions.js';
import { raisePositionEpoch } from '../database/position-epoch.js';
import { prepared } from '../database/prepared.js';
import {
  type AppendResult,
  assertAppendable,
  assertAppendableMany,
  assertReadCount,
  type EventFilter,
  type AppendOptions,
  type EventStore,
  EventStoreUnavailableError,
  type EventToAppend,
  type ExpectedRevision,
  type JsonObject,
  type KeyRows,
  matchesFilter,
  type LogReader,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from './event-store.port.js';
import { postgresLogReader } from './postgres-log-reader.js';

const NOTIFY_CHANNEL = 'ledger_events';
/** Rows a subscription scans per query at the live edge. */
const SUBSCRIPTION_SCAN_ROWS = 2_000;
/**
 * Rows a subscription scans per query while catching up, and reads one window ahead (the next
 * query runs while the subscriber works through the current window): fewer round trips, and the
 * server's reading overlaps the subscriber's applying. Two windows of this size are the most a
 * subscription holds in memory (with the runner's own queue, a few tens of megabytes).
 */
const CATCH_UP_SCAN_ROWS = 10_000;
/** Fallback poll when no notification arrives (a notification can be lost while reconnecting). */
const IDLE_POLL_MS = 250;
/** Re-poll quickly when committed events exist beyond the visible bound (an older transaction is still open). */
const PENDING_POLL_MS = 10;
/**
 * Least time between the starts of two reads of a live subscription, whether it was woken by an
 * append of this process, a notification from another, or a read that found more. Under load
 * appends are announced every fraction of a millisecond; reading on each would keep every
 * subscription querying back to back for a few events each, and every projection writing a
 * transaction for them. Spacing reads gathers the events of 50 ms into one read and one projection
 * batch, for at most that much more lag. Under a paced load a shorter spacing gave the checks
 * both a higher median and a higher tail: the CPU the larger batches save goes to the requests.
 * A read after a quiet spell starts at once.
 */
const LIVE_READ_SPACING_MS = 50;
const RETRY_BACKOFF_MAX_MS = 5_000;
/**
 * Other processes' subscriptions learn of this store's appends by a NOTIFY sent after they commit,
 * at most one per this interval however many appends it covers (one NOTIFY statement costs a round
 * trip). Half the live read spacing: a subscription under load reads no more often than that anyway.
 * Their fallback, should one be lost, is IDLE_POLL_MS.
 */
const NOTIFY_INTERVAL_MS = 25;
/**
 * How often at most this store records its newest append as the log's floor (migration
 * 1795647443977): an append whose positions would not lie above the floor is refused and the epoch
 * raised, so a process still running when its database is replaced by a restore from another
 * cluster does not write below the old log. One small update per interval, in the background.
 */
const FLOOR_INTERVAL_MS = 5_000;
/**
 * How long a readAll waits for the events committed before it to become visible, and how often it
 * looks. A writing transaction anywhere in the cluster holds the bound back (transaction ids are
 * cluster-wide), one in another database included: the wait outlasts those of a few seconds.
 */
const READ_ALL_WAIT_MS = 5_000;
const READ_ALL_POLL_MS = 2;

const EXPECTED_CODES: Record<Exclude<ExpectedRevision, bigint>, bigint> = { no_stream: -1n, any: -2n, stream_exists: -3n };
const expectedCode = (expected: ExpectedRevision): bigint => (typeof expected === 'bigint' ? expected : EXPECTED_CODES[expected]);

/**
 * Group commit: batches written at once, and the most appends and events one batch takes. Two in
 * flight keep PostgreSQL busy while the next batch gathers; the caps keep one transaction short.
 */
const MAX_BATCHES_IN_FLIGHT = 2;
const MAX_BATCH_APPENDS = 200;
const MAX_BATCH_EVENTS = 5_000;

/** One read of a subscription: see readWindow. */
interface Window {
  readonly events: RecordedEvent[];
  readonly scannedTo: bigint | undefined;
  readonly full: boolean;
  readonly beyond: boolean;
  /** The store's announcement count when the query started: a later count means appends the window may not hold. */
  readonly announcedBefore: number;
}

/** One write of the group commit: the appends of one write-set, all written or none (a single append is a set of one). */
type WriteSet = readonly StreamAppend[];

const TABLE_COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, created_at';
/**
 * What reads select: the commit time as milliseconds since the epoch (a float, read with
 * parseFloat and made a Date by one constructor call) rather than a timestamptz, whose text the
 * driver parses with a regular expression (a visible share of the client's CPU while catching up).
 * A Date holds whole milliseconds either way (both truncate).
 */
const COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, (extract(epoch from created_at) * 1000)::float8 as created_ms';

interface EventRow {
  position: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: JsonObject;
  metadata: JsonObject;
  created_ms: number;
}

/** An append refused because the log's positions are behind its events (see raiseEpochOnce). */
function positionsBehind(error: unknown): boolean {
  const pgError = error as { code?: string; constraint?: string };
  return pgError.code === 'ES503' || (pgError.code === '23505' && pgError.constraint === 'events_pkey');
}

function toRecorded(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    type: row.type,
    revision: BigInt(row.revision),
    position: BigInt(row.position),
    data: row.data,
    metadata: row.metadata,
    createdAt: new Date(row.created_ms),
  };
}

function filterSql(filter: EventFilter | undefined, params: unknown[]): string {
  const categories = filter?.streamCategories ?? [];
  const types = filter?.eventTypes ?? [];
  if (categories.length === 0 && types.length === 0) return '';
  params.push([...categories], [...types]);
  return ` and (split_part(stream_id, '-', 1) = any($${params.length - 1}::text[]) or type = any($${params.length}::text[]))`;
}

/**
 * The events of an append (or of a group commit, in batch order) as the append functions take them:
 * one JSON array, serialised in one go (migration 1732250000008).
 */
function eventsJson(events: readonly EventToAppend[]): string {
  return JSON.stringify(events.map((event) => ({ id: event.id, type: event.type, data: event.data, metadata: event.metadata ?? {} })));
}

/**
 * append_write_sets with the key rows its appends carry (StreamAppend.keyRows), in the same
 * statement and so the same transaction: the rows of a write-set are written only when the set is
 * (a refused set leaves none behind), and a failure of the statement writes nothing at all. A data
 * key rides only on the append that creates its verification stream, so a key row already there
 * (left by an earlier attempt whose events were never written) sealed nothing in the log and is
 * replaced; of two sets of one batch creating the same stream only the first is written, and its
 * key is the one kept. Tokens already indexed stay as they are.
 */
const APPEND_WITH_KEY_ROWS = `with appended as (
    select a.next_revision, a.last_position, a.actual, a.ordinality
    from append_write_sets($1, $2, $3, $4, $5, $6, $7) with ordinality a),
  accepted as (select distinct ($4::int[])[ordinality] as set_no from appended where next_revision is not null),
  keyed as (
    insert into verification_keys (reference, organization_id, environment, wrapped_key)
    select distinct on (k.reference) k.reference, k.organization_id, k.environment, k.wrapped_key
    from json_to_recordset($8::json) k(n int, set_no int, reference text, organization_id text, environment text, wrapped_key text)
    where k.set_no in (select set_no from accepted)
    order by k.reference, k.n
    on conflict (reference) do update set organization_id = excluded.organization_id, environment = excluded.environment, wrapped_key = excluded.wrapped_key, destroyed_at = null, created_at = now()),
  indexed as (
    insert into verification_subjects (organization_id, environment, token, reference)
    select t.organization_id, t.environment, t.token, t.reference
    from json_to_recordset($9::json) t(set_no int, organization_id text, environment text, token text, reference text)
    where t.set_no in (select set_no from accepted)
    on conflict do nothing)
  select next_revision, last_position, actual from appended order by ordinality`;

/**
 * The parameters $8 and $9 of APPEND_WITH_KEY_ROWS: the data keys, then the tokens, each row with its
 * write-set, as JSON arrays of records (one native JSON.stringify each, where nine text arrays cost
 * the driver's array literal escaping, element by element).
 */
function keyRowParams(keyed: readonly { part: { keyRows: KeyRows }; set: number }[]): unknown[] {
  const keys: { n: number; set_no: number; reference: string; organization_id: string; environment: string; wrapped_key: string }[] = [];
  const tokens: { set_no: number; organization_id: string; environment: string; token: string; reference: string }[] = [];
  for (const { part, set } of keyed) {
    const { reference, organizationId, environment, wrappedKey } = part.keyRows;
    if (wrappedKey !== null) keys.push({ n: keys.length, set_no: set, reference, organization_id: organizationId, environment, wrapped_key: wrappedKey });
    for (const token of part.keyRows.tokens) tokens.push({ set_no: set, organization_id: organizationId, environment, token, reference });
  }
  return [JSON.stringify(keys), JSON.stringify(tokens)];
}

const unreachable = (cause: unknown) => new EventStoreUnavailableError('the PostgreSQL event log is unreachable', { cause });

const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms));

export interface PostgresEventStoreOptions {
  readonly pool: pg.Pool;
  /** Used for the dedicated LISTEN connection. */
  readonly connectionString: string;
}

export class PostgresEventStore implements EventStore {
  readonly kind = 'postgres' as const;
  /** The log is a table of this pool's database: it is read there in SQL. */
  readonly logReader: LogReader;
  private readonly pool: pg.Pool;
  private readonly connectionString: string;
  private listener: pg.Client | undefined;
  private listenerConnecting: Promise<void> | undefined;
  private readonly wakers = new Set<() => void>();
  private closed = false;
  /** Counts announcements (own appends, notifications): a subscription that saw it move while reading reads again. */
  private announced = 0;
  private readonly appends = new GroupCommit<WriteSet, AppendResult[]>({
    maxInFlight: MAX_BATCHES_IN_FLIGHT,
    maxItems: MAX_BATCH_APPENDS,
    maxWeight: MAX_BATCH_EVENTS,
    weight: (set) => set.reduce((events, part) => events + part.events.length, 0),
    writeOne: async (set) => (set.length === 1 && set[0].keyRows === undefined && set[0].expectedEventId === undefined ? [await this.appendOne(set[0])] : this.appendSets([set])),
    writeMany: (batch) => this.appendBatch(batch),
    fatal: (error) => (isConnectionError(error) ? unreachable(error) : undefined),
  });
  private readonly windowsInFlight = new Map<string, Promise<Window>>();
  /** The newest position this store appended that a readAll has not yet seen visible (read-your-writes). */
  private newestOwnAppend: bigint | undefined;
  private notifyTimer: NodeJS.Timeout | undefined;
  /** When this store last recorded the floor (performance.now()), or undefined when never. */
  private floorWrittenAt: number | undefined;
  /** Sent with this store's notifications, so that its own listener can tell them from other processes'. */
  private readonly instanceId = randomUUID();

  /** The appends' sessions, one per batch in flight, kept out of the pool (kept-sessions.ts says why). */
  private readonly writeSessions: KeptSessions;

  constructor(options: PostgresEventStoreOptions) {
    this.pool = options.pool;
    this.connectionString = options.connectionString;
    this.logReader = postgresLogReader(options.pool);
    this.writeSessions = new KeptSessions(this.pool, MAX_BATCHES_IN_FLIGHT);
  }

  /** Several streams in one transaction: all written or none (append_write_sets). */
  readonly multiStreamAppends = 'atomic' as const;
  /** Checked by append_write_sets, on the stream rows it has locked (migration 1795800000001). */
  readonly expectedEventIds = 'checked' as const;
  /** Every read sees every committed append: a stream shorter than an acknowledged append lost events. */
  readonly shortStreams = 'lost' as const;

  /**
   * Appends go through a group commit (src/database/group-commit.ts): an append made while
   * `MAX_BATCHES_IN_FLIGHT` batches are being written waits for one of them and is then written with
   * every other append waiting by then, in one transaction (append_write_sets), each append keeping
   * its own expected revision and atomicity. Alone, an append is written at once on its own
   * (append_events): no added latency when idle, one commit for many appends under load.
   */
  async append(streamId: string, events: readonly EventToAppend[], options: AppendOptions): Promise<AppendResult> {
    const { expectedRevision, expectedEventId } = options;
    assertAppendable(streamId, events, expectedRevision, expectedEventId);
    const [result] = await this.appends.write([{ streamId, events, expectedRevision, ...(expectedEventId === undefined ? {} : { expectedEventId }) }]);
    return result;
  }

  /**
   * A write-set: its appends in one transaction, all or nothing, through the same group commit (a
   * batch holds single appends and write-sets alike, and a refused write-set refuses only itself).
   */
  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    assertAppendableMany(appends);
    return this.appends.write(appends);
  }

  private async appendOne(pending: StreamAppend, epochRaised = false): Promise<AppendResult> {
    const { streamId, events, expectedRevision } = pending;
    try {
      const result = await this.writeSessions.use((session) =>
        session.query<{ next_revision: string; last_position: string }>(
          prepared('select next_revision, last_position from append_events($1, $2, $3)', [streamId, expectedCode(expectedRevision).toString(), eventsJson(events)]),
        ),
      );
      const row = result.rows[0];
      this.appended(BigInt(row.last_position));
      return { nextExpectedRevision: BigInt(row.next_revision), position: BigInt(row.last_position) };
    } catch (error) {
      const pgError = error as { code?: string; detail?: string; constraint?: string };
      if (positionsBehind(error)) {
        await this.raiseEpochOnce(error, epochRaised);
        return this.appendOne(pending, true);
      }
      if (pgError.code === 'ES409' || (pgError.code === '23505' && pgError.constraint === 'events_event_id')) {
        if (pgError.code === '23505') {
          const retried = await this.previousAppendOf(streamId, events);
          if (retried !== undefined) return retried;
          throw error;
        }
        return this.refused(streamId, events, expectedRevision, BigInt(pgError.detail ?? '-1'));
      }
      if (isConnectionError(error)) throw unreachable(error);
      throw error;
    }
  }

  /**
   * Positions behind the log (the database came from another cluster while this process ran): the
   * write wrote nothing. Raises the position epoch so that the caller can try once more; a second
   * time, or when the epoch cannot be raised, the log is unavailable.
   */
  private async raiseEpochOnce(error: unknown, epochRaised: boolean): Promise<void> {
    if (epochRaised) throw new EventStoreUnavailableError("the event log's positions are behind its events", { cause: error });
    try {
      await raisePositionEpoch(this.pool);
    } catch (raiseError) {
      if (isConnectionError(raiseError)) throw unreachable(raiseError);
      throw new EventStoreUnavailableError("the event log's positions are behind its events and could not be raised", { cause: raiseError });
    }
  }

  /**
   * Several write-sets in one transaction. When the batch as a whole fails for a reason that belongs
   * to one of its writes (an event id already in the log, data PostgreSQL refuses, a deadlock with
   * a writer elsewhere, a stream created meanwhile by another transaction), nothing of it was
   * written and the group commit tries each write-set again on its own, so only the one at fault
   * fails.
   */
  private async appendBatch(batch: readonly WriteSet[]): Promise<PromiseSettledResult<AppendResult[]>[]> {
    const rows = await this.writeSets(batch);
    return this.settleSets(batch, rows);
  }

  /** Write-sets alone (a multi-stream append when it is not batched): refused ones throw, as a single append's refusal does. */
  private async appendSets(batch: readonly WriteSet[], epochRaised = false): Promise<AppendResult[]> {
    let rows;
    try {
      rows = await this.writeSets(batch);
    } catch (error) {
      const pgError = error as { code?: string; detail?: string; hint?: string; constraint?: string };
      if (positionsBehind(error)) {
        await this.raiseEpochOnce(error, epochRaised);
        return this.appendSets(batch, true);
      }
      if (pgError.code === '23505' && pgError.constraint === 'events_event_id' && batch.length === 1) {
        const retried = await this.previousAppendsOf(batch[0]);
        if (retried !== undefined) return retried;
        throw error;
      }
      // A stream of the set created by another transaction since this one looked.
      if (pgError.code === 'ES409' && batch.length === 1) {
        const part = batch[0].find((candidate) => candidate.streamId === pgError.hint) ?? batch[0][0];
        return this.refusedSet(batch[0], part, BigInt(pgError.detail ?? '-1'));
      }
      if (isConnectionError(error)) throw unreachable(error);
      throw error;
    }
    const [outcome] = await this.settleSets(batch, rows);
    if (outcome.status === 'rejected') throw outcome.reason;
    return outcome.value;
  }

  private async writeSets(batch: readonly WriteSet[]): Promise<{ next_revision: string | null; last_position: string; actual: string | null }[]> {
    const parts = batch.flatMap((set, setIndex) => set.map((part) => ({ part, set: setIndex + 1 })));
    const params: unknown[] = [
      parts.map(({ part }) => part.streamId),
      parts.map(({ part }) => expectedCode(part.expectedRevision).toString()),
      parts.map(({ part }) => part.events.length),
      parts.map(({ set }) => set),
      parts.flatMap(({ part }, index) => part.events.map(() => index + 1)),
      eventsJson(parts.flatMap(({ part }) => part.events)),
      parts.map(({ part }) => part.expectedEventId ?? null),
    ];
    const keyed = parts.filter(({ part }) => part.keyRows !== undefined) as { part: StreamAppend & { keyRows: KeyRows }; set: number }[];
    if (keyed.length > 0) params.push(...keyRowParams(keyed));
    const { rows } = await this.writeSessions.use((session) =>
      session.query<{ next_revision: string | null; last_position: string; actual: string | null }>(
        prepared(keyed.length > 0 ? APPEND_WITH_KEY_ROWS : 'select next_revision, last_position, actual from append_write_sets($1, $2, $3, $4, $5, $6, $7)', params),
      ),
    );
    if (rows.length !== parts.length) throw new Error(`invariant: append_write_sets answered ${rows.length} rows for ${parts.length} appends`);
    this.appended(rows.reduce((newest, row) => (row.next_revision !== null && BigInt(row.last_position) > newest ? BigInt(row.last_position) : newest), 0n));
    return rows;
  }

  /** Each write-set's outcome from its rows: its results, or the refusal of its first append that did not match. */
  private settleSets(batch: readonly WriteSet[], rows: readonly { next_revision: string | null; last_position: string; actual: string | null }[]) {
    let row = 0;
    return Promise.allSettled(
      batch.map(async (set): Promise<AppendResult[]> => {
        const own = rows.slice(row, row + set.length);
        row += set.length;
        if (own.every((part) => part.next_revision !== null)) {
          return own.map((part) => ({ nextExpectedRevision: BigInt(part.next_revision as string), position: BigInt(part.last_position) }));
        }
        const refusing = own.findIndex((part) => part.actual !== null);
        if (refusing === -1) throw new Error('invariant: a refused write-set names no stream that refused it');
        return this.refusedSet(set, set[refusing], BigInt(own[refusing].actual as string));
      }),
    );
  }

  /** A write-set refused: a retry of one that succeeded answers with its results, anything else is the refusal of `part`. */
  private async refusedSet(set: WriteSet, part: StreamAppend, actual: bigint): Promise<AppendResult[]> {
    const retried = await this.previousAppendsOf(set);
    if (retried !== undefined) return retried;
    throw new WrongExpectedRevisionError(part.streamId, part.expectedRevision, actual < 0n ? 'no_stream' : actual);
  }

  /** previousAppendOf for every append of a write-set: its results when all of them are in the log as written. */
  private async previousAppendsOf(set: WriteSet): Promise<AppendResult[] | undefined> {
    const results: AppendResult[] = [];
    for (const part of set) {
      const previous = await this.previousAppendOf(part.streamId, part.events);
      if (previous === undefined) return undefined;
      results.push(previous);
    }
    return results;
  }

  /** An append refused for its expected revision: a retry of one that succeeded answers with its result, anything else is the conflict. */
  private async refused(streamId: string, events: readonly EventToAppend[], expectedRevision: ExpectedRevision, actual: bigint): Promise<AppendResult> {
    const retried = await this.previousAppendOf(streamId, events);
    if (retried !== undefined) return retried;
    throw new WrongExpectedRevisionError(streamId, expectedRevision, actual < 0n ? 'no_stream' : actual);
  }

  /**
   * The same event ids appended again to the same stream, in the same order, are a retry of an
   * append that succeeded: answer with its result, as EventStoreDB does (best effort). Anything else
   * is the original error. Costs a query only when an append was refused.
   */
  private async previousAppendOf(streamId: string, events: readonly EventToAppend[]): Promise<AppendResult | undefined> {
    const ids = events.map((event) => event.id);
    const { rows } = await this.pool.query<{ event_id: string; stream_id: string; revision: string; position: string }>(
      'select event_id, stream_id, revision, position from events where event_id = any($1::uuid[]) order by position',
      [ids],
    );
    const sameAppend =
      rows.length === ids.length &&
      rows.every((row, index) => row.stream_id === streamId && row.event_id === ids[index] && (index === 0 || BigInt(row.revision) === BigInt(rows[index - 1].revision) + 1n));
    if (!sameAppend) return undefined;
    const last = rows[rows.length - 1];
    return { nextExpectedRevision: BigInt(last.revision), position: BigInt(last.position) };
  }

  async readStream(streamId: string, options: ReadStreamOptions): Promise<RecordedEvent[]> {
    assertReadCount(options.maxCount);
    const backwards = options.direction === 'backwards';
    const params: unknown[] = [streamId, options.maxCount];
    let bound = '';
    if (options.fromRevision !== undefined) {
      params.push(options.fromRevision.toString());
      bound = backwards ? ' and revision <= $3' : ' and revision >= $3';
    }
    const rows = await this.query<EventRow>(`select ${COLUMNS} from events where stream_id = $1${bound} order by revision ${backwards ? 'desc' : 'asc'} limit $2`, params);
    return rows.map(toRecorded);
  }

  /**
   * Forwards reads (here and in readWindow) take the next rows by position first and apply the
   * visible bound (once, from the statement's snapshot as before) to that page afterwards. The
   * result is the same as bounding inside: invisible positions are all above every visible one, so
   * the visible rows of a page are a prefix of it.
   * The point is the plan: with both `position > $n` and `position < events_visible_bound()` in one
   * WHERE, PostgreSQL prices the pair as a narrow range (0.5 % of the table when it has no
   * statistics yet, e.g. a log just filled), and for a page larger than that estimate it picks a
   * bitmap scan plus a sort of every row after the cursor, several times slower on a fresh log.
   * The page-first form is an ordered index scan
   * whatever the statistics.
   */
  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    assertReadCount(options.maxCount);
    await this.untilOwnAppendsVisible();
    const backwards = options.direction === 'backwards';
    const params: unknown[] = [options.maxCount];
    let from = '';
    if (options.fromPosition !== undefined) {
      params.push(options.fromPosition.toString());
      from = backwards ? ` and position < $2` : ` and position > $2`;
    }
    const filter = filterSql(options.filter, params);
    const rows = await this.query<EventRow>(
      backwards
        ? `select ${COLUMNS} from events where position < events_visible_bound()${from}${filter} order by position desc limit $1`
        : `select ${COLUMNS} from (select ${TABLE_COLUMNS} from events where true${from}${filter} order by position limit $1) page
           where position < (select events_visible_bound()) order by position`,
      params,
    );
    return rows.map(toRecorded);
  }

  /**
   * Read-your-writes for reads of all streams: an append this store has acknowledged is in its next
   * readAll, as with EventStoreDB. The visible bound can sit below it for a moment while an older
   * transaction elsewhere in the cluster is still open, so the read waits, polling, until the bound
   * has passed it (normally a few milliseconds). A transaction held open for long would hold it
   * back: after READ_ALL_WAIT_MS the read returns what is visible, as subscriptions do.
   */
  private async untilOwnAppendsVisible(): Promise<void> {
    if (this.newestOwnAppend !== undefined) await this.untilVisible(this.newestOwnAppend);
  }

  /**
   * Waits (bounded by READ_ALL_WAIT_MS) until every event committed before the call, by any
   * process, is visible to reads of all streams. For tools and tests that read what another process
   * has just written; the service's own reads need only their own appends (readAll waits for those).
   */
  async untilCommittedVisible(): Promise<void> {
    const [{ committed }] = await this.query<{ committed: string | null }>('select max(position) as committed from events', []);
    if (committed !== null) await this.untilVisible(BigInt(committed));
  }

  private async untilVisible(position: bigint): Promise<void> {
    const deadline = performance.now() + READ_ALL_WAIT_MS;
    for (;;) {
      const [{ bound }] = await this.query<{ bound: string }>('select events_visible_bound() as bound', []);
      if (BigInt(bound) > position) {
        if (this.newestOwnAppend !== undefined && this.newestOwnAppend <= position) this.newestOwnAppend = undefined;
        return;
      }
      if (performance.now() >= deadline) return;
      await sleep(READ_ALL_POLL_MS);
    }
  }

  /**
   * One window of a subscription, in one statement: scans up to `scanRows` visible rows after
   * `from` and returns those that pass the filter, the last position scanned (so that a selective
   * filter does not rescan the same non-matching rows), whether the scan was cut by `scanRows`
   * (more to read at once), and whether committed rows lie beyond what was scanned (held back by
   * an older open transaction: poll again soon).
   */
  private async readWindow(from: bigint, scanRows: number, filter: EventFilter | undefined, live: boolean): Promise<Window> {
    if (!live) return this.queryWindow(from, scanRows, filter);
    const key = `${from}/${scanRows}`;
    let shared = this.windowsInFlight.get(key);
    if (shared === undefined) {
      shared = this.queryWindow(from, scanRows, undefined).finally(() => this.windowsInFlight.delete(key));
      this.windowsInFlight.set(key, shared);
    }
    const window = await shared;
    return filter === undefined ? window : { ...window, events: window.events.filter((event) => matchesFilter(event, filter)) };
  }

  /**
   * Catching up, a subscription reads its own windows, filtered in SQL. At the live edge the
   * subscriptions of this store reading from the same position at the same time (woken by the same
   * append, they all are) share one unfiltered query, and each keeps the events its filter passes.
   */
  private async queryWindow(from: bigint, scanRows: number, filter: EventFilter | undefined): Promise<Window> {
    const announcedBefore = this.announced;
    const params: unknown[] = [from.toString(), scanRows];
    const filterClause = filterSql(filter, params);
    const rows = await this.query<EventRow & { scanned_to: string | null; scanned: string | null; beyond: boolean | null }>(
      `with window_end as (
         select max(position) as scanned_to, count(*) as scanned from (
           select position from events where position > $1 order by position limit $2
         ) w where position < (select events_visible_bound())
       )
       select ${COLUMNS}, null::bigint as scanned_to, null::bigint as scanned, null::boolean as beyond from events
       where position > $1 and position <= (select scanned_to from window_end)${filterClause}
       union all
       select null, null, null, null, null, null, null, null, (select scanned_to from window_end), (select scanned from window_end),
         coalesce((select max(position) from events) > (select coalesce(scanned_to, $1::bigint) from window_end), false)
       order by position nulls last`,
      params,
    );
    const marker = rows.pop();
    const scannedTo = marker?.scanned_to ? BigInt(marker.scanned_to) : undefined;
    return { events: rows.map(toRecorded), scannedTo, full: Number(marker?.scanned ?? 0) >= scanRows, beyond: marker?.beyond === true, announcedBefore };
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    let cursor = options.fromPosition ?? 0n;
    let closed = false;
    let wake: (() => void) | undefined;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the subscription's generator below is a function of its own
    const store = this;

    const waitForEvents = (ms: number) =>
      new Promise<void>((resolveWait) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          store.wakers.delete(done);
          wake = undefined;
          resolveWait();
        }
        wake = done;
        store.wakers.add(done);
      });

    async function* iterate(): AsyncGenerator<RecordedEvent> {
      let backoffMs = 50;
      // Catching up until a window comes back short of full: the subscription is at the live edge.
      let live = false;
      let readStartedAt = 0;
      let readAhead: { readonly from: bigint; readonly window: Promise<Window> } | undefined;
      while (!closed && !store.closed) {
        let window: Window;
        // At the live edge, reads start at most LIVE_READ_SPACING_MS apart, however they were woken,
        // and on a grid of that step shared by the store's subscriptions, so that they read at the
        // same moments and share one query (readWindow) instead of each parsing the same events.
        const now = performance.now();
        if (live && now < readStartedAt + LIVE_READ_SPACING_MS) {
          await sleep(Math.ceil((readStartedAt + LIVE_READ_SPACING_MS) / LIVE_READ_SPACING_MS) * LIVE_READ_SPACING_MS - now);
        }
        if (closed || store.closed) return;
        readStartedAt = performance.now();
        try {
          await store.ensureListener();
          const ahead = readAhead;
          readAhead = undefined;
          window =
            ahead !== undefined && ahead.from === cursor
              ? await ahead.window
              : await store.readWindow(cursor, live ? SUBSCRIPTION_SCAN_ROWS : CATCH_UP_SCAN_ROWS, options.filter, live);
          backoffMs = 50;
        } catch (error) {
          if (closed || store.closed) return;
          if (!(error instanceof EventStoreUnavailableError) && !isConnectionError(error)) throw error;
          // The database is unreachable: keep the position and try again, with a bounded backoff.
          await sleep(backoffMs);
          backoffMs = Math.min(backoffMs * 2, RETRY_BACKOFF_MAX_MS);
          continue;
        }
        if (window.full && !closed) {
          // Catching up: read the next window while this one is delivered.
          const last = window.events.at(-1)?.position ?? cursor;
          const from = window.scannedTo !== undefined && window.scannedTo > last ? window.scannedTo : last;
          const next = store.readWindow(from, CATCH_UP_SCAN_ROWS, options.filter, false);
          // Awaited (and its failure handled) when the loop comes to it; never an unhandled rejection.
          next.catch(() => undefined);
          readAhead = { from, window: next };
        }
        for (const event of window.events) {
          if (event.position <= cursor) throw new Error(`invariant: subscription position went backwards (${event.position} after ${cursor})`);
          cursor = event.position;
          yield event;
          if (closed) return;
        }
        if (window.scannedTo !== undefined && window.scannedTo > cursor) cursor = window.scannedTo;
        live = !window.full;
        if (window.full) continue;
        // Appends announced after the window's query started are not in it: read again.
        if (store.announced !== window.announcedBefore) continue;
        // Caught up with what is visible. Wait for a notification, or re-poll soon when newer
        // events are committed but still held back by an older open transaction.
        await waitForEvents(window.beyond ? PENDING_POLL_MS : IDLE_POLL_MS);
      }
    }

    const generator = iterate();
    return {
      [Symbol.asyncIterator]: () => generator,
      close: async () => {
        closed = true;
        wake?.();
        await generator.return(undefined);
      },
    };
  }

  /** One LISTEN connection per store, shared by all its subscriptions; re-established after a drop. */
  private async ensureListener(): Promise<void> {
    if (this.listener !== undefined || this.closed) return;
    this.listenerConnecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.connectionString });
      // This store's own appends have woken its subscriptions already.
      client.on('notification', (message) => {
        if (message.payload !== this.instanceId) this.wakeAll();
      });
      client.on('error', () => {
        // Drop it; the next poll reconnects. Polling covers what is missed meanwhile.
        if (this.listener === client) this.listener = undefined;
        client.end().catch(() => undefined);
      });
      try {
        await client.connect();
        await client.query(`listen ${NOTIFY_CHANNEL}`);
        this.listener = client;
      } catch (error) {
        await client.end().catch(() => undefined);
        throw new EventStoreUnavailableError('cannot listen for new events', { cause: error });
      }
    })().finally(() => {
      this.listenerConnecting = undefined;
    });
    await this.listenerConnecting;
  }

  /**
   * After an append has committed: remembers its position for read-your-writes, wakes this store's
   * own subscriptions at once, and has other processes' woken by a NOTIFY within
   * NOTIFY_INTERVAL_MS. The NOTIFY is not sent inside the append's transaction: a notifying
   * transaction holds a database-wide lock through its commit, which made appends commit one at a
   * time (migration 1732250000008).
   */
  private appended(position: bigint): void {
    if (position > (this.newestOwnAppend ?? 0n)) this.newestOwnAppend = position;
    this.wakeAll();
    const now = performance.now();
    if (!this.closed && (this.floorWrittenAt === undefined || now - this.floorWrittenAt >= FLOOR_INTERVAL_MS)) {
      this.floorWrittenAt = now;
      // Best effort: the start-up check records the floor too.
      this.pool.query(prepared('update event_log_epoch set floor_position = $1 where floor_position < $1', [position.toString()])).catch(() => undefined);
    }
    if (this.notifyTimer === undefined && !this.closed) {
      this.notifyTimer = setTimeout(() => {
        this.notifyTimer = undefined;
        // Best effort: a lost notification costs the other processes at most their poll interval.
        this.pool.query(prepared(`select pg_notify('${NOTIFY_CHANNEL}', $1)`, [this.instanceId])).catch(() => undefined);
      }, NOTIFY_INTERVAL_MS);
      this.notifyTimer.unref();
    }
  }

  private wakeAll(): void {
    this.announced += 1;
    for (const wake of [...this.wakers]) wake();
  }

  async headPosition(): Promise<bigint> {
    const rows = await this.query<{ head: string | null }>('select max(position) as head from events where position < events_visible_bound()', []);
    return rows[0].head === null ? 0n : BigInt(rows[0].head);
  }

  async ping(): Promise<void> {
    await this.query('select 1 from events limit 0', []);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.notifyTimer);
    this.wakeAll();
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    await this.writeSessions.close();
  }

  /** Every read's text is fixed for its shape (direction, bounds, filter), so each is a prepared statement. */
  private async query<T extends pg.QueryResultRow>(text: string, params: unknown[]): Promise<T[]> {
    try {
      return (await this.pool.query<T>(prepared(text, params))).rows;
    } catch (error) {
      if (isConnectionError(error)) throw unreachable(error);
      throw error;
    }
  }
}
