/**
 * A wire-compatible EventStoreDB test server (test support only: never shipped or used in
 * production). It speaks EventStoreDB's gRPC protocol over plaintext HTTP/2 on a free loopback port,
 * using the service definitions and messages that `@eventstore/db-client` ships, so that the `esdb`
 * adapter runs over real gRPC with the real client in every `npm test`.
 *
 * Served: Streams.Append, Streams.Read (stream and $all, both directions, filtered and unfiltered,
 * catch-up subscriptions to $all and to a stream). ServerFeatures.GetSupportedMethods answers
 * UNIMPLEMENTED, as servers before 21.10 do, so the client uses plain Append rather than BatchAppend.
 * Everything else (Delete, Tombstone, BatchAppend, persistent subscriptions, projections, gossip,
 * users, operations) answers UNIMPLEMENTED. No TLS, no authentication, no ACLs, one node.
 *
 * Known differences from the real server (beyond what is not served):
 * - The log lives in memory; positions are byte-like offsets computed from a simplified record size,
 *   so their values (not their order or their meaning) differ from a real node's.
 * - Filter regexes are JavaScript RegExps, not .NET ones (filters.ts).
 * - Live subscription events are read from the log rather than pushed through a 32-event channel,
 *   so a slow subscriber never "falls behind" and re-reads; what it receives, and in what order, is
 *   the same. Checkpoints come every `window x multiplier` events considered, during catch-up counted
 *   per event rather than per 32-event page.
 * - The deprecated `expected_revision_20_6_0` of a no_stream wrong-expected-version answer is not set.
 * - Idempotent `any`/`stream_exists` appends remember the last COMMITTED_ID_CACHE_ENTRIES event ids
 *   (the real server bounds that cache by memory); like the real one, this is best effort.
 */
import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import { EventLog, type ProposedEvent } from './event-log.js';
import { StreamsHandlers } from './streams-service.js';

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
}

export interface EsdbTestServer {
  /** `esdb://127.0.0.1:<port>?tls=false` */
  readonly connectionString: string;
  readonly port: number;
  /** The in-memory log, for tests that inspect what was written. */
  readonly log: EventLog;
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

  const server = new grpc.Server();
  const streams = new StreamsHandlers(log);
  const unimplemented = (_call: unknown, callback: grpc.sendUnaryData<never>) =>
    callback({ code: grpc.status.UNIMPLEMENTED, details: 'not served by the EventStoreDB test server' });
  server.addService(streamsGrpc.StreamsService, {
    read: streams.read,
    append: streams.append,
    delete: unimplemented,
    tombstone: unimplemented,
    batchAppend: (call: grpc.ServerDuplexStream<unknown, unknown>) =>
      call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'not served by the EventStoreDB test server' }),
  });
  server.addService(serverFeaturesGrpc.ServerFeaturesService, { getSupportedMethods: unimplemented });

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
