import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import {
  type AllStreamResolvedEvent,
  BACKWARDS,
  END,
  EventStoreDBClient,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  type Position,
  type ResolvedEvent,
  START,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { AppendResp, ReadResp } from '@eventstore/db-client/generated/streams_pb.js';
import type { SupportedMethods } from '@eventstore/db-client/generated/serverfeatures_pb.js';
import { parseUUID } from '@eventstore/db-client/dist/utils/grpcUUID.js';
import { type EsdbTestServer, startEsdbTestServer } from './esdb-test-server.js';

const stream = (category: string) => `${category}-${randomUUID().replace(/-/g, '')}`;
const event = (type: string, data: Record<string, string | number> = {}) => jsonEvent({ id: randomUUID(), type, data, metadata: { by: 'test' } });

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

/** Sends one Append through the generated gRPC client, bypassing @eventstore/db-client's interpretation. */
function rawAppend(port: number, streamId: string, expected: (options: InstanceType<typeof streamsPb.AppendReq.Options>) => void): Promise<AppendResp> {
  const client = new streamsGrpc.StreamsClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return new Promise<AppendResp>((resolve, reject) => {
    const call = client.append((error, response) => {
      client.close();
      if (error !== null) reject(error);
      else resolve(response as AppendResp);
    });
    const options = new streamsPb.AppendReq.Options();
    const identifier = new sharedPb.StreamIdentifier();
    identifier.setStreamName(Buffer.from(streamId));
    options.setStreamIdentifier(identifier);
    expected(options);
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

describe('EventStoreDB test server, through @eventstore/db-client', () => {
  let server: EsdbTestServer;
  let client: EventStoreDBClient;

  beforeAll(async () => {
    server = await startEsdbTestServer({ statsIntervalMs: 200 });
    client = EventStoreDBClient.connectionString(server.connectionString);
  });
  afterAll(async () => {
    await client?.dispose();
    await server?.stop();
  });

  it('answers ServerFeatures as a KurrentDB 25 node, so the client appends through BatchAppend', async () => {
    const features = new serverFeaturesGrpc.ServerFeaturesClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const answer = await new Promise<SupportedMethods>((resolve, reject) =>
      features.getSupportedMethods(new sharedPb.Empty(), (error, methods) => (error === null ? resolve(methods as SupportedMethods) : reject(error))),
    );
    features.close();
    expect(answer.getEventStoreServerVersion()).toBe('25.1.0');
    const methods = new Map(answer.getMethodsList().map((m) => [`${m.getServiceName()}/${m.getMethodName()}`, m.getFeaturesList()]));
    expect(methods.get('event_store.client.streams.streams/batchappend')).toEqual(['deadline_duration']);
    expect(methods.get('event_store.client.streams.streams/read')).toEqual(['position', 'events']);
    expect(methods.get('event_store.client.streams.streams/append')).toEqual([]);
    expect(methods.get('event_store.client.persistent_subscriptions.persistentsubscriptions/read')).toEqual(['stream', 'all']);

    const before = { ...server.served };
    await client.appendToStream(stream('path'), event('A'), { expectedRevision: 'no_stream' });
    expect(server.served.batchAppend).toBe(before.batchAppend + 1);
    expect(server.served.append).toBe(before.append);
  });

  describe('append', () => {
    it('no_stream creates a stream; each event of an append gets its own, increasing position, the reply the last one', async () => {
      const id = stream('order');
      const result = await client.appendToStream(id, [event('Placed'), event('Paid'), event('Shipped')], { expectedRevision: 'no_stream' });
      expect(result.success).toBe(true);
      expect(result.nextExpectedRevision).toBe(2n);
      const read = await all(client.readStream(id));
      const positions = read.map((e) => e.event?.position as Position);
      expect(positions.every((p) => p.commit === p.prepare)).toBe(true);
      expect(positions[0].commit < positions[1].commit && positions[1].commit < positions[2].commit).toBe(true);
      expect(result.position).toEqual(positions[2]);
    });

    it('reports a wrong expected version inside the append response, not as a gRPC error', async () => {
      const id = stream('raw');
      await client.appendToStream(id, event('Opened'), { expectedRevision: 'no_stream' });
      const noStream = await rawAppend(server.port, id, (o) => o.setNoStream(new sharedPb.Empty()));
      expect(noStream.hasWrongExpectedVersion()).toBe(true);
      expect(noStream.getWrongExpectedVersion()?.hasExpectedNoStream()).toBe(true);
      expect(noStream.getWrongExpectedVersion()?.getCurrentRevision()).toBe('0');
      const exact = await rawAppend(server.port, stream('raw'), (o) => o.setRevision('3'));
      expect(exact.getWrongExpectedVersion()?.getExpectedRevision()).toBe('3');
      expect(exact.getWrongExpectedVersion()?.hasCurrentNoStream()).toBe(true);
      const ok = await rawAppend(server.port, id, (o) => o.setRevision('0'));
      expect(ok.getSuccess()?.getCurrentRevision()).toBe('1');
      expect(ok.getSuccess()?.hasPosition()).toBe(true);
    });

    it('applies any, no_stream, stream_exists and exact revisions as the real server documents', async () => {
      const id = stream('acct');
      const missing = await rejection(client.appendToStream(id, event('X'), { expectedRevision: 'stream_exists' }));
      expect(missing).toBeInstanceOf(WrongExpectedVersionError);
      expect((missing as WrongExpectedVersionError).actualVersion).toBe('no_stream');
      expect((missing as WrongExpectedVersionError).expectedVersion).toBe('stream_exists');
      const exactOnMissing = await rejection(client.appendToStream(id, event('X'), { expectedRevision: 0n }));
      expect((exactOnMissing as WrongExpectedVersionError).actualVersion).toBe('no_stream');

      expect((await client.appendToStream(id, event('A'), { expectedRevision: 'any' })).nextExpectedRevision).toBe(0n);
      expect((await client.appendToStream(id, event('B'), { expectedRevision: 'stream_exists' })).nextExpectedRevision).toBe(1n);
      expect((await client.appendToStream(id, [event('C'), event('D')], { expectedRevision: 1n })).nextExpectedRevision).toBe(3n);

      const stale = await rejection(client.appendToStream(id, event('E'), { expectedRevision: 1n }));
      expect((stale as WrongExpectedVersionError).expectedVersion).toBe(1n);
      expect((stale as WrongExpectedVersionError).actualVersion).toBe(3n);
      const ahead = await rejection(client.appendToStream(id, event('E'), { expectedRevision: 9n }));
      expect((ahead as WrongExpectedVersionError).actualVersion).toBe(3n);
      const again = await rejection(client.appendToStream(id, event('E'), { expectedRevision: 'no_stream' }));
      expect((again as WrongExpectedVersionError).actualVersion).toBe(3n);
      expect((await all(client.readStream(id))).map((e) => e.event?.type)).toEqual(['A', 'B', 'C', 'D']);
    });

    it('treats a retried append of the same ids as idempotent, answering with the original revision and position', async () => {
      const id = stream('retry');
      const events = [event('Opened'), event('Funded')];
      const first = await client.appendToStream(id, events, { expectedRevision: 'no_stream' });
      const retry = await client.appendToStream(id, events, { expectedRevision: 'no_stream' });
      expect(retry.nextExpectedRevision).toBe(first.nextExpectedRevision);
      expect(retry.position).toEqual(first.position);

      const next = [event('Spent')];
      await client.appendToStream(id, next, { expectedRevision: 1n });
      expect((await client.appendToStream(id, next, { expectedRevision: 1n })).nextExpectedRevision).toBe(2n);
      // With `any`, the ids are looked up among recently committed events (best effort on a real node).
      expect((await client.appendToStream(id, next, { expectedRevision: 'any' })).nextExpectedRevision).toBe(2n);
      expect(await all(client.readStream(id))).toHaveLength(3);

      // Only part of the ids match: not a retry, and not written.
      const partial = await rejection(client.appendToStream(id, [events[0], event('Other')], { expectedRevision: 'no_stream' }));
      expect(partial).toBeInstanceOf(WrongExpectedVersionError);
      const partialAny = await rejection(client.appendToStream(id, [next[0], event('Other')], { expectedRevision: 'any' }));
      expect(partialAny).toBeInstanceOf(WrongExpectedVersionError);
      expect(await all(client.readStream(id))).toHaveLength(3);
    });
  });

  describe('read a stream', () => {
    it('reads forwards, backwards, from a revision and bounded, with data, metadata and created', async () => {
      const id = stream('read');
      const before = Date.now();
      await client.appendToStream(
        id,
        ['A', 'B', 'C', 'D'].map((type, i) => event(type, { i })),
        { expectedRevision: 'no_stream' },
      );
      const forwards = await all(client.readStream(id, { maxCount: 3 }));
      expect(forwards.map((e) => [e.event?.type, e.event?.revision])).toEqual([
        ['A', 0n],
        ['B', 1n],
        ['C', 2n],
      ]);
      expect(forwards[1].event?.data).toEqual({ i: 1 });
      expect(forwards[1].event?.metadata).toEqual({ by: 'test' });
      expect(forwards[1].event?.isJson).toBe(true);
      expect(forwards[1].event?.created.getTime()).toBeGreaterThanOrEqual(before - 1);
      expect((await all(client.readStream(id, { direction: BACKWARDS, fromRevision: END, maxCount: 2 }))).map((e) => e.event?.type)).toEqual(['D', 'C']);
      expect((await all(client.readStream(id, { fromRevision: 2n }))).map((e) => e.event?.type)).toEqual(['C', 'D']);
      expect((await all(client.readStream(id, { direction: BACKWARDS, fromRevision: 1n }))).map((e) => e.event?.type)).toEqual(['B', 'A']);
      expect((await all(client.readStream(id, { direction: BACKWARDS, fromRevision: 99n }))).map((e) => e.event?.type)).toEqual(['D', 'C', 'B', 'A']);
      expect(await all(client.readStream(id, { fromRevision: 4n }))).toEqual([]);
    });

    it('sends structured UUIDs when asked, in the layout the client decodes', async () => {
      const id = stream('uuid');
      const written = event('A');
      await client.appendToStream(id, written, { expectedRevision: 'no_stream' });
      const options = new streamsPb.ReadReq.Options();
      const streamOptions = new streamsPb.ReadReq.Options.StreamOptions();
      const identifier = new sharedPb.StreamIdentifier();
      identifier.setStreamName(Buffer.from(id));
      streamOptions.setStreamIdentifier(identifier);
      streamOptions.setStart(new sharedPb.Empty());
      options.setStream(streamOptions);
      options.setCount('1');
      options.setNoFilter(new sharedPb.Empty());
      options.setUuidOption(new streamsPb.ReadReq.Options.UUIDOption().setStructured(new sharedPb.Empty()));
      const raw = new streamsGrpc.StreamsClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
      const responses = await all<ReadResp>(raw.read(new streamsPb.ReadReq().setOptions(options)));
      raw.close();
      const uuid = responses[0].getEvent()?.getEvent()?.getId();
      expect(uuid?.hasStructured()).toBe(true);
      expect(parseUUID(uuid)).toBe(written.id);
    });

    it('answers a missing stream with stream_not_found', async () => {
      await expect(all(client.readStream(stream('missing')))).rejects.toBeInstanceOf(StreamNotFoundError);
    });
  });

  describe('read $all', () => {
    it('holds the system events a node writes, in $-prefixed streams, from position 0', async () => {
      // The seven events a node writes at start (epoch, default users, stats stream metadata, first stats).
      const first = await all(client.readAll({ fromPosition: START, maxCount: 7 }));
      expect(first[0].event?.streamId).toBe('$epoch-information');
      expect(first[0].event?.position).toEqual({ commit: 0n, prepare: 0n });
      const streams = new Set(first.map((e) => e.event?.streamId));
      expect(streams.has('$users')).toBe(true);
      expect([...streams].every((s) => s?.startsWith('$'))).toBe(true);
      // Stats keep being written while the server runs, as on a real node.
      await new Promise((r) => setTimeout(r, 450));
      const latest = await all(client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 20 }));
      expect(latest.some((e) => e.event?.type === '$statsCollected' && e.event.created.getTime() > Date.now() - 1_000)).toBe(true);
    });

    it('reads forwards from a position inclusively and backwards from it exclusively', async () => {
      const id = stream('all');
      await client.appendToStream(id, [event('One'), event('Two'), event('Three')], { expectedRevision: 'no_stream' });
      const mine = (await all(client.readStream(id))).map((e) => e.event?.position as Position);
      const forwards = await all(client.readAll({ fromPosition: mine[1], maxCount: 2 }));
      expect(forwards.map((e) => e.event?.type)).toEqual(['Two', 'Three']);
      const backwards = await all(client.readAll({ direction: BACKWARDS, fromPosition: mine[1], maxCount: 1 }));
      expect(backwards.map((e) => e.event?.type)).toEqual(['One']);
      const ordered = await all(client.readAll({ fromPosition: START, maxCount: 10_000 }));
      for (let i = 1; i < ordered.length; i++) expect((ordered[i].event?.position.commit as bigint) > (ordered[i - 1].event?.position.commit as bigint)).toBe(true);
    });

    it('refuses to read from a position that is not an event boundary', async () => {
      const id = stream('bad');
      await client.appendToStream(id, event('One'), { expectedRevision: 'no_stream' });
      const [one] = await all(client.readStream(id));
      const commit = (one.event?.position as Position).commit;
      const inside = { commit: commit + 1n, prepare: commit + 1n };
      await expect(all(client.readAll({ fromPosition: inside, maxCount: 1 }))).rejects.toThrow(/invalid position/i);
    });
  });

  describe('subscriptions', () => {
    async function collect(
      subscription: AsyncIterable<AllStreamResolvedEvent | ResolvedEvent> & { on(event: string, listener: (...args: unknown[]) => void): unknown; unsubscribe(): Promise<void> },
      count: number,
      onCaughtUp?: () => Promise<void>,
    ): Promise<{ events: (AllStreamResolvedEvent | ResolvedEvent)[]; signals: string[] }> {
      const signals: string[] = [];
      subscription.on('confirmation', () => signals.push('confirmation'));
      subscription.on('caughtUp', () => {
        signals.push('caughtUp');
        void onCaughtUp?.();
      });
      const events: (AllStreamResolvedEvent | ResolvedEvent)[] = [];
      for await (const resolved of subscription) {
        events.push(resolved);
        signals.push('event');
        if (events.length >= count) break;
      }
      await subscription.unsubscribe();
      return { events, signals };
    }

    it('filters $all by stream prefix server-side, with confirmation, checkpoints and caught-up, then delivers live events', async () => {
      const category = `sub${randomUUID().slice(0, 8)}`;
      for (let i = 0; i < 3; i++) await client.appendToStream(`${category}-${i}`, event('Before', { i }), { expectedRevision: 'no_stream' });
      for (let i = 0; i < 40; i++) await client.appendToStream(stream('noise'), event('Noise'), { expectedRevision: 'no_stream' });
      const checkpoints: Position[] = [];
      const subscription = client.subscribeToAll({
        fromPosition: START,
        filter: streamNameFilter({ prefixes: [`${category}-`], checkpointInterval: 1, checkpointReached: async (_s, position) => void checkpoints.push(position) }),
      });
      const { events, signals } = await collect(subscription, 5, async () => {
        await client.appendToStream(`${category}-live`, [event('Live', { i: 0 }), event('Live', { i: 1 })], { expectedRevision: 'no_stream' });
      });
      expect(events.map((e) => e.event?.type)).toEqual(['Before', 'Before', 'Before', 'Live', 'Live']);
      expect(signals.slice(0, 4)).toEqual(['confirmation', 'event', 'event', 'event']);
      expect(signals.indexOf('caughtUp')).toBe(4);
      expect(checkpoints.length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < checkpoints.length; i++) expect(checkpoints[i].commit > checkpoints[i - 1].commit).toBe(true);
    });

    it('filters by event type regex and excludes system events server-side', async () => {
      const rare = `Rare${randomUUID().slice(0, 8)}`;
      const from = (await all(client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })))[0].event?.position as Position;
      await client.appendToStream(stream('x'), [event('Common'), event(rare)], { expectedRevision: 'no_stream' });
      const byType = await collect(client.subscribeToAll({ fromPosition: from, filter: eventTypeFilter({ regex: `^${rare}$` }) }), 1);
      expect(byType.events.map((e) => e.event?.type)).toEqual([rare]);

      const seen: string[] = [];
      const subscription = client.subscribeToAll({ fromPosition: START, filter: excludeSystemEvents() });
      for await (const resolved of subscription) {
        seen.push(resolved.event?.streamId as string);
        if (resolved.event?.type === rare) break;
      }
      await subscription.unsubscribe();
      expect(seen.length).toBeGreaterThan(3);
      expect(seen.some((s) => s.startsWith('$'))).toBe(false);
      // Unfiltered, $all does hold the system events the filter removed.
      const unfiltered = await all(client.readAll({ fromPosition: START, maxCount: 10 }));
      expect(unfiltered.some((e) => e.event?.streamId.startsWith('$'))).toBe(true);
    });

    it('subscribes to one stream after a revision, catching up then going live', async () => {
      const id = stream('one');
      await client.appendToStream(id, [event('A'), event('B'), event('C')], { expectedRevision: 'no_stream' });
      const { events, signals } = await collect(client.subscribeToStream(id, { fromRevision: 0n }), 3, async () => {
        await client.appendToStream(id, event('D'), { expectedRevision: 2n });
      });
      expect(events.map((e) => e.event?.type)).toEqual(['B', 'C', 'D']);
      expect(signals).toEqual(['confirmation', 'event', 'event', 'caughtUp', 'event']);
    });

    it('a subscription from the end delivers only new events', async () => {
      const id = stream('tail');
      await client.appendToStream(id, event('Old'), { expectedRevision: 'no_stream' });
      const { events } = await collect(client.subscribeToAll({ fromPosition: END, filter: streamNameFilter({ prefixes: [id] }) }), 1, async () => {
        await client.appendToStream(id, event('New'), { expectedRevision: 0n });
      });
      expect(events.map((e) => e.event?.type)).toEqual(['New']);
    });
  });

  it('stops with open subscriptions and leaves no handles behind', async () => {
    const own = await startEsdbTestServer();
    const ownClient = EventStoreDBClient.connectionString(own.connectionString);
    await ownClient.appendToStream(stream('stop'), event('A'), { expectedRevision: 'any' });
    const subscription = ownClient.subscribeToAll({ fromPosition: END });
    const ended = new Promise<void>((resolve) => {
      subscription.on('error', () => resolve());
      subscription.on('end', () => resolve());
      subscription.on('close', () => resolve());
    });
    await new Promise<void>((resolve) => subscription.once('confirmation', () => resolve()));
    await own.stop();
    await ended;
    await ownClient.dispose();
  });
});
