import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { ulid } from 'ulid';
import { checkpointOf, waitUntil } from '../../projections/runner/counting.projection.testing.js';
import { ProjectionRunner } from '../../projections/runner/projection-runner.js';
import { webhooksSubscriber } from '../../projections/webhooks/webhooks.subscriber.js';
import { useTestEventStore } from '../../test/support/event-store.js';
import { Clock } from '../common/clock.js';
import { createPool } from '../database/pool.js';
import { DataKeys, OrganizationKeysDestroyed } from '../data-protection/data-keys.js';
import { LocalKeyManagement } from '../data-protection/key-management.port.js';
import type { EventToAppend } from '../event-store/event-store.port.js';
import { EndpointSealing, newSigningSecret } from './endpoint-sealing.js';
import { RETRY_DELAYS_MS } from './retry-schedule.js';
import { WebhookSender, type SenderOptions } from './webhook-sender.js';

const db = useTestEventStore({ poolSize: 10 });
const masterKey = new LocalKeyManagement(randomBytes(32));
let sealing: EndpointSealing;
beforeAll(() => {
  sealing = new EndpointSealing(new DataKeys(db.pool, masterKey), masterKey);
});

/** The test's clock: it moves only when the test moves it. */
class TestClock extends Clock {
  constructor(private at: Date) {
    super();
  }
  now(): Date {
    return new Date(this.at);
  }
  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
}

interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly at: Date;
}

/** A real HTTP receiver on 127.0.0.1; `answer` decides, per request, to answer (status) or to hang. */
async function receiver(answer: (request: Received) => number | 'hang'): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), at: new Date() };
      received.push(entry);
      const decision = answer(entry);
      if (decision === 'hang') hanging.push(response);
      else response.writeHead(decision, { 'content-type': 'text/plain' }).end(decision >= 300 ? `no: ${'x'.repeat(3_000)}` : 'ok');
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}

const event = (type: string, data: Record<string, unknown>, at: Date): EventToAppend => ({
  id: randomUUID(),
  type,
  data: { schemaVersion: 1, ...data },
  metadata: { occurredAt: at.toISOString() },
});

/** The position of the newest event this file appended: what the subscriber must reach. */
let lastAppended = 0n;
async function append(...args: Parameters<typeof db.store.append>): Promise<void> {
  const { position } = await db.store.append(...args);
  if (position > lastAppended) lastAppended = position;
}

/** How an endpoint's target and secret are sealed: as the API seals them, unless a test says otherwise. */
interface EndpointSeals {
  target(organizationId: string, endpointId: string, url: string): Promise<string>;
  secret(organizationId: string, endpointId: string, secretId: string, secret: string): Promise<string>;
}
const apiSeals: EndpointSeals = {
  target: (organizationId, endpointId, url) => sealing.sealTarget(organizationId, endpointId, { url, description: null }),
  secret: (organizationId, endpointId, secretId, secret) => sealing.sealSecret(organizationId, endpointId, secretId, secret),
};

/** An endpoint written to the log as the API writes it: URL and secret sealed. Answers its id and secret. */
async function createEndpoint(organizationId: string, url: string, at: Date, seals: EndpointSeals = apiSeals): Promise<{ endpointId: string; secret: string }> {
  const endpointId = `whe_${ulid()}`;
  const secretId = ulid();
  const secret = newSigningSecret();
  await append(
    `webhookEndpoint-${endpointId}`,
    [
      event(
        'WebhookEndpointCreated',
        {
          endpointId,
          organizationId,
          environment: 'test',
          target: await seals.target(organizationId, endpointId, url),
          eventTypes: [],
          enabled: true,
          secretId,
          secret: await seals.secret(organizationId, endpointId, secretId, secret),
          masterKeyId: sealing.masterKeyId,
        },
        at,
      ),
    ],
    { expectedRevision: 'no_stream' },
  );
  return { endpointId, secret };
}

async function rotate(organizationId: string, endpointId: string, previousSecretId: string, previousValidUntil: Date, at: Date): Promise<string> {
  const secretId = ulid();
  const secret = newSigningSecret();
  await append(
    `webhookEndpoint-${endpointId}`,
    [
      event(
        'WebhookEndpointSecretRotated',
        {
          endpointId,
          secretId,
          secret: await sealing.sealSecret(organizationId, endpointId, secretId, secret),
          masterKeyId: sealing.masterKeyId,
          previousSecretId,
          previousValidUntil: previousValidUntil.toISOString(),
        },
        at,
      ),
    ],
    { expectedRevision: 'any' },
  );
  return secret;
}

