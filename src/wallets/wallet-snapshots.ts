import { Inject, Injectable } from '@nestjs/common';
import { Map as ImmutableMap } from 'immutable';
import type pg from 'pg';
import { PG_POOL } from '../database/pool.js';
import { prepared } from '../database/prepared.js';
import type { JsonObject, JsonValue } from '../event-store/event-store.port.js';
import { availableKobo, isKoboAmount, isWalletReference, type WalletState } from './wallet.decider.js';
import type { WalletId } from './wallet-ledger.port.js';

/**
 * Version 2 stores each funding reference with its amount (version 1 had the references alone). A
 * snapshot of another version is not read: the stream is folded from the start and snapshotted afresh.
 */
const SNAPSHOT_VERSION = 2;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * A wallet stream folded up to `revision`, as the ledger holds it in memory: the write side's cache,
 * never a fact. `link` is the chain hash the event at `revision` carries (wallet-chain.ts): it
 * covers that event's id and content and every event before it, so a snapshot is used only where
 * the stream's event at `revision` carries the same hash, and a snapshot of another history (a log
 * restored or replaced under the same stream id) is never taken for this one.
 */
export interface WalletSnapshot {
  readonly streamId: string;
  readonly revision: bigint;
  readonly link: string;
  readonly state: WalletState;
}

/** Where the wallet ledger keeps its snapshots: one per wallet stream, the newest. */
export abstract class WalletSnapshots {
  /** The wallet's snapshot, or undefined when it has none (or one this code cannot read). */
  abstract load(streamId: string, wallet: WalletId): Promise<WalletSnapshot | undefined>;
  /** Keeps `snapshot` unless the wallet has one of a later revision in the same format. */
  abstract save(snapshot: WalletSnapshot): Promise<void>;
  /** Drops the wallet's snapshot if it is still the one with `link` (found not to match its stream). */
  abstract discard(streamId: string, link: string): Promise<void>;
}

/** The folded state as stored: plain JSON, maps and sets as arrays. */
export function stateToJson(state: WalletState): JsonObject {
  return {
    version: SNAPSHOT_VERSION,
    fundedKobo: state.fundedKobo,
    debitedKobo: state.debitedKobo,
    reservedKobo: state.reservedKobo,
    reservations: [...state.reservations].map(([reference, amountKobo]) => [reference, amountKobo]),
    fundingReferences: [...state.fundingReferences].map(([reference, amountKobo]) => [reference, amountKobo]),
  };
}

/**
 * The state of `wallet` stored by stateToJson, or undefined when it is not one: another version,
 * a wrong type, or totals that break the wallet's rules (the reserved total is not the sum of the
 * open reservations, or the available balance is negative). Such a snapshot is ignored, not trusted.
 */
export function stateFromJson(json: JsonValue, wallet: WalletId): WalletState | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json) || json.version !== SNAPSHOT_VERSION) return undefined;
  const { fundedKobo, debitedKobo, reservedKobo, reservations, fundingReferences } = json;
  if (!isKoboAmount(fundedKobo) || !isKoboAmount(debitedKobo) || !isKoboAmount(reservedKobo) || !Array.isArray(reservations) || !Array.isArray(fundingReferences)) return undefined;
  const open = new Map<string, number>();
  let openKobo = 0;
  for (const entry of reservations) {
    if (!Array.isArray(entry) || entry.length !== 2 || !isWalletReference(entry[0]) || !isKoboAmount(entry[1]) || open.has(entry[0])) return undefined;
    open.set(entry[0], entry[1]);
    openKobo += entry[1];
  }
  const credited = new Map<string, number>();
  for (const entry of fundingReferences) {
    if (!Array.isArray(entry) || entry.length !== 2 || !isWalletReference(entry[0]) || !isKoboAmount(entry[1]) || credited.has(entry[0])) return undefined;
    credited.set(entry[0], entry[1]);
  }
  const state: WalletState = {
    organizationId: wallet.organizationId,
    environment: wallet.environment,
    fundedKobo,
    debitedKobo,
    reservedKobo,
    reservations: ImmutableMap(open),
    fundingReferences: ImmutableMap(credited),
  };
  return openKobo === reservedKobo && Number.isSafeInteger(availableKobo(state)) && availableKobo(state) >= 0 ? state : undefined;
}

/** Snapshots in PostgreSQL (`wallet_snapshots`), beside the read models, on both event stores. */
@Injectable()
export class PostgresWalletSnapshots extends WalletSnapshots {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {
    super();
  }

  async load(streamId: string, wallet: WalletId): Promise<WalletSnapshot | undefined> {
    const { rows } = await this.pool.query<{ revision: string; link: string; state: JsonValue }>(
      prepared('select revision, link, state from wallet_snapshots where stream_id = $1', [streamId]),
    );
    const row = rows[0];
    if (row === undefined || !HEX_SHA256.test(row.link)) return undefined;
    const state = stateFromJson(row.state, wallet);
    return state === undefined ? undefined : { streamId, revision: BigInt(row.revision), link: row.link, state };
  }

  async save(snapshot: WalletSnapshot): Promise<void> {
    await this.pool.query(
      prepared(
        `insert into wallet_snapshots (stream_id, revision, link, state) values ($1, $2, $3, $4)
         on conflict (stream_id) do update set revision = excluded.revision, link = excluded.link, state = excluded.state, saved_at = now()
         where wallet_snapshots.revision < excluded.revision or wallet_snapshots.state->'version' is distinct from excluded.state->'version'`,
        [snapshot.streamId, snapshot.revision.toString(), snapshot.link, JSON.stringify(stateToJson(snapshot.state))],
      ),
    );
  }

  async discard(streamId: string, link: string): Promise<void> {
    await this.pool.query(prepared('delete from wallet_snapshots where stream_id = $1 and link = $2', [streamId, link]));
  }
}
