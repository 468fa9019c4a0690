import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type pg from 'pg';
import { prepared } from '../database/prepared.js';
import type { EventStore, JsonObject, JsonValue } from '../event-store/event-store.port.js';
import { canonicalJson, checkLink, linkAfter, storedLink } from '../wallets/wallet-chain.js';
import type { EntryTotals, EntryType, LogProblem, OpenReservation, ReplayState } from './wallet-replay.js';

/**
 * History checkpoints: the wallet replay's running state (ReplayState, wallet-replay.ts) every `every` events of a
 * wallet stream, in PostgreSQL (`wallet_history_checkpoints`, on both event stores), so that a page
 * of `GET …/history` replays from the nearest one instead of from revision 0.
 *
 * A checkpoint is a cache, never a fact, and is trusted only when both hold:
 *  - its MAC (HMAC-SHA-256 under a key derived from the master key) matches: the row is one this
 *    service wrote, figures included, not one edited in the database;
 *  - the log still carries the history it was taken on: the event at its revision, hashed with the
 *    checkpoint's previous link, gives the checkpoint's link (and the event's stored link says so).
 *    That link covers the event and, through the chain, every event before it.
 * A checkpoint that fails either is not used: the replay starts from an earlier one that holds (or
 * revision 0) and writes the checkpoints it passes afresh, over the bad ones.
 */

const FORMAT_VERSION = 1;
const HEX_SHA256 = /^[0-9a-f]{64}$/;
const ENTRY_TYPES: readonly EntryType[] = ['funding', 'reservation', 'debit', 'release'];
/** Candidates read per query while looking for one that holds. */
const CANDIDATES_PER_READ = 16;
/** Checkpoints written per statement. */
const SAVE_BATCH = 200;

const OVERWRITE = 'do update set entries = excluded.entries, latest_occurred_at = excluded.latest_occurred_at, state = excluded.state, mac = excluded.mac, saved_at = now()';

export const HISTORY_CHECKPOINT_KEY_INFO = 'ivl wallet-history-checkpoint/1';

/** The MAC key: HKDF-SHA-256 of the master key, for this use only (a master key rotation makes every checkpoint unusable: they are rebuilt). */
export function historyCheckpointKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), HISTORY_CHECKPOINT_KEY_INFO, 32));
}

function problemToJson(problem: LogProblem): JsonObject {
  return { revision: problem.revision, position: problem.position, eventId: problem.eventId, kind: problem.kind, message: problem.message };
}

export function stateToJson(state: ReplayState): JsonObject {
  return {
    version: FORMAT_VERSION,
    revision: state.revision.toString(),
    position: state.position.toString(),
    linkBefore: state.linkBefore,
    link: state.link,
    chainStarted: state.chainStarted,
    hashedEvents: state.hashedEvents,
    unhashedEvents: state.unhashedEvents,
    hashedFromRevision: state.hashedFromRevision?.toString() ?? null,
    firstBreak: state.firstBreak === null ? null : problemToJson(state.firstBreak),
    breaks: state.breaks,
    fundedKobo: state.fundedKobo,
    debitedKobo: state.debitedKobo,
    reservedKobo: state.reservedKobo,
    open: state.open.map((reservation) => ({
      reference: reservation.reference,
      amountKobo: reservation.amountKobo,
      scope: reservation.scope,
      reservedAt: reservation.reservedAt.toISOString(),
      revision: reservation.revision.toString(),
    })),
    totals: Object.fromEntries(ENTRY_TYPES.map((type) => [type, { count: state.totals[type].count, amountKobo: state.totals[type].amountKobo }])),
    entries: state.entries,
    ledgerProblems: state.ledgerProblems.map(problemToJson),
    ledgerProblemCount: state.ledgerProblemCount,
    latestOccurredAt: state.latestOccurredAt.toISOString(),
  };
}

class Unreadable extends Error {}

function object(value: JsonValue | undefined): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Unreadable();
  return value;
}
function count(value: JsonValue | undefined): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Unreadable();
  return value;
}
/** Reserved (and so the other figures) can go below zero in a log that breaks the ledger's rules: the replay reports it and carries on. */
function integer(value: JsonValue | undefined): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new Unreadable();
  return value;
}
function string(value: JsonValue | undefined): string {
  if (typeof value !== 'string') throw new Unreadable();
  return value;
}
function bigintOf(value: JsonValue | undefined): bigint {
  const text = string(value);
  if (!/^\d{1,19}$/.test(text)) throw new Unreadable();
  return BigInt(text);
}
function dateOf(value: JsonValue | undefined): Date {
  const date = new Date(string(value));
  if (Number.isNaN(date.getTime())) throw new Unreadable();
  return date;
}
function problemOf(value: JsonValue | undefined): LogProblem {
  const json = object(value);
  return {
    revision: string(json.revision),
    position: string(json.position),
    eventId: string(json.eventId),
    kind: string(json.kind) as LogProblem['kind'],
    message: string(json.message),
  };
}
function list(value: JsonValue | undefined): JsonValue[] {
  if (!Array.isArray(value)) throw new Unreadable();
  return value;
}