/** A completed sandbox check of `organizationId`; answers the id of its completion, which names the webhook. */
async function completedCheck(organizationId: string, at: Date): Promise<string> {
  const reference = `vrf_${ulid()}`;
  const completion = event('VerificationCompleted', { reference, outcome: 'found', result: {}, completedAt: at.toISOString() }, at);
  await append(
    `verification-${reference}`,
    [
      event(
        'VerificationRequested',
        {
          reference,
          organizationId,
          environment: 'test',
          keyId: 'key_1',
          scope: 'nin',
          category: 'identity',
          countryCode: 'NG',
          request: {},
          priceKobo: 100,
          requestedAt: at.toISOString(),
        },
        at,
      ),
      completion,
    ],
    { expectedRevision: 'no_stream' },
  );
  return `msg_${completion.id}`;
}

/** Runs the subscriber until it has applied everything in the log so far. */
let runner: ProjectionRunner | undefined;
/** `count` completed checks of the organization, their deliveries' message ids. */
async function completedChecks(organizationId: string, count: number, at: Date): Promise<string[]> {
  const messageIds: string[] = [];
  for (let i = 0; i < count; i++) messageIds.push(await completedCheck(organizationId, at));
  return messageIds;
}

/** Every one of these deliveries succeeded at its first attempt, and that attempt is recorded once. */
async function expectEachSucceededAtFirstAttempt(messageIds: readonly string[]): Promise<void> {
  const { rows } = await db.pool.query<{ status: string; attempts: number; recorded: number }>(
    `select d.status, d.attempts, (select count(*)::int from webhook_attempts a where a.delivery_id = d.id) as recorded
       from webhook_deliveries d where d.message_id = any($1)`,
    [messageIds],
  );
  expect(rows.map((row) => [row.status, row.attempts, row.recorded])).toEqual(messageIds.map(() => ['succeeded', 1, 1]));
}

/**
 * Waits for this file's own appends, not for `headPosition()`: that is the head as far as visible,
 * and the visibility bound is the cluster's oldest open transaction, which another test's database
 * in the same cluster can hold back below what this file just appended.
 */
async function subscriberCaughtUp(): Promise<void> {
  const head = lastAppended;
  await waitUntil(async () => ((await checkpointOf(db.pool, 'webhooks'))?.position ?? -1n) >= head, 20_000, 'the webhooks subscriber to reach the newest append');
}

/** Webhook.verify as of `at`: the library checks the timestamp against its own clock, which is the test's here. */
function verifyAt(secret: string, received: Received, at: Date): unknown {
  const realNow = Date.now;
  Date.now = () => at.getTime();
  try {
    return new Webhook(secret).verify(received.body, received.headers);
  } finally {
    Date.now = realNow;
  }
}

const organization = () => `org_${ulid()}`;
const options = (overrides: Partial<SenderOptions> = {}): SenderOptions => ({
  allowPrivateTargets: true,
  // Generous beside the machine's load: only the first test's hanging receiver waits it out, with its own shorter one.
  timeoutMs: 3_000,
  concurrencyPerEndpoint: 4,
  maxInFlight: 64,
  pollMs: 20,
  random: () => 0.5,
  ...overrides,
});

beforeAll(() => {
  runner = new ProjectionRunner(db.pool, db.store, webhooksSubscriber, { maxBatch: 100, maxAttempts: 3 });
  runner.start();
});
afterAll(async () => {
  await runner?.stop();
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()?.();
  // Every sender claims every due delivery: one a test leaves behind (its receiver closed) would
  // otherwise be claimed, and waited on, by the next test's sender.
  await db.pool.query('truncate webhook_attempts, webhook_deliveries');
});

