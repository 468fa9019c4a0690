import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import grpc from '@grpc/grpc-js';
import {
  BACKWARDS,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  jsonEvent,
  type Position,
  type ResolvedEvent,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { AppendResp, BatchAppendResp } from '@eventstore/db-client/generated/streams_pb.js';
import { Timestamp } from 'google-protobuf/google/protobuf/timestamp_pb.js';
import { DELETED_STREAM } from './event-log.js';
import { type EsdbTestServer, startEsdbTestServer } from './esdb-test-server.js';
import { REQUEST_TIMEOUT_MS } from './node-behaviour.js';

/*
 * What makes the test server behave as a KurrentDB node where a lenient server would let a test
 * pass that could fail in production: batch appends, index lag, deadlines and timed-out appends,
 * deletion and stream metadata, positions. One describe per item of the server's doc comment.
 */

const stream = (category: string) => `${category}-${randomUUID().replace(/-/g, '')}`;
const event = (type: string) => jsonEvent({ id: randomUUID(), type, data: { type }, metadata: { by: 'test' } });

async function all<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

const types = (events: readonly ResolvedEvent[]) => events.map((e) => e.event?.type);
const revisions = (events: readonly ResolvedEvent[]) => events.map((e) => e.event?.revision);

function startServer(settings: Parameters<typeof startEsdbTestServer>[0] = {}): { server: () => EsdbTestServer; client: () => EventStoreDBClient } {
  let server: EsdbTestServer | undefined;
  let client: EventStoreDBClient | undefined;
  beforeAll(async () => {
    server = await startEsdbTestServer({ statsIntervalMs: 0, ...settings });
    client = EventStoreDBClient.connectionString(server.connectionString);
  });
  afterAll(async () => {
    await client?.dispose();
    await server?.stop();
  });
  return { server: () => server as EsdbTestServer, client: () => client as EventStoreDBClient };
}

function streamsClient(port: number) {
  return new streamsGrpc.StreamsClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
}

/** One plain Append through the generated client (the path a client takes without BatchAppend), with a gRPC deadline. */
function rawAppend(port: number, streamId: string, deadlineMs = 10_000): Promise<AppendResp> {
  const client = streamsClient(port);
  return new Promise<AppendResp>((resolve, reject) => {
    const call = client.append({ deadline: Date.now() + deadlineMs }, (error, response) => {
      client.close();
      if (error !== null) reject(error);
      else resolve(response as AppendResp);
    });
    const options = new streamsPb.AppendReq.Options();
    const identifier = new sharedPb.StreamIdentifier();
    identifier.setStreamName(Buffer.from(streamId));
    options.setStreamIdentifier(identifier);
    options.setAny(new sharedPb.Empty());
    call.write(new streamsPb.AppendReq().setOptions(options));
    const message = new streamsPb.AppendReq.ProposedMessage();
    message.setId(new sharedPb.UUID().setString(randomUUID()));
    message.getMetadataMap().set('type', 'Raw');
    message.getMetadataMap().set('content-type', 'application/json');
    message.setData(Buffer.from('{}'));
    call.write(new streamsPb.AppendReq().setProposedMessage(message));
    call.end();
  });
}

/** One BatchAppend request with the given deadline; `final: false` leaves the append open. Answers the first response. */
function rawBatchAppend(port: number, streamId: string, deadline: Date, final = true): Promise<BatchAppendResp> {
  const client = streamsClient(port);
  const call = client.batchAppend();
  return new Promise<BatchAppendResp>((resolve, reject) => {
    call.on('data', (response: BatchAppendResp) => {
      call.end();
      client.close();
      resolve(response);
    });
    call.on('error', reject);
    const options = new streamsPb.BatchAppendReq.Options();
    const identifier = new sharedPb.StreamIdentifier();
    identifier.setStreamName(Buffer.from(streamId));
    options.setStreamIdentifier(identifier);
    options.setAny(new sharedPb.Empty());
    options.setDeadline(Timestamp.fromDate(deadline));
    const request = new streamsPb.BatchAppendReq();
    request.setCorrelationId(new sharedPb.UUID().setString(randomUUID()));
    request.setOptions(options);
    const message = new streamsPb.BatchAppendReq.ProposedMessage();
    message.setId(new sharedPb.UUID().setString(randomUUID()));
    message.getMetadataMap().set('type', 'Raw');
    message.getMetadataMap().set('content-type', 'application/json');
    message.setData(Buffer.from('{}'));
    request.addProposedMessages(message);
    request.setIsFinal(final);
    call.write(request);
  });
}

async function readOrMissing(client: EventStoreDBClient, id: string): Promise<ResolvedEvent[] | 'not found'> {
  try {
    return await all(client.readStream(id));
  } catch (error) {
    if (error instanceof StreamNotFoundError) return 'not found';
    throw error;
  }
}

describe('the index lag: reads see only indexed events', () => {
  const LAG_MS = 300;
  const node = startServer({ settings: { readLagMs: LAG_MS } });
  afterEach(async () => {
    await node.server().control.configure({ acknowledge: 'indexed' });
  });

  it('acknowledges once indexed, so a writer reads its own write; a writer refused meanwhile does not see the winner yet', async () => {
    const client = node.client();
    const id = stream('race');
    const started = Date.now();
    await client.appendToStream(id, event('Opened'), { expectedRevision: 'no_stream' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(LAG_MS - 20);
    expect(types(await all(client.readStream(id)))).toEqual(['Opened']);

    const winner = client.appendToStream(id, event('Won'), { expectedRevision: 0n });
    await sleep(50);
    // The writer checks against everything written: the loser is refused at once, with the winner's revision...
    const refused = await rejection(client.appendToStream(id, event('Lost'), { expectedRevision: 0n }));
    expect(refused).toBeInstanceOf(WrongExpectedVersionError);
    expect((refused as WrongExpectedVersionError).actualVersion).toBe(1n);
    // ... but what it reads right after is what the index holds: not yet the winner's event.
    expect(types(await all(client.readStream(id)))).toEqual(['Opened']);
    await winner;
    expect(types(await all(client.readStream(id)))).toEqual(['Opened', 'Won']);
  });

  it('acknowledged on write (as reads from a follower see it), a read right after the append misses it until the lag has passed', async () => {
    const client = node.client();
    await node.server().control.configure({ acknowledge: 'written' });
    const id = stream('follower');
    const started = Date.now();
    await client.appendToStream(id, event('Written'), { expectedRevision: 'no_stream' });
    expect(Date.now() - started).toBeLessThan(LAG_MS);
    expect(await readOrMissing(client, id)).toBe('not found');
    const [last] = await all(client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }));
    expect(last?.event?.streamId).not.toBe(id);
    for (;;) {
      const read = await readOrMissing(client, id);
      if (read !== 'not found') break;
      await sleep(20);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(LAG_MS - 20);
  });

  it('delivers a subscribed event only once it is indexed', async () => {
    const client = node.client();
    await node.server().control.configure({ acknowledge: 'written' });
    const id = stream('sub');
    const subscription = client.subscribeToStream(id, { fromRevision: START });
    await new Promise<void>((resolve) => subscription.once('confirmation', () => resolve()));
    const appended = Date.now();
    await client.appendToStream(id, event('Live'), { expectedRevision: 'no_stream' });
    for await (const resolved of subscription) {
      expect(resolved.event?.type).toBe('Live');
      expect(Date.now() - appended).toBeGreaterThanOrEqual(LAG_MS - 20);
      break;
    }
    await subscription.unsubscribe();
  });
});

describe('deadlines and appends that time out', () => {
  const node = startServer();
  afterEach(async () => {
    await node.server().control.configure({ writeDelayMs: 0 });
    await node.server().control.clearFaults();
  });

  it('answers a batch append whose deadline has passed "timed out", writing nothing', async () => {
    const id = stream('late');
    const response = await rawBatchAppend(node.server().port, id, new Date(Date.now() - 1_000));
    expect(response.getError()?.getDetails()?.getTypeName()).toBe('event_store.client.Timeout');
    expect(await readOrMissing(node.client(), id)).toBe('not found');
  });

  it('answers "timed out" a batch append whose last message does not come within the node write timeout', async () => {
    const id = stream('open');
    const started = Date.now();
    const response = await rawBatchAppend(node.server().port, id, new Date(Date.now() + 60_000), false);
    expect(response.getError()?.getDetails()?.getTypeName()).toBe('event_store.client.Timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(await readOrMissing(node.client(), id)).toBe('not found');
  });

  it('drops a plain append whose gRPC deadline passes before a slow writer writes it', async () => {
    await node.server().control.configure({ writeDelayMs: 400 });
    const id = stream('slow');
    const error = (await rejection(rawAppend(node.server().port, id, 100))) as grpc.ServiceError;
    expect(error.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    await sleep(600);
    expect(await readOrMissing(node.client(), id)).toBe('not found');
  });

  it('answers a write queued longer than the node 2 s timeout "timed out", and writes it all the same', async () => {
    await node.server().control.configure({ writeDelayMs: REQUEST_TIMEOUT_MS + 300 });
    const id = stream('queued');
    const error = await rejection(node.client().appendToStream(id, event('Late'), { expectedRevision: 'no_stream' }));
    expect(error).toBeInstanceOf(DeadlineExceededError);
    await sleep(500);
    expect(types((await readOrMissing(node.client(), id)) as ResolvedEvent[])).toEqual(['Late']);
  });

  it('commit-then-timeout: the append is written, the client is told it timed out (batch and plain paths alike)', async () => {
    const server = node.server();
    const id = stream('unknown');
    await server.control.failAppends({ outcome: 'commit-then-timeout', streamPrefix: id });
    const error = await rejection(node.client().appendToStream(id, event('Committed'), { expectedRevision: 'no_stream' }));
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(types((await readOrMissing(node.client(), id)) as ResolvedEvent[])).toEqual(['Committed']);
    // The fault was for one append: the next one is answered.
    expect((await node.client().appendToStream(id, event('Next'), { expectedRevision: 0n })).nextExpectedRevision).toBe(1n);

    await server.control.failAppends({ outcome: 'commit-then-timeout', streamPrefix: id });
    const plain = (await rejection(rawAppend(server.port, id))) as grpc.ServiceError;
    expect(plain.code).toBe(grpc.status.ABORTED);
    expect(plain.details).toMatch(/^Operation timed out/);
    expect((await all(node.client().readStream(id))).length).toBe(3);
  });

  it('timeout-without-commit: the same answer, nothing written; other streams are not affected', async () => {
    const server = node.server();
    const id = stream('lost');
    await server.control.failAppends({ outcome: 'timeout-without-commit', streamPrefix: id, count: 2 });
    const other = stream('other');
    expect((await node.client().appendToStream(other, event('Fine'), { expectedRevision: 'no_stream' })).success).toBe(true);
    expect(await rejection(node.client().appendToStream(id, event('Lost'), { expectedRevision: 'no_stream' }))).toBeInstanceOf(DeadlineExceededError);
    expect(await rejection(node.client().appendToStream(id, event('Lost'), { expectedRevision: 'no_stream' }))).toBeInstanceOf(DeadlineExceededError);
    expect(await readOrMissing(node.client(), id)).toBe('not found');
    expect(await server.control.clearFaults()).toBe(0);
  });
});

describe('appends that time out, by event type', () => {
  const node = startServer();

  it('a fault for an event type hits only the append that carries one', async () => {
    const id = stream('typed');
    await node.server().control.failAppends({ outcome: 'commit-then-timeout', eventType: 'Second' });
    expect((await node.client().appendToStream(id, event('First'), { expectedRevision: 'no_stream' })).nextExpectedRevision).toBe(0n);
    expect(await rejection(node.client().appendToStream(id, [event('Second'), event('Third')], { expectedRevision: 0n }))).toBeInstanceOf(DeadlineExceededError);
    expect(types(await all(node.client().readStream(id)))).toEqual(['First', 'Second', 'Third']);
    expect(await node.server().control.clearFaults()).toBe(0);
  });
});

describe('soft delete, tombstones and stream metadata', () => {
  const node = startServer();

  async function allOf(id: string): Promise<ResolvedEvent[]> {
    return (await all(node.client().readAll({ fromPosition: START, maxCount: 100_000 }))).filter((e) => e.event?.streamId === id);
  }

  it('soft delete: reads answer "not found", $all keeps the events, the next append recreates the stream numbering on', async () => {
    const client = node.client();
    const id = stream('soft');
    await client.appendToStream(id, [event('A'), event('B'), event('C')], { expectedRevision: 'no_stream' });
    const deleted = await client.deleteStream(id, { expectedRevision: 2n });
    expect(deleted.position?.commit).toBeGreaterThan(0n);
    expect(await readOrMissing(client, id)).toBe('not found');
    expect(types(await allOf(id))).toEqual(['A', 'B', 'C']);
    // The soft delete's metadata: `$tb` at long.MaxValue (the client parses it into a JavaScript number).
    expect(Number((await client.getStreamMetadata(id)).metadata?.truncateBefore)).toBe(Number(DELETED_STREAM));
    expect(await rejection(client.appendToStream(id, event('X'), { expectedRevision: 'stream_exists' }))).toBeInstanceOf(StreamDeletedError);

    const recreated = await client.appendToStream(id, event('D'), { expectedRevision: 2n });
    expect(recreated.nextExpectedRevision).toBe(3n);
    const read = await all(client.readStream(id));
    expect(types(read)).toEqual(['D']);
    expect(revisions(read)).toEqual([3n]);
    expect(Number((await client.getStreamMetadata(id)).metadata?.truncateBefore)).toBe(3);

    const never = await rejection(client.deleteStream(stream('never'), { expectedRevision: 'any' }));
    expect(never).toBeInstanceOf(WrongExpectedVersionError);
  });

  it('soft delete then no_stream: the stream is recreated after its old events', async () => {
    const client = node.client();
    const id = stream('again');
    await client.appendToStream(id, event('Old'), { expectedRevision: 'no_stream' });
    await client.deleteStream(id);
    expect((await client.appendToStream(id, event('New'), { expectedRevision: 'no_stream' })).nextExpectedRevision).toBe(1n);
    expect(types(await all(client.readStream(id)))).toEqual(['New']);
  });

  it('tombstone: reads, appends and deletes answer "deleted" for ever; $all holds the $streamDeleted record', async () => {
    const client = node.client();
    const id = stream('hard');
    await client.appendToStream(id, [event('A'), event('B')], { expectedRevision: 'no_stream' });
    await client.tombstoneStream(id, { expectedRevision: 1n });
    await expect(all(client.readStream(id))).rejects.toBeInstanceOf(StreamDeletedError);
    expect(await rejection(client.appendToStream(id, event('C'), { expectedRevision: 'any' }))).toBeInstanceOf(StreamDeletedError);
    const plain = (await rejection(rawAppend(node.server().port, id))) as grpc.ServiceError;
    expect(plain.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(plain.metadata.get('exception')).toEqual(['stream-deleted']);
    expect(await rejection(client.deleteStream(id))).toBeInstanceOf(StreamDeletedError);
    const inAll = await allOf(id);
    expect(types(inAll)).toEqual(['A', 'B', '$streamDeleted']);
    expect(inAll[2].event?.revision).toBe(DELETED_STREAM);
    const subscription = client.subscribeToStream(id, { fromRevision: START });
    await expect(all(subscription)).rejects.toBeInstanceOf(StreamDeletedError);
  });

  it('$maxCount and $tb limit stream reads, not $all, until a scavenge removes what no read returns', async () => {
    const client = node.client();
    const id = stream('capped');
    await client.appendToStream(id, ['A', 'B', 'C', 'D', 'E'].map(event), { expectedRevision: 'no_stream' });
    await client.setStreamMetadata(id, { maxCount: 2 });
    expect(revisions(await all(client.readStream(id)))).toEqual([3n, 4n]);
    expect(revisions(await all(client.readStream(id, { fromRevision: 1n, maxCount: 1 })))).toEqual([3n]);
    expect(revisions(await all(client.readStream(id, { direction: BACKWARDS, fromRevision: END })))).toEqual([4n, 3n]);
    expect(revisions(await all(client.readStream(id, { direction: BACKWARDS, fromRevision: 2n })))).toEqual([]);
    expect(types(await allOf(id))).toEqual(['A', 'B', 'C', 'D', 'E']);

    const truncated = stream('truncated');
    await client.appendToStream(truncated, ['A', 'B', 'C'].map(event), { expectedRevision: 'no_stream' });
    await client.setStreamMetadata(truncated, { truncateBefore: 2 });
    expect(types(await all(client.readStream(truncated)))).toEqual(['C']);

    expect(await node.server().control.scavenge()).toBeGreaterThanOrEqual(5);
    expect(types(await allOf(id))).toEqual(['D', 'E']);
    expect(types(await allOf(truncated))).toEqual(['C']);
  });

  it('$maxAge hides the events older than it from stream reads', async () => {
    const client = node.client();
    const id = stream('aged');
    await client.appendToStream(id, [event('Old1'), event('Old2')], { expectedRevision: 'no_stream' });
    await client.setStreamMetadata(id, { maxAge: 1 });
    await sleep(1_100);
    await client.appendToStream(id, event('Fresh'), { expectedRevision: 1n });
    const read = await all(client.readStream(id));
    expect(types(read)).toEqual(['Fresh']);
    expect(revisions(read)).toEqual([2n]);
    expect(types(await allOf(id))).toEqual(['Old1', 'Old2', 'Fresh']);
  });
});

describe('positions', () => {
  const node = startServer();

  it('the first user event of a fresh node sits well past position 0, and positions are not dense', async () => {
    const client = node.client();
    const id = stream('first');
    await client.appendToStream(id, [event('One'), event('Two')], { expectedRevision: 'no_stream' });
    const userEvents = (await all(client.readAll({ fromPosition: START, maxCount: 1_000 }))).filter((e) => !(e.event?.streamId as string).startsWith('$'));
    const [one, two] = userEvents.map((e) => e.event?.position as Position);
    expect(one.commit).toBeGreaterThan(100n);
    expect(one.prepare).toBe(one.commit);
    expect(two.commit - one.commit).toBeGreaterThan(1n);
  });

  it('a filtered subscription catches up with checkpoints whose commit and prepare positions differ, and resumes from one', async () => {
    const client = node.client();
    const category = `cp${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 80; i++) await client.appendToStream(stream('noise'), event('Noise'), { expectedRevision: 'no_stream' });
    await client.appendToStream(`${category}-a`, event('Wanted'), { expectedRevision: 'no_stream' });
    const checkpoints: Position[] = [];
    const subscription = client.subscribeToAll({
      fromPosition: START,
      filter: streamNameFilter({ prefixes: [`${category}-`], checkpointInterval: 1, checkpointReached: async (_s, position) => void checkpoints.push(position) }),
    });
    for await (const resolved of subscription) {
      if (resolved.event?.type === 'Wanted') break;
    }
    await subscription.unsubscribe();
    const distinct = checkpoints.filter((position) => position.prepare !== position.commit);
    expect(distinct.length).toBeGreaterThan(0);
    expect(distinct.every((position) => position.prepare === 0n)).toBe(true);
    for (let i = 1; i < checkpoints.length; i++) expect(checkpoints[i].commit >= checkpoints[i - 1].commit).toBe(true);

    // From such a checkpoint a read of $all and a resumed subscription carry on at the record there.
    const from = distinct[0] as Position;
    const [next] = await all(client.readAll({ fromPosition: from, maxCount: 1 }));
    expect(next.event?.position.commit).toBe(from.commit);
    const resumed = client.subscribeToAll({ fromPosition: from, filter: streamNameFilter({ prefixes: [`${category}-`] }) });
    for await (const resolved of resumed) {
      expect(resolved.event?.type).toBe('Wanted');
      break;
    }
    await resumed.unsubscribe();
  });
});