/** The state stored by stateToJson, or undefined when it is not one (another format version, a wrong shape). */
export function stateFromJson(value: JsonValue): ReplayState | undefined {
  try {
    const json = object(value);
    if (json.version !== FORMAT_VERSION) return undefined;
    const totalsJson = object(json.totals);
    const totals = Object.fromEntries(
      ENTRY_TYPES.map((type): [EntryType, EntryTotals] => {
        const entry = object(totalsJson[type]);
        return [type, { count: count(entry.count), amountKobo: count(entry.amountKobo) }];
      }),
    ) as Record<EntryType, EntryTotals>;
    const link = string(json.link);
    const linkBefore = string(json.linkBefore);
    if (!HEX_SHA256.test(link) || !HEX_SHA256.test(linkBefore) || typeof json.chainStarted !== 'boolean') return undefined;
    return {
      revision: bigintOf(json.revision),
      position: bigintOf(json.position),
      linkBefore,
      link,
      chainStarted: json.chainStarted,
      hashedEvents: count(json.hashedEvents),
      unhashedEvents: count(json.unhashedEvents),
      hashedFromRevision: json.hashedFromRevision === null ? null : bigintOf(json.hashedFromRevision),
      firstBreak: json.firstBreak === null ? null : problemOf(json.firstBreak),
      breaks: count(json.breaks),
      fundedKobo: count(json.fundedKobo),
      debitedKobo: count(json.debitedKobo),
      reservedKobo: integer(json.reservedKobo),
      open: list(json.open).map((item): OpenReservation => {
        const reservation = object(item);
        return {
          reference: string(reservation.reference),
          amountKobo: count(reservation.amountKobo),
          scope: reservation.scope === null ? null : string(reservation.scope),
          reservedAt: dateOf(reservation.reservedAt),
          revision: bigintOf(reservation.revision),
        };
      }),
      totals,
      entries: count(json.entries),
      ledgerProblems: list(json.ledgerProblems).map(problemOf),
      ledgerProblemCount: count(json.ledgerProblemCount),
      latestOccurredAt: dateOf(json.latestOccurredAt),
    };
  } catch (error) {
    if (error instanceof Unreadable) return undefined;
    throw error;
  }
}

/** The MAC binds the state to its stream: a checkpoint copied to another wallet's stream does not verify. */
export function checkpointMac(key: Buffer, streamId: string, state: JsonObject): string {
  // Canonical JSON (keys sorted): the MAC survives jsonb's reordering of the stored object.
  return createHmac('sha256', key).update(`${HISTORY_CHECKPOINT_KEY_INFO}\n${streamId}\n`).update(canonicalJson(state)).digest('hex');
}

/**
 * Whether the log still carries the history a checkpoint was taken on: the event at its revision
 * links onto the checkpoint's previous link and its content hashes to the checkpoint's link. On a
 * match, the state comes back with the position the log gives that event now (positions are not
 * hashed and move when a log is copied to another cluster).
 */
export async function matchLog(store: EventStore, streamId: string, state: ReplayState): Promise<ReplayState | undefined> {
  const [event] = await store.readStream(streamId, { direction: 'forwards', fromRevision: state.revision, maxCount: 1 });
  if (event === undefined || event.revision !== state.revision) return undefined;
  const check = checkLink(state.linkBefore, event, false);
  const stored = storedLink(event.metadata);
  // A hashed event: its previous link and its content check out, and its hash is the checkpoint's link.
  // An event written before the chain (none hashed before it): its computed hash is the checkpoint's link.
  const holds =
    check.status === 'hashed'
      ? typeof stored === 'object' && stored.hash === state.link
      : check.status === 'unhashed' && !state.chainStarted && linkAfter(state.linkBefore, event) === state.link;
  return holds ? { ...state, position: event.position } : undefined;
}

export interface CheckpointQuery {
  /** Only checkpoints with at most this many entries up to them (the page's first entry index). */
  readonly maxEntries?: number;
  /** Only checkpoints whose events all occurred at or before this moment. */
  readonly asOf?: Date;
}

export interface CheckpointLookup {
  /** The newest checkpoint that holds, or undefined: replay from revision 0. */
  readonly state: ReplayState | undefined;
  /** The revisions of the checkpoints found not to hold on the way (written afresh by the replay that passes them). */
  readonly rejected: readonly bigint[];
}

interface CheckpointRow {
  readonly revision: string;
  readonly state: JsonValue;
  readonly mac: string;
}

/** Checkpoints in PostgreSQL: written and read by the history pages (wallet-history.ts). */
export class HistoryCheckpoints {
  constructor(
    private readonly pool: pg.Pool,
    private readonly key: Buffer,
  ) {
    if (key.length !== 32) throw new RangeError('the checkpoint key is 32 bytes');
  }