describe('Given a receiver that fails, then times out, then recovers', () => {
  it('every webhook-id arrives, each signature verifies, dedup gives exactly the expected set, and the retries follow the schedule', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    // Per webhook-id: the first request is answered 500, the second hangs past the timeout, the third is answered 204.
    const seen = new Map<string, number>();
    const local = await receiver((request) => {
      const count = (seen.get(request.headers['webhook-id']) ?? 0) + 1;
      seen.set(request.headers['webhook-id'], count);
      return count === 1 ? 500 : count === 2 ? 'hang' : 204;
    });
    closers.push(local.close);
    const { endpointId, secret } = await createEndpoint(org, local.url, clock.now());
    const expected = [await completedCheck(org, clock.now()), await completedCheck(org, clock.now()), await completedCheck(org, clock.now())];
    await subscriberCaughtUp();
    const sender = new WebhookSender(db.pool, clock, sealing, options({ timeoutMs: 1_000 }));

    const pass = async () => {
      const claimed = await sender.claimAndSend();
      await sender.settled();
      return claimed;
    };
    expect(await pass()).toBe(3);
    // Not due a moment before the first pause ends (random 0.5: the pause exactly as scheduled).
    clock.advance(RETRY_DELAYS_MS[0] - 1);
    expect(await pass()).toBe(0);
    clock.advance(1);
    expect(await pass()).toBe(3);
    clock.advance(RETRY_DELAYS_MS[1] - 1);
    expect(await pass()).toBe(0);
    clock.advance(1);
    expect(await pass()).toBe(3);
    expect(await pass()).toBe(0);

    // At least once each, all signed by the endpoint's secret, the same id on every attempt.
    const requests = local.received;
    expect(requests).toHaveLength(9);
    for (const request of requests) {
      const at = new Date(Number(request.headers['webhook-timestamp']) * 1_000);
      expect(verifyAt(secret, request, at)).toMatchObject({ type: 'verification.completed', data: { organizationId: org, environment: 'test', scope: 'nin', charged: true } });
    }
    expect([...new Set(requests.map((request) => request.headers['webhook-id']))].sort()).toEqual([...expected].sort());

    const { rows } = await db.pool.query<{
      message_id: string;
      status: string;
      attempts: { attempt: number; attempted_at: string; status_code: number | null; error_code: string | null; response_excerpt: string | null }[];
    }>(
      `select d.message_id, d.status, (select json_agg(a order by a.attempt) from webhook_attempts a where a.delivery_id = d.id) as attempts
         from webhook_deliveries d where d.endpoint_id = $1 order by d.id`,
      [endpointId],
    );
    expect(rows.map((row) => row.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    for (const row of rows) {
      expect(row.attempts.map((attempt) => [attempt.attempt, attempt.status_code, attempt.error_code])).toEqual([
        [1, 500, null],
        [2, null, 'timeout'],
        [3, 204, null],
      ]);
      // The spacing of the attempts is the schedule's, on the test clock.
      const times = row.attempts.map((attempt) => new Date(attempt.attempted_at).getTime());
      expect([times[1] - times[0], times[2] - times[1]]).toEqual([RETRY_DELAYS_MS[0], RETRY_DELAYS_MS[1]]);
      // The receiver's answer is kept truncated to 1 KiB.
      expect(row.attempts[0].response_excerpt?.length).toBe(1_024);
    }
  });
});

describe('Given targets inside the network, with private targets not allowed', () => {
  it('refuses 127.0.0.1, 10.x, 169.254.169.254 and a name resolving to a private address, without connecting', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    let connections = 0;
    const listener = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((listening) => listener.listen(0, '127.0.0.1', listening));
    closers.push(() => new Promise<void>((closed) => listener.close(() => closed())));
    const port = (listener.address() as net.AddressInfo).port;
    const targets = [
      `https://127.0.0.1:${port}/`,
      'https://10.1.2.3/hooks',
      'https://169.254.169.254/latest/meta-data/',
      `https://localhost:${port}/`,
      `https://[::ffff:127.0.0.1]:${port}/`,
    ];
    const endpoints = [];
    for (const url of targets) endpoints.push((await createEndpoint(org, url, clock.now())).endpointId);
    await completedCheck(org, clock.now());
    await subscriberCaughtUp();
    const sender = new WebhookSender(db.pool, clock, sealing, options({ allowPrivateTargets: false, timeoutMs: 5_000 }));
    expect(await sender.claimAndSend()).toBe(targets.length);
    await sender.settled();

    const { rows } = await db.pool.query<{ endpoint_id: string; error_code: string; status_code: number | null; latency_ms: number }>(
      'select d.endpoint_id, a.error_code, a.status_code, a.latency_ms from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = any($1)',
      [endpoints],
    );
    expect(rows).toHaveLength(targets.length);
    for (const row of rows) expect([row.error_code, row.status_code]).toEqual(['target_refused', null]);
    expect(connections).toBe(0);
  });

  it('does not follow a redirect to the metadata address or anywhere else', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const redirectedTo = await receiver(() => 200);
    closers.push(redirectedTo.close);
    // The first hop is a local receiver, so it needs the allowance; the redirect's targets are what is under test.
    const redirecting = http.createServer((request, response) => {
      response.writeHead(request.url === '/to-local' ? 307 : 302, { location: request.url === '/to-local' ? redirectedTo.url : 'http://169.254.169.254/latest/meta-data/' }).end();
    });
    await new Promise<void>((listening) => redirecting.listen(0, '127.0.0.1', listening));
    closers.push(() => new Promise<void>((closed) => redirecting.close(() => closed())));
    const base = `http://127.0.0.1:${(redirecting.address() as net.AddressInfo).port}`;
    const metadata = await createEndpoint(org, `${base}/to-metadata`, clock.now());
    const local = await createEndpoint(org, `${base}/to-local`, clock.now());
    await completedCheck(org, clock.now());
    await subscriberCaughtUp();
    const sender = new WebhookSender(db.pool, clock, sealing, options({ timeoutMs: 2_000 }));
    expect(await sender.claimAndSend()).toBe(2);
    await sender.settled();
    const { rows } = await db.pool.query<{ endpoint_id: string; status_code: number; outcome: string; status: string }>(
      'select d.endpoint_id, a.status_code, a.outcome, d.status from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = any($1) order by d.endpoint_id',
      [[metadata.endpointId, local.endpointId]],
    );
    expect(rows.map((row) => [row.endpoint_id, row.status_code, row.outcome, row.status]).sort()).toEqual(
      [
        [metadata.endpointId, 302, 'failed', 'pending'],
        [local.endpointId, 307, 'failed', 'pending'],
      ].sort(),
    );
    expect(redirectedTo.received).toHaveLength(0);
  });
});

