/**
 * `npm run bench:webhooks`: webhook deliveries to a local receiver, next to a floor measured in the
 * same run against the same receiver.
 *   1. Throughput: BENCH_WEBHOOKS (default 2,000) completed checks of ENDPOINTS organizations, each
 *      with an endpoint, are in the log and the webhooks subscriber has written their deliveries;
 *      then the sender (the service's own WebhookSender, with the service's settings: a poll every
 *      100 ms, 64 in flight, 4 per endpoint, on a pool made as the service makes its own, with
 *      generic plans for prepared statements) sends them all. Deliveries per second, from the
 *      sender's start to the last one's arrival. The floor: the same bodies, signed with the same
 *      standardwebhooks signing and POSTed from Node with the same policy (a new connection per
 *      request, as the sender's safePost) and the same concurrency (4 per endpoint). Target: the
 *      sender at least 0.7x the floor.
 *   2. Latency: completed checks appended at half the sender's measured rate for
 *      BENCH_WEBHOOK_SECONDS (default 10), the subscriber and the sender running: the time from
 *      each append's commit (the append answered) to its delivery's arrival at the receiver. Target:
 *      p99 at most 1 s.
 * Each phase runs BENCH_RUNS times (default 3), after a warm-up round of 1,000 deliveries (sender
 * then floor, not counted); the medians are printed with the machine (CPU model, cores) and its
 * load average. The receiver runs in this process, for the floor as for the sender.
 * PostgreSQL: DATABASE_URL's server, or an ephemeral embedded cluster.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { ulid } from 'ulid';
import { ProjectionRunner } from '../projections/runner/projection-runner.js';
import { webhooksSubscriber } from '../projections/webhooks/webhooks.subscriber.js';
import { SystemClock } from '../src/common/clock.js';
import { DataKeys } from '../src/data-protection/data-keys.js';
import { createPool } from '../src/database/pool.js';
import { LocalKeyManagement } from '../src/data-protection/key-management.port.js';
import type { EventToAppend } from '../src/event-store/event-store.port.js';
import type { PostgresEventStore } from '../src/event-store/postgres-event-store.js';
import { EndpointSealing, newSigningSecret } from '../src/webhooks/endpoint-sealing.js';
import { WebhookSender } from '../src/webhooks/webhook-sender.js';
import { benchDatabase, format, runBench, runCleanups, sizeFromEnv, status } from './bench-support.js';

const DELIVERIES = sizeFromEnv('BENCH_WEBHOOKS', 2_000, { min: 10, max: 1_000_000 });
const RUNS = sizeFromEnv('BENCH_RUNS', 3, { min: 1, max: 9 });
/** Deliveries of the warm-up round before the first run (throughput only, not counted). */
const WARM_UP_DELIVERIES = 1_000;
const PACED_SECONDS = sizeFromEnv('BENCH_WEBHOOK_SECONDS', 10, { min: 1, max: 3_600 });
/** Endpoints (one organization each): the sender's concurrency is 4 per endpoint, up to 64 in all. */
const ENDPOINTS = 4;
/** The service's settings (webhook-delivery.service.ts, config defaults). */
const SENDER = { pollMs: 100, maxInFlight: 64, concurrencyPerEndpoint: 4, timeoutMs: 10_000 } as const;
const FLOOR_CONCURRENCY = Math.min(SENDER.maxInFlight, SENDER.concurrencyPerEndpoint * ENDPOINTS);
const TARGET_RATIO = 0.7;
const TARGET_P99_MS = 1_000;

const sleep = (ms: number) => new Promise<void>((wake) => setTimeout(wake, ms));
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

/**
 * The local receiver: answers 204 to every POST, and notes when each webhook-id first arrived.
 * `arrived(ids)` resolves once all of them have: the bench waits on it rather than polling the
 * arrivals, which would take CPU from the sender it measures, in the same process.
 */