  /**
   * The newest checkpoint of the stream that meets `query` and holds (its MAC and the log), looking
   * further back past each one that does not. The filter columns are copies of the MACed state and
   * are checked against it, so an edited column can only hide a checkpoint, never make a wrong one count.
   */
  async newest(store: EventStore, streamId: string, query: CheckpointQuery): Promise<CheckpointLookup> {
    const rejected: bigint[] = [];
    let below: string | null = null;
    // Both columns grow with the revision: ordered by the one filtered on, the search starts at the boundary (an index)
    // instead of walking back from the newest checkpoint.
    const order = query.maxEntries !== undefined ? 'entries desc, revision desc' : query.asOf !== undefined ? 'latest_occurred_at desc, revision desc' : 'revision desc';
    for (;;) {
      const { rows }: { rows: CheckpointRow[] } = await this.pool.query<CheckpointRow>(
        prepared(
          `select revision, state, mac from wallet_history_checkpoints
           where stream_id = $1 and ($2::bigint is null or entries <= $2) and ($3::timestamptz is null or latest_occurred_at <= $3) and ($4::bigint is null or revision < $4)
           order by ${order} limit ${CANDIDATES_PER_READ}`,
          [streamId, query.maxEntries ?? null, query.asOf?.toISOString() ?? null, below],
        ),
      );
      for (const row of rows) {
        const state = this.verified(streamId, row, query);
        const matched = state === undefined ? undefined : await matchLog(store, streamId, state);
        if (matched !== undefined) return { state: matched, rejected };
        rejected.push(BigInt(row.revision));
      }
      if (rows.length < CANDIDATES_PER_READ) return { state: undefined, rejected };
      below = (rows.at(-1) as CheckpointRow).revision;
    }
  }

  private verified(streamId: string, row: CheckpointRow, query: CheckpointQuery): ReplayState | undefined {
    if (typeof row.state !== 'object' || row.state === null || Array.isArray(row.state) || !HEX_SHA256.test(row.mac)) return undefined;
    const expected = Buffer.from(checkpointMac(this.key, streamId, row.state), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(row.mac, 'hex'))) return undefined;
    const state = stateFromJson(row.state);
    if (state === undefined || state.revision.toString() !== row.revision) return undefined;
    if (query.maxEntries !== undefined && state.entries > query.maxEntries) return undefined;
    if (query.asOf !== undefined && state.latestOccurredAt > query.asOf) return undefined;
    return state;
  }

  /**
   * Writes the checkpoints a replay took (it has just verified every event up to them) where the
   * table has none, and over the rows at `overwrite` (found not to hold). Other rows are left as
   * they are: they are checked whenever they are about to be used. Returns the rows written.
   */
  async save(streamId: string, states: readonly ReplayState[], overwrite: readonly bigint[] = []): Promise<number> {
    const replace = new Set(overwrite);
    let written = 0;
    for (const [conflict, subset] of [
      ['do nothing', states.filter((state) => !replace.has(state.revision))],
      [OVERWRITE, states.filter((state) => replace.has(state.revision))],
    ] as const) {
      written += await this.insert(streamId, subset, conflict);
    }
    return written;
  }

  /**
   * Writes the state at the end of a replay (a revision between two regular checkpoints) and drops
   * the earlier such rows of the stream: one tail checkpoint per stream, the newest.
   */
  async saveTail(streamId: string, state: ReplayState, every: number): Promise<number> {
    await this.pool.query(
      prepared('delete from wallet_history_checkpoints where stream_id = $1 and revision < $2 and (revision + 1) % $3 <> 0', [streamId, state.revision.toString(), every]),
    );
    return this.insert(streamId, [state], OVERWRITE);
  }

  private async insert(streamId: string, states: readonly ReplayState[], conflict: string): Promise<number> {
    let written = 0;
    for (let start = 0; start < states.length; start += SAVE_BATCH) {
      const batch = states.slice(start, start + SAVE_BATCH).map((state) => {
        const json = stateToJson(state);
        return {
          revision: state.revision.toString(),
          entries: state.entries,
          latestOccurredAt: state.latestOccurredAt.toISOString(),
          state: json,
          mac: checkpointMac(this.key, streamId, json),
        };
      });
      const result = await this.pool.query(
        prepared(
          `insert into wallet_history_checkpoints (stream_id, revision, entries, latest_occurred_at, state, mac)
           select $1, b.revision, b.entries, b.latest_occurred_at, b.state, b.mac
           from jsonb_to_recordset($2::jsonb) as b(revision bigint, entries bigint, latest_occurred_at timestamptz, state jsonb, mac text)
           on conflict (stream_id, revision) ${conflict}`,
          [
            streamId,
            JSON.stringify(batch.map((row) => ({ revision: row.revision, entries: row.entries, latest_occurred_at: row.latestOccurredAt, state: row.state, mac: row.mac }))),
          ],
        ),
      );
      written += result.rowCount ?? 0;
    }
    return written;
  }
}
