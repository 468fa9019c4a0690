import { Worker } from 'node:worker_threads';
import type { JsonObject } from '../event-store/event-store.port.js';
import { COPY_FIELDS, copyText, cutCopyRow, type CopyRowsSidecar } from '../event-store/postgres-stream-pages.js';
import { chainHash } from '../wallets/wallet-chain.js';
import { claimedHashOfCopyRow } from './jsonb-canonical.js';

/**
 * The expensive half of the chain's verification, the canonical form and SHA-256 of each event,
 * done on a worker thread while the main thread decodes, folds and writes the entries: on a 2-core
 * machine the two halves then take a core each (see docs/audit.md).
 *
 * For each COPY row of a wallet stream (the columns `postgresStreamCopy` selects), the worker
 * computes the hash the event's stored link claims: `chainHash(metadata.chain.previous, event)`.
 * The replay takes it as the computed hash only where its own check would compute exactly that one,
 * an event whose stored `previous` is the link the replay holds; every other case (no chain,
 * a malformed one, a broken link) is decided in the replay, as without the worker.
 */

/** Hex digits per answer: a SHA-256 digest. */
export const CHAIN_HASH_WIDTH = 64;
/** The answer for a row whose stored link has no `previous` string (or whose content cannot be hashed): never a hex digest. */
export const NOT_COMPUTED = '-'.repeat(CHAIN_HASH_WIDTH);

/**
 * The claimed-link hashes of a run of COPY rows (their bytes), 64 characters per row in row order.
 * Each row is hashed from its bytes where the transcoder handles it (jsonb-canonical.ts), else
 * decoded and parsed as the COPY reader decodes it; one that does not decode gets NOT_COMPUTED
 * (the reader, which decodes the same bytes, then reports it).
 */
export function copyRowChainHashes(streamId: string, rows: Uint8Array): string {
  const bytes = Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength);
  const quotedStreamId = Buffer.from(JSON.stringify(streamId), 'utf8');
  const fields = new Array<string>(COPY_FIELDS);
  let out = '';
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end < 0) throw new Error('invariant: a run of COPY rows ends inside a row');
    let claimed = claimedHashOfCopyRow(bytes, start, end, quotedStreamId);
    if (claimed === undefined) {
      // The row alone decodes as it does within the run: a newline byte is never part of a UTF-8 sequence.
      cutCopyRow(bytes.toString('utf8', start, end + 1), 0, fields);
      claimed = claimedHash(streamId, fields);
    }
    out += claimed;
    start = end + 1;
  }
  return out;
}

const NEWLINE = 0x0a;

function claimedHash(streamId: string, fields: readonly string[]): string {
  try {
    const metadata = JSON.parse(copyText(fields[5])) as JsonObject;
    const chain = metadata.chain;
    if (typeof chain !== 'object' || chain === null || Array.isArray(chain) || typeof chain.previous !== 'string') return NOT_COMPUTED;
    return chainHash(chain.previous, {
      streamId,
      revision: BigInt(fields[1]),
      id: fields[2],
      type: copyText(fields[3]),
      data: JSON.parse(copyText(fields[4])) as JsonObject,
      metadata,
    });
  } catch {
    // The replay hashes this event itself, and meets the same failure there.
    return NOT_COMPUTED;
  }
}

interface Waiting {
  readonly resolve: (hashes: string) => void;
  readonly reject: (error: Error) => void;
}

/** A message to the worker: one run of whole COPY rows of a stream, at the start of a buffer moved to it. */
export interface ChainHashRequest {
  readonly streamId: string;
  readonly rows: Uint8Array;
}

/** The worker's answer: the hashes, and the request's buffer moved back for the next run. */
export interface ChainHashAnswer {
  readonly hashes: string;
  readonly buffer: ArrayBuffer;
}

/** The smallest buffer made for runs of rows (the reader sends 128 KiB or more at a time). */
const MIN_RUN_BUFFER_BYTES = 1 << 20;
/** Buffers kept for reuse: the runs in flight (about three pages of rows) fit in a few. */
const MAX_SPARE_BUFFERS = 8;

/**
 * The worker thread, as the COPY reader's sidecar. Answers come back in the order of the requests.
 * `entry` is the built worker module (`chain-hash-worker.js` beside this file by default).
 *
 * Each run of rows is copied into a buffer that is moved to the worker and moved back with the
 * answer, then reused: a fresh buffer per run costs the main thread a noticeable share of its time
 * (large allocations are mapped, faulted in and unmapped each time).
 */
export class ChainHashWorker implements CopyRowsSidecar {
  readonly width = CHAIN_HASH_WIDTH;
  private readonly worker: Worker;
  private readonly waiting: Waiting[] = [];
  private readonly spare: ArrayBuffer[] = [];
  private failure: Error | undefined;

  constructor(entry: URL = new URL('./chain-hash-worker.js', import.meta.url)) {
    this.worker = new Worker(entry);
    this.worker.on('message', ({ hashes, buffer }: ChainHashAnswer) => {
      if (this.spare.length < MAX_SPARE_BUFFERS) this.spare.push(buffer);
      this.waiting.shift()?.resolve(hashes);
    });
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the chain hash worker stopped (exit code ${code})`)));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.waiting.splice(0)) waiting.reject(this.failure);
  }

  submit(streamId: string, rows: Uint8Array): Promise<string> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise<string>((resolve, reject) => {
      const index = this.spare.findIndex((buffer) => buffer.byteLength >= rows.length);
      const buffer = index >= 0 ? this.spare.splice(index, 1)[0] : new ArrayBuffer(Math.max(MIN_RUN_BUFFER_BYTES, rows.length));
      const moved = new Uint8Array(buffer, 0, rows.length);
      moved.set(rows);
      this.waiting.push({ resolve, reject });
      const request: ChainHashRequest = { streamId, rows: moved };
      this.worker.postMessage(request, [buffer]);
    });
  }

  async close(): Promise<void> {
    this.failure ??= new Error('the chain hash worker was closed');
    await this.worker.terminate();
  }
}

/** The same sidecar in the calling thread (tests, and a check of the worker's answers). */
export const IN_THREAD_CHAIN_HASHES: CopyRowsSidecar = {
  width: CHAIN_HASH_WIDTH,
  submit: async (streamId, rows) => copyRowChainHashes(streamId, rows),
};