describe('Given a secret rotated with an overlap', () => {
  it('during the overlap a receiver holding either secret verifies; after it, only the new one', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 200);
    closers.push(local.close);
    const { endpointId, secret: previous } = await createEndpoint(org, local.url, clock.now());
    await subscriberCaughtUp();
    const firstSecretId = (await db.pool.query<{ secrets: { secretId: string }[] }>('select secrets from webhook_endpoints where id = $1', [endpointId])).rows[0].secrets[0]
      .secretId;
    const current = await rotate(org, endpointId, firstSecretId, new Date(clock.now().getTime() + 3_600_000), clock.now());
    await completedCheck(org, clock.now());
    await subscriberCaughtUp();
    const sender = new WebhookSender(db.pool, clock, sealing, options());
    await sender.claimAndSend();
    await sender.settled();
    expect(local.received).toHaveLength(1);
    const during = local.received[0];
    expect(during.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyAt(previous, during, clock.now())).toMatchObject({ type: 'verification.completed' });
    expect(verifyAt(current, during, clock.now())).toMatchObject({ type: 'verification.completed' });

    clock.advance(3_600_001);
    await completedCheck(org, clock.now());
    await subscriberCaughtUp();
    await sender.claimAndSend();
    await sender.settled();
    const after = local.received[1];
    expect(after.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verifyAt(current, after, clock.now())).toMatchObject({ type: 'verification.completed' });
    expect(() => verifyAt(previous, after, clock.now())).toThrow();
  });
});

describe('Given two sender instances', () => {
  it('each event is delivered once, by one of them', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 200);
    closers.push(local.close);
    await createEndpoint(org, local.url, clock.now());
    const expected = await completedChecks(org, 30, clock.now());
    await subscriberCaughtUp();
    const otherPool = new pg.Pool({ connectionString: db.url, max: 4 });
    closers.push(() => otherPool.end());
    const senders = [
      new WebhookSender(db.pool, clock, sealing, options({ concurrencyPerEndpoint: 8 })),
      new WebhookSender(otherPool, clock, sealing, options({ concurrencyPerEndpoint: 8 })),
    ];
    for (const sender of senders) sender.start();
    await waitUntil(() => local.received.length >= expected.length, 20_000, 'every delivery');
    // Time for a duplicate to show up, were there one.
    await new Promise((pause) => setTimeout(pause, 300));
    for (const sender of senders) await sender.stop();
    expect(local.received.map((request) => request.headers['webhook-id']).sort()).toEqual([...expected].sort());
  });
});