async function startReceiver(): Promise<{ url: string; arrivals: Map<string, number>; arrived: (ids: readonly string[]) => Promise<void>; close: () => Promise<void> }> {
  const arrivals = new Map<string, number>();
  /** Waiters by the id each still misses: one id at a time, so an arrival costs one lookup. */
  const waiters = new Map<string, { ids: readonly string[]; next: number; done: () => void }>();
  const advance = (waiter: { ids: readonly string[]; next: number; done: () => void }) => {
    while (waiter.next < waiter.ids.length && arrivals.has(waiter.ids[waiter.next])) waiter.next++;
    if (waiter.next === waiter.ids.length) waiter.done();
    else waiters.set(waiter.ids[waiter.next], waiter);
  };
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const id = request.headers['webhook-id'];
      if (typeof id === 'string' && !arrivals.has(id)) {
        arrivals.set(id, performance.now());
        const waiter = waiters.get(id);
        if (waiter !== undefined) {
          waiters.delete(id);
          advance(waiter);
        }
      }
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    arrived: (ids) => new Promise<void>((done) => advance({ ids, next: 0, done })),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}

const event = (type: string, data: Record<string, unknown>): EventToAppend => ({
  id: randomUUID(),
  type,
  data: { schemaVersion: 1, ...data } as EventToAppend['data'],
  metadata: { occurredAt: new Date().toISOString() },
});

/** An endpoint written to the log as the API writes it (URL and secret sealed); answers its secret. */
async function createEndpoint(store: PostgresEventStore, sealing: EndpointSealing, organizationId: string, url: string): Promise<string> {
  const endpointId = `whe_${ulid()}`;
  const secretId = ulid();
  const secret = newSigningSecret();
  const data = {
    endpointId,
    organizationId,
    environment: 'test',
    target: await sealing.sealTarget(organizationId, endpointId, { url, description: null }),
    eventTypes: [],
    enabled: true,
    secretId,
    secret: await sealing.sealSecret(organizationId, endpointId, secretId, secret),
    masterKeyId: sealing.masterKeyId,
  };
  await store.append(`webhookEndpoint-${endpointId}`, [event('WebhookEndpointCreated', data)], { expectedRevision: 'no_stream' });
  return secret;
}

/** A completed sandbox check; answers its webhook-id and when its append answered (the commit). */
async function completedCheck(store: PostgresEventStore, organizationId: string): Promise<{ webhookId: string; committedAt: number; position: bigint }> {
  const reference = `vrf_${ulid()}`;
  const at = new Date().toISOString();
  const completion = event('VerificationCompleted', { reference, outcome: 'found', result: {}, completedAt: at });
  const { position } = await store.append(
    `verification-${reference}`,
    [
      event('VerificationRequested', {
        reference,
        organizationId,
        environment: 'test',
        keyId: 'key_1',
        scope: 'nin',
        category: 'identity',
        countryCode: 'NG',
        request: {},
        priceKobo: 100,
        requestedAt: at,
      }),
      completion,
    ],
    { expectedRevision: 'no_stream' },
  );
  return { webhookId: `msg_${completion.id}`, committedAt: performance.now(), position };
}

