/**
 * A wire-compatible EventStoreDB test server (test support only: never shipped or used in
 * production). It speaks EventStoreDB's gRPC protocol over plaintext HTTP/2 on a free loopback port,
 * using the service definitions and messages that `@eventstore/db-client` ships, so that the `esdb`
 * adapter runs over real gRPC with the real client in every `npm test`. It behaves as a KurrentDB 25
 * single node where the service can tell (read in kurrent-io/KurrentDB; see each file):
 *
 * - ServerFeatures answers as a 25.1 node (server-features.ts), so the client appends through
 *   Streams.BatchAppend, as it does in production; plain Append is served too.
 * - Streams: Read (stream and $all, both directions, filtered and unfiltered, catch-up
 *   subscriptions to $all and to a stream), Append, BatchAppend, Delete (soft) and Tombstone.
 * - Writes are checked against everything written; reads see only what the index has caught up
 *   with, `readLagMs` behind (event-log.ts). Appends are acknowledged once indexed, as by a leader,
 *   or at once (`acknowledge: 'written'`, as reads from a follower see them).
 * - Deadlines: gRPC deadlines end a call (grpc-js), a request cancelled before its write is
 *   dropped, a batch append's deadline is cut to the node's 2 s write timeout, and a write that
 *   waits more than 2 s (a slow writer: `writeDelayMs`) is answered "timed out" while it still lands.
 *   A test can make appends commit and still time out (`failAppends`), through the control.
 * - Stream metadata `$maxCount`, `$maxAge`, `$tb` limit stream reads, not $all; soft delete and
 *   tombstone as a node does them; a scavenge (a control call) removes from $all what no read returns.
 * - The log starts with what a fresh node writes (epoch, default users, stats), so the first user
 *   event sits well past position 0; positions are byte offsets; a filtered subscription's catch-up
 *   checkpoints carry (commit, 0) positions as a node's do.
 *
 * Not served: persistent subscriptions, projections, users, operations, gossip, monitoring (listed
 * by ServerFeatures as a node lists them, answering UNIMPLEMENTED when called). No TLS, no
 * authentication, no ACLs, one node: no elections, no follower reads beyond the acknowledgement mode.
 *
 * Known differences from the real server (beyond what is not served):
 * - The log lives in memory; positions are byte-like offsets computed from a simplified record size,
 *   so their values (not their order or their meaning) differ from a real node's.
 * - Filter regexes are JavaScript RegExps, not .NET ones (filters.ts).
 * - Live subscription events are read from the log rather than pushed through a 32-event channel,
 *   so a slow subscriber never "falls behind" and re-reads; what it receives, and in what order, is
 *   the same.
 * - The deprecated `expected_revision_20_6_0` of a no_stream wrong-expected-version answer is not set.
 * - Idempotent `any`/`stream_exists` appends remember the last COMMITTED_ID_CACHE_ENTRIES event ids
 *   (the real server bounds that cache by memory); like the real one, this is best effort.
 * - A fault's timeout (`failAppends`) is answered at once, not after the node's 2 s timeout.
 * - Deleting or tombstoning a tombstoned stream answers "stream deleted"; a scavenge keeps the newest
 *   event of every stream that is not tombstoned, and runs at once (a node's runs in the background).
 */
import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import { type EsdbTestServerControl, localControl } from './control.js';
import { EventLog, type ProposedEvent } from './event-log.js';
import { NodeBehaviour, type NodeSettings } from './node-behaviour.js';
import { supportedMethods } from './server-features.js';
import { StreamsHandlers } from './streams-service.js';
import type { WritesServed } from './streams-writes.js';

export interface EsdbTestServerOptions {
  /**
   * How often a `$statsCollected` event is written to the `$stats-…` system stream, as a real node
   * does every 30 s by default: system events then interleave with live ones. 0 turns it off.
   */
  readonly statsIntervalMs?: number;
  /** Serve on this port (a restart of a stopped server); default: a free one. */
  readonly port?: number;
  /** Serve this log (a restart keeps what was written); default: a fresh node's. */
  readonly log?: EventLog;
  /** How the node behaves at start (default: reads at once, acknowledged once indexed, no delay); the control changes it later. */
  readonly settings?: Partial<NodeSettings>;
}