describe('Given a receiver that fails every attempt', () => {
  it('retries on the whole schedule, then fails the delivery and reports its endpoint as failing, once', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 503);
    closers.push(local.close);
    const { endpointId } = await createEndpoint(org, local.url, clock.now());
    const expected = await completedCheck(org, clock.now());
    await subscriberCaughtUp();
    const failing: string[] = [];
    const sender = new WebhookSender(db.pool, clock, sealing, options({ onEndpointFailing: async (id) => void failing.push(id) }));
    // The other tests' deliveries still pending come due too as the clock moves: only this endpoint's are counted.
    for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
      await sender.claimAndSend();
      await sender.settled();
      expect(local.received).toHaveLength(attempt);
      if (attempt <= RETRY_DELAYS_MS.length) clock.advance(RETRY_DELAYS_MS[attempt - 1]);
    }
    clock.advance(30 * 86_400_000);
    await sender.claimAndSend();
    await sender.settled();
    expect(local.received.map((request) => request.headers['webhook-id'])).toEqual(Array(RETRY_DELAYS_MS.length + 1).fill(expected));
    const { rows } = await db.pool.query<{ status: string; attempts: number }>('select status, attempts from webhook_deliveries where endpoint_id = $1', [endpointId]);
    expect(rows).toEqual([{ status: 'failed', attempts: RETRY_DELAYS_MS.length + 1 }]);
    expect(failing.filter((id) => id === endpointId)).toEqual([endpointId]);
  });
});

describe('Given an organization offboarded after it made an endpoint', () => {
  it('its deliveries are never claimed nor sent, and its target and secret no longer open, even in a process that opened them before', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 200);
    closers.push(local.close);
    const { endpointId } = await createEndpoint(org, local.url, clock.now());
    await subscriberCaughtUp();
    const [row] = (await db.pool.query<{ target: string }>('select target from webhook_endpoints where id = $1', [endpointId])).rows;
    // Opened once here: this process's cache now holds the organization's keys.
    expect((await sealing.openTarget(org, endpointId, row.target)).url).toBe(local.url);

    // The offboarding runs in another process (its own DataKeys): this one learns it from the row alone.
    await new DataKeys(db.pool, masterKey).destroyOrganization(org, clock.now());
    const messageId = await completedCheck(org, clock.now());
    await subscriberCaughtUp();
    const sender = new WebhookSender(db.pool, clock, sealing, options());
    await sender.claimAndSend();
    await sender.settled();
    expect(local.received).toHaveLength(0);
    const { rows } = await db.pool.query<{ attempts: number; status: string }>('select attempts, status from webhook_deliveries where message_id = $1', [messageId]);
    expect(rows).toEqual([{ attempts: 0, status: 'pending' }]);
    await expect(sealing.openTarget(org, endpointId, row.target)).rejects.toBeInstanceOf(OrganizationKeysDestroyed);
  });
});

describe('Given an endpoint whose values were sealed under the master key directly (no organization: prefix)', () => {
  it('still opens and signs its deliveries while that master key is configured, and not under another', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 200);
    closers.push(local.close);
    const { endpointId, secret } = await createEndpoint(org, local.url, clock.now(), {
      target: (_, id, url) => masterKey.wrap(Buffer.from(JSON.stringify({ url, description: 'sealed under the master key' })), `webhook-endpoint-target/${id}`),
      secret: (_, id, secretId, value) => masterKey.wrap(Buffer.from(value), `webhook-endpoint-secret/${id}/${secretId}`),
    });
    await completedCheck(org, clock.now());
    await subscriberCaughtUp();
    const sender = new WebhookSender(db.pool, clock, sealing, options());
    await sender.claimAndSend();
    await sender.settled();
    expect(local.received).toHaveLength(1);
    expect(verifyAt(secret, local.received[0], clock.now())).toMatchObject({ type: 'verification.completed' });
    const [row] = (await db.pool.query<{ target: string }>('select target from webhook_endpoints where id = $1', [endpointId])).rows;
    const otherMaster = new LocalKeyManagement(randomBytes(32));
    await expect(new EndpointSealing(new DataKeys(db.pool, otherMaster), otherMaster).openTarget(org, endpointId, row.target)).rejects.toThrow();
  });
});

describe('Given more due deliveries to one endpoint than it may have in flight', () => {
  it('sends the next ones as soon as earlier ones finish, not a poll later', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 204);
    closers.push(local.close);
    await createEndpoint(org, local.url, clock.now());
    const expected = await completedChecks(org, 12, clock.now());
    await subscriberCaughtUp();
    // Four in flight at once, and a poll far longer than the test: only a claim on a finished send can take the other eight.
    const sender = new WebhookSender(db.pool, clock, sealing, options({ concurrencyPerEndpoint: 4, pollMs: 600_000 }));
    sender.start();
    closers.push(() => sender.stop());
    await waitUntil(() => expected.every((id) => local.received.some((request) => request.headers['webhook-id'] === id)), 15_000, 'all twelve deliveries to arrive');
    expect(new Set(local.received.map((request) => request.headers['webhook-id']))).toEqual(new Set(expected));
  });
});