async function until(what: string, timeoutMs: number, test: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1_000} s waiting for ${what}`);
    await sleep(5);
  }
}

async function withTimeout(what: string, timeoutMs: number, done: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`timed out after ${timeoutMs / 1_000} s waiting for ${what}`)), timeoutMs);
  });
  try {
    await Promise.race([done, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** One bare signed POST, as safePost sends it: a connection of its own, the same headers. */
function barePost(url: URL, secret: string, messageId: string, body: string): Promise<void> {
  const at = new Date();
  const headers = {
    'webhook-id': messageId,
    'webhook-timestamp': Math.floor(at.getTime() / 1_000).toString(),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body).toString(),
    'user-agent': 'ledger-webhooks/1',
  };
  return new Promise((done, fail) => {
    const request = http.request(url, { method: 'POST', agent: false, headers }, (response) => {
      response.resume();
      response.on('end', () => done());
    });
    request.on('error', fail);
    request.end(body);
  });
}

runBench(async () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const { url: databaseUrl, pool, store } = await benchDatabase('webhooks', 20, cleanups);
    // The sender's own pool, made as the service's (createPool): its settings decide how its statements are planned.
    const senderPool = createPool(databaseUrl, 20);
    cleanups.push(() => senderPool.end());
    const masterKey = new LocalKeyManagement(randomBytes(32));
    const sealing = new EndpointSealing(new DataKeys(pool, masterKey), masterKey);
    const receiver = await startReceiver();
    cleanups.push(receiver.close);
    const organizations = Array.from({ length: ENDPOINTS }, () => `org_${ulid()}`);
    const secrets = new Map<string, string>();
    for (const organizationId of organizations) secrets.set(organizationId, await createEndpoint(store, sealing, organizationId, receiver.url));
    // When each of the subscriber's batches committed, to split commit-to-arrival into the subscriber's part and the sender's.
    const written: { lastPosition: bigint; at: number }[] = [];
    const runner = new ProjectionRunner(pool, store, webhooksSubscriber, {
      maxBatch: 100,
      maxAttempts: 3,
      onBatch: ({ lastPosition }) => void written.push({ lastPosition, at: performance.now() }),
    });
    /** When the subscriber's batch holding `position` committed (the first batch reaching it). */
    const writtenAt = (position: bigint) => {
      let [low, high] = [0, written.length - 1];
      while (low < high) {
        const middle = (low + high) >> 1;
        if (written[middle].lastPosition >= position) high = middle;
        else low = middle + 1;
      }
      return written[low]?.lastPosition >= position ? written[low].at : Number.NaN;
    };
    runner.start();
    cleanups.push(() => runner.stop());
    const newSender = () => new WebhookSender(senderPool, new SystemClock(), sealing, { ...SENDER, allowPrivateTargets: true, random: Math.random, log: (line) => status(line) });
    const noneWaiting = async () => (await pool.query<{ n: number }>("select count(*)::int as n from webhook_deliveries where status = 'pending'")).rows[0].n === 0;

    const senderRates: number[] = [];
    const floorRates: number[] = [];
    const p99s: number[] = [];
    const p50s: number[] = [];
    const subscriberP99s: number[] = [];
    const senderP99s: number[] = [];
    // Run 0 warms up, its figures dropped: whichever went first paid for V8 compiling Node's HTTP
    // client and server, and the sender always went first (its first run used twice the CPU of the next ones).
    for (let run = 0; run <= RUNS; run++) {
      const count = run === 0 ? WARM_UP_DELIVERIES : DELIVERIES;
      // 1. Throughput: the deliveries written (sender stopped), then sent.
      status(run === 0 ? `warm-up: ${count} completed checks into the log` : `run ${run}/${RUNS}: ${count} completed checks into the log`);
      const batch: string[] = [];
      for (let i = 0; i < count; i++) batch.push((await completedCheck(store, organizations[i % ENDPOINTS])).webhookId);
      await until('the subscriber to write every delivery', 300_000, async () => {
        const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from webhook_deliveries where message_id = any($1)', [batch]);
        return rows[0].n === batch.length;
      });
      const sender = newSender();
      const sendStart = performance.now();
      sender.start();
      await withTimeout('the sender to deliver the batch', 600_000, receiver.arrived(batch));
      const senderSeconds = (Math.max(...batch.map((id) => receiver.arrivals.get(id) ?? 0)) - sendStart) / 1_000;
      await sender.stop();
      await until('the deliveries to be recorded', 60_000, () => noneWaiting());
      const runSender = count / senderSeconds;

      // The floor: the same bodies to the same receiver, signed the same way, at the same concurrency.
      const { rows } = await pool.query<{ message_id: string; body: string; organization_id: string }>(
        `select d.message_id, d.body, e.organization_id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where d.message_id = any($1)`,
        [batch],
      );
      const url = new URL(receiver.url);
      let next = 0;
      const floorStart = performance.now();
      await Promise.all(
        Array.from({ length: FLOOR_CONCURRENCY }, async () => {
          while (next < rows.length) {
            const row = rows[next++];
            await barePost(url, secrets.get(row.organization_id) ?? '', `floor_${row.message_id}`, row.body);
          }
        }),
      );
      const runFloor = count / ((performance.now() - floorStart) / 1_000);
      status(`${run === 0 ? 'warm-up' : `run ${run}`}: sender ${format(runSender)}/s, floor ${format(runFloor)}/s`);
      if (run === 0) continue;
      senderRates.push(runSender);
      floorRates.push(runFloor);

      // 2. Latency at half the sender's rate: commit to arrival, subscriber and sender running.
      const rate = (senderRates.at(-1) ?? 1) / 2;
      const paced = newSender();
      paced.start();
      const commits: { webhookId: string; committedAt: number; position: bigint }[] = [];
      const appends: Promise<void>[] = [];
      const pacedStart = performance.now();
      const total = Math.max(1, Math.round(rate * PACED_SECONDS));
      for (let i = 0; i < total; i++) {
        const due = pacedStart + (i * 1_000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        appends.push(completedCheck(store, organizations[i % ENDPOINTS]).then((commit) => void commits.push(commit)));
      }
      await Promise.all(appends);
      await withTimeout('the paced deliveries to arrive', 120_000, receiver.arrived(commits.map(({ webhookId }) => webhookId)));
      await paced.stop();
      await until('the deliveries to be recorded', 60_000, () => noneWaiting());
      const latencies = commits.map(({ webhookId, committedAt }) => (receiver.arrivals.get(webhookId) ?? Number.NaN) - committedAt);
      p99s.push(percentile(latencies, 99));
      p50s.push(percentile(latencies, 50));
      const subscriber = commits.map(({ committedAt, position }) => writtenAt(position) - committedAt);
      const sending = commits.map(({ webhookId, position }) => (receiver.arrivals.get(webhookId) ?? Number.NaN) - writtenAt(position));
      subscriberP99s.push(percentile(subscriber, 99));
      senderP99s.push(percentile(sending, 99));
      status(
        `run ${run}: ${total} paced at ${rate.toFixed(0)}/s, commit to arrival p50 ${p50s.at(-1)?.toFixed(0)} ms, p99 ${p99s.at(-1)?.toFixed(0)} ms` +
          ` (commit to the subscriber's write p50 ${percentile(subscriber, 50).toFixed(0)} ms, p99 ${subscriberP99s.at(-1)?.toFixed(0)} ms; write to arrival p50 ${percentile(sending, 50).toFixed(0)} ms, p99 ${senderP99s.at(-1)?.toFixed(0)} ms)`,
      );
    }

    const senderRate = median(senderRates);
    const floorRate = median(floorRates);
    const ratio = median(senderRates.map((rate, index) => rate / floorRates[index]));
    const p99 = median(p99s);
    const [one, five, fifteen] = loadavg();
    const lines = [
      `webhooks bench: ${DELIVERIES} deliveries per run to a local receiver, ${ENDPOINTS} endpoints, median of ${RUNS} runs`,
      `machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}; load average ${one.toFixed(2)} ${five.toFixed(2)} ${fifteen.toFixed(2)}`,
      `  sender                                 ${format(senderRate).padStart(8)} deliveries/s   (runs: ${senderRates.map(format).join(', ')})`,
      `  floor: bare signed POSTs, ${FLOOR_CONCURRENCY} at once    ${format(floorRate).padStart(8)} POSTs/s        (runs: ${floorRates.map(format).join(', ')})`,
      `  sender / floor                         ${ratio.toFixed(2).padStart(8)}x              target >= ${TARGET_RATIO}x: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}`,
      `  commit to arrival at half that rate    p50 ${format(median(p50s))} ms, p99 ${format(p99)} ms   target p99 <= ${TARGET_P99_MS} ms: ${p99 <= TARGET_P99_MS ? 'met' : 'NOT met'}`,
      `    of which commit to the subscriber's write p99 ${format(median(subscriberP99s))} ms, the write to arrival (the sender) p99 ${format(median(senderP99s))} ms`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await runCleanups(cleanups);
  }
});