export interface EsdbTestServer {
  /** `esdb://127.0.0.1:<port>?tls=false` */
  readonly connectionString: string;
  readonly port: number;
  /** The in-memory log, for tests that inspect what was written. */
  readonly log: EventLog;
  /** Switches the node's behaviour while it runs (control.ts). */
  readonly control: EsdbTestServerControl;
  /** Writes served so far, by gRPC method (which append path clients take). */
  readonly served: Readonly<WritesServed>;
  stop(): Promise<void>;
}

const DEFAULT_STATS_INTERVAL_MS = 1_000;
const STATS_STREAM = '$stats-127.0.0.1:2113';
const SHUTDOWN_GRACE_MS = 1_000;

function systemEvent(type: string, data: unknown): ProposedEvent {
  return {
    id: randomUUID(),
    type,
    isJson: true,
    data: Buffer.from(JSON.stringify(data), 'utf8'),
    metadata: new Uint8Array(),
  };
}

/** What a freshly started single node writes before anyone connects (epoch, default users, stats stream metadata). */
function writeSystemEvents(log: EventLog): void {
  log.append('$epoch-information', { kind: 'any' }, [systemEvent('$epoch', { epochNumber: 0, epochPosition: 0, epochId: randomUUID() })]);
  log.append('$users', { kind: 'any' }, [systemEvent('$User', 'admin')]);
  log.append('$user-admin', { kind: 'any' }, [systemEvent('$UserCreated', { loginName: 'admin', fullName: 'Event Store Administrator', groups: ['$admins'] })]);
  log.append('$users', { kind: 'any' }, [systemEvent('$User', 'ops')]);
  log.append('$user-ops', { kind: 'any' }, [systemEvent('$UserCreated', { loginName: 'ops', fullName: 'Event Store Operations', groups: ['$ops'] })]);
  log.append(`$$${STATS_STREAM}`, { kind: 'any' }, [systemEvent('$metadata', { $maxAge: 86_400 })]);
  writeStats(log);
}

function writeStats(log: EventLog): void {
  log.append(STATS_STREAM, { kind: 'any' }, [systemEvent('$statsCollected', { 'proc-startTime': new Date().toISOString(), 'proc-mem': process.memoryUsage().rss })]);
}

export async function startEsdbTestServer(options: EsdbTestServerOptions = {}): Promise<EsdbTestServer> {
  const log = options.log ?? new EventLog();
  if (options.log === undefined) writeSystemEvents(log);

  const node = new NodeBehaviour(log, options.settings);
  const server = new grpc.Server();
  const streams = new StreamsHandlers(log, node);
  server.addService(streamsGrpc.StreamsService, {
    read: streams.read,
    append: streams.append,
    batchAppend: streams.batchAppend,
    delete: streams.delete,
    tombstone: streams.tombstone,
  });
  server.addService(serverFeaturesGrpc.ServerFeaturesService, {
    getSupportedMethods: (_call: unknown, callback: grpc.sendUnaryData<unknown>) => callback(null, supportedMethods()),
  });

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`127.0.0.1:${options.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (error, boundPort) => (error ? reject(error) : resolve(boundPort)));
  });

  const statsIntervalMs = options.statsIntervalMs ?? DEFAULT_STATS_INTERVAL_MS;
  const statsTimer = statsIntervalMs > 0 ? setInterval(() => writeStats(log), statsIntervalMs) : undefined;
  statsTimer?.unref();

  let stopped: Promise<void> | undefined;
  return {
    connectionString: `esdb://127.0.0.1:${port}?tls=false`,
    port,
    log,
    control: localControl(log, node),
    served: streams.served,
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        if (statsTimer !== undefined) clearInterval(statsTimer);
        // Subscriptions never end by themselves: give unary calls a moment, then cancel the rest.
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, SHUTDOWN_GRACE_MS);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      return stopped;
    },
  };
}