describe('Given two sender instances and one slow endpoint', () => {
  it('never has more than the endpoint’s bound in flight across both, and makes each delivery once', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    // Answers each request 60 ms after it came, noting how many were open at once.
    let open = 0;
    let mostOpen = 0;
    const arrived: string[] = [];
    const server = http.createServer((request, response) => {
      open++;
      mostOpen = Math.max(mostOpen, open);
      request.resume();
      request.on('end', () => {
        arrived.push(String(request.headers['webhook-id']));
        setTimeout(() => {
          open--;
          response.writeHead(204).end();
        }, 60);
      });
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    });
    await createEndpoint(org, `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hooks`, clock.now());
    const expected = await completedChecks(org, 40, clock.now());
    await subscriberCaughtUp();
    const otherPool = new pg.Pool({ connectionString: db.url, max: 4 });
    closers.push(() => otherPool.end());
    const senders = [
      new WebhookSender(db.pool, clock, sealing, options({ concurrencyPerEndpoint: 3 })),
      new WebhookSender(otherPool, clock, sealing, options({ concurrencyPerEndpoint: 3 })),
    ];
    for (const sender of senders) sender.start();
    await waitUntil(() => arrived.length >= expected.length, 30_000, 'every delivery');
    await new Promise((pause) => setTimeout(pause, 300));
    for (const sender of senders) await sender.stop();
    expect(mostOpen).toBeLessThanOrEqual(3);
    expect([...arrived].sort()).toEqual([...expected].sort());
    await expectEachSucceededAtFirstAttempt(expected);
  });
});

describe('Given a database that takes a second to answer each statement', () => {
  it('sends an endpoint’s backlog back to back, without a statement between one send and the next', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 204);
    closers.push(local.close);
    await createEndpoint(org, local.url, clock.now());
    const expected = await completedChecks(org, 16, clock.now());
    await subscriberCaughtUp();
    // Every statement waits a second before it goes: the sends must not wait on the statements that record them.
    let answered = 0;
    const slowPool = {
      query: async (...args: Parameters<pg.Pool['query']>) => {
        await new Promise((pause) => setTimeout(pause, 1_000));
        const result: unknown = await (db.pool.query as (...all: unknown[]) => Promise<unknown>)(...args);
        answered++;
        return result;
      },
    } as unknown as pg.Pool;
    const sender = new WebhookSender(slowPool, clock, sealing, options({ concurrencyPerEndpoint: 2, pollMs: 600_000 }));
    sender.start();
    closers.push(() => sender.stop());
    await waitUntil(() => new Set(local.received.map((request) => request.headers['webhook-id'])).size === expected.length, 30_000, 'all sixteen deliveries to arrive');
    // The claim, and at most the first recording: two in flight per round would take eight rounds of record-then-claim.
    expect(answered).toBeLessThanOrEqual(2);
    await sender.settled();
    const { rows } = await db.pool.query<{ n: number }>("select count(*)::int as n from webhook_deliveries where message_id = any($1) and status = 'succeeded'", [expected]);
    expect(rows[0].n).toBe(expected.length);
  });
});

describe('Given an instance that died holding an endpoint and a claim', () => {
  it('no other instance sends to the endpoint until its lease ends; then the delivery is sent again, as its next attempt', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 204);
    closers.push(local.close);
    const { endpointId } = await createEndpoint(org, local.url, clock.now());
    const claimedBeforeDeath = await completedCheck(org, clock.now());
    const waiting = await completedCheck(org, clock.now());
    await subscriberCaughtUp();
    // What the dead instance left: the endpoint's lease and one delivery claimed, both for the timeout (3 s) plus 30 s.
    const until = new Date(clock.now().getTime() + 33_000);
    await db.pool.query('insert into webhook_endpoint_leases (endpoint_id, holder, held_until) values ($1, $2, $3)', [endpointId, 'sender_dead', until]);
    await db.pool.query('update webhook_deliveries set attempts = 1, next_attempt_at = $2 where message_id = $1', [claimedBeforeDeath, until]);
    const sender = new WebhookSender(db.pool, clock, sealing, options());

    expect(await sender.claimAndSend()).toBe(0);
    clock.advance(32_999);
    expect(await sender.claimAndSend()).toBe(0);
    expect(local.received).toHaveLength(0);
    clock.advance(1);
    expect(await sender.claimAndSend()).toBe(2);
    await sender.settled();
    expect(local.received.map((request) => request.headers['webhook-id']).sort()).toEqual([claimedBeforeDeath, waiting].sort());
    const { rows } = await db.pool.query<{ message_id: string; attempts: number[] }>(
      `select d.message_id, array(select a.attempt from webhook_attempts a where a.delivery_id = d.id order by a.attempt) as attempts
         from webhook_deliveries d where d.endpoint_id = $1`,
      [endpointId],
    );
    expect(Object.fromEntries(rows.map((row) => [row.message_id, row.attempts]))).toEqual({ [claimedBeforeDeath]: [2], [waiting]: [1] });
    await sender.stop();
    expect((await db.pool.query('select 1 from webhook_endpoint_leases where endpoint_id = $1', [endpointId])).rowCount).toBe(0);
  });
});

describe('Given a started sender with a backlog on two endpoints and a short poll', () => {
  it('never has a claim and a recording in flight at once, and records every delivery once', async () => {
    const clock = new TestClock(new Date());
    const local = await receiver(() => 204);
    closers.push(local.close);
    const expected: string[] = [];
    for (const org of [organization(), organization()]) {
      await createEndpoint(org, local.url, clock.now());
      for (let i = 0; i < 30; i++) expected.push(await completedCheck(org, clock.now()));
    }
    await subscriberCaughtUp();
    // The sender's claims and recordings are its statements that start with a `with`: how many are in flight at once.
    let open = 0;
    let mostOpen = 0;
    const countingPool = {
      query: async (...args: Parameters<pg.Pool['query']>) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as pg.QueryConfig).text;
        const counted = text.trimStart().startsWith('with');
        if (counted) mostOpen = Math.max(mostOpen, ++open);
        try {
          return await (db.pool.query as (...all: unknown[]) => Promise<unknown>)(...args);
        } finally {
          if (counted) open--;
        }
      },
    } as unknown as pg.Pool;
    // A poll far shorter than a send's recording: a claim is wanted while recordings are under way, all along.
    const sender = new WebhookSender(countingPool, clock, sealing, options({ concurrencyPerEndpoint: 2, pollMs: 1 }));
    sender.start();
    closers.push(() => sender.stop());
    await waitUntil(() => new Set(local.received.map((request) => request.headers['webhook-id'])).size === expected.length, 30_000, 'every delivery');
    await sender.settled();
    expect(mostOpen).toBe(1);
    await expectEachSucceededAtFirstAttempt(expected);
  });
});

describe('Given a sender on a pool of one connection', () => {
  it('claims and records through prepared statements of that connection, planned once', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await receiver(() => 204);
    closers.push(local.close);
    await createEndpoint(org, local.url, clock.now());
    const expected = await completedChecks(org, 6, clock.now());
    await subscriberCaughtUp();
    const onePool = createPool(db.url, 1);
    closers.push(() => onePool.end());
    const sender = new WebhookSender(onePool, clock, sealing, options({ concurrencyPerEndpoint: 1, pollMs: 600_000 }));
    // Started: its recordings claim too.
    sender.start();
    await waitUntil(() => new Set(local.received.map((request) => request.headers['webhook-id'])).size === expected.length, 15_000, 'every delivery');
    await sender.settled();
    // A second claim: its statement runs again on the same connection, nothing left to take.
    expect(await sender.claimAndSend()).toBe(0);
    const { rows } = await onePool.query<{ kind: string; calls: number; generic: number }>(
      `select split_part(ltrim(statement), ' ', 2) as kind, (generic_plans + custom_plans)::int as calls, generic_plans::int as generic
         from pg_prepared_statements where ltrim(statement) like 'with candidates%' or ltrim(statement) like 'with results%' order by kind`,
    );
    await sender.stop();
    expect(rows.map((row) => row.kind)).toEqual(['candidates', 'results']);
    // The service's pool asks for generic plans: one plan per statement and connection, used by every call.
    expect(rows.every((row) => row.calls >= 1 && row.generic === row.calls)).toBe(true);
    expect(rows.find((row) => row.kind === 'candidates')?.calls).toBeGreaterThan(1);
  });
});

/** A pool that hands the sender's statements to the test's, noting the recordings' batch sizes, and fails them all once `crashed` is set. */
function watchedPool(): { pool: pg.Pool; recorded: number[]; crash: () => void } {
  const recorded: number[] = [];
  let crashed = false;
  const pool = {
    query: async (...args: Parameters<pg.Pool['query']>) => {
      const config = typeof args[0] === 'string' ? { text: args[0], values: args[1] as unknown[] } : (args[0] as pg.QueryConfig);
      const recording = config.text.trimStart().startsWith('with results');
      if (crashed || (recording && crashing)) {
        crashed = true;
        throw new Error('connection lost: the instance died');
      }
      if (recording) recorded.push((config.values?.[0] as unknown[]).length);
      return (db.pool.query as (...all: unknown[]) => Promise<unknown>)(...args);
    },
  } as unknown as pg.Pool;
  let crashing = false;
  return { pool, recorded, crash: () => (crashing = true) };
}

/** A receiver that holds every request until `count` have come, then answers them all 204 at once. */
async function answeringTogether(count: number): Promise<{ url: string; received: string[]; close: () => Promise<void> }> {
  const held: http.ServerResponse[] = [];
  const received: string[] = [];
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received.push(String(request.headers['webhook-id']));
      held.push(response);
      if (held.length % count === 0) for (const waiting of held.splice(0)) waiting.writeHead(204).end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hooks`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}

describe('Given eight sends to one endpoint that end together', () => {
  it('records their eight attempts in one statement', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await answeringTogether(8);
    closers.push(local.close);
    await createEndpoint(org, local.url, clock.now());
    const expected = await completedChecks(org, 8, clock.now());
    await subscriberCaughtUp();
    const watched = watchedPool();
    // The answers leave together, but a loaded machine may read one of them more than the 25 ms a
    // recording lingers after the others (seen on CI: seven, then one): here it lingers long enough
    // that only a recording per ended attempt could split the batch.
    const sender = new WebhookSender(watched.pool, clock, sealing, options({ concurrencyPerEndpoint: 8, pollMs: 600_000, recordLingerMs: 3_000 }));
    expect(await sender.claimAndSend()).toBe(8);
    await sender.settled();
    // Recorded as each ended, the first would have gone alone and the other seven in the next statement.
    expect(watched.recorded).toEqual([8]);
    const { rows } = await db.pool.query<{ n: number }>(
      "select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.message_id = any($1) and d.status = 'succeeded'",
      [expected],
    );
    expect(rows[0].n).toBe(8);
  });
});

describe('Given an instance that died after its sends ended, before their batch was recorded', () => {
  it('another instance sends them again once the claims end, and every delivery has its attempt on record', async () => {
    const clock = new TestClock(new Date());
    const org = organization();
    const local = await answeringTogether(6);
    closers.push(local.close);
    const { endpointId } = await createEndpoint(org, local.url, clock.now());
    const expected = await completedChecks(org, 6, clock.now());
    await subscriberCaughtUp();
    const dying = watchedPool();
    dying.crash();
    const dead = new WebhookSender(dying.pool, clock, sealing, options({ concurrencyPerEndpoint: 6, pollMs: 600_000 }));
    expect(await dead.claimAndSend()).toBe(6);
    await dead.settled();
    expect(new Set(local.received)).toEqual(new Set(expected));
    // Its leases stay behind (its pool is gone): nobody else sends to the endpoint or the deliveries until they end.
    const survivor = new WebhookSender(db.pool, clock, sealing, options({ concurrencyPerEndpoint: 6, pollMs: 600_000 }));
    closers.push(() => survivor.stop());
    expect(await survivor.claimAndSend()).toBe(0);
    clock.advance(2 * options().timeoutMs + 30_000);
    expect(await survivor.claimAndSend()).toBe(6);
    await survivor.settled();
    expect(local.received.filter((id) => expected.includes(id))).toHaveLength(12);
    const { rows } = await db.pool.query<{ message_id: string; status: string; attempts: number[] }>(
      `select d.message_id, d.status, array(select a.attempt from webhook_attempts a where a.delivery_id = d.id order by a.attempt) as attempts
         from webhook_deliveries d where d.endpoint_id = $1`,
      [endpointId],
    );
    // The dead instance's attempts were never written: each delivery's second attempt is on record.
    expect(rows.map((row) => [row.message_id, row.status, row.attempts]).sort()).toEqual(expected.map((id) => [id, 'succeeded', [2]]).sort());
    await dead.stop();
  });
});
