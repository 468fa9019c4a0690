import { describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from '../../src/database/embedded-postgres.js';
import type { RecordedEvent } from '../../src/event-store/event-store.port.js';
import { processTestBed } from '../support/process-test-bed.js';
import { allEvents } from '../support/event-store.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { DIST, exited, healthy, startNodeProcess } from '../support/processes.js';

const PROVIDER_TIMEOUT_MS = 1_500;
const CLIENTS = 24;

interface Outcome {
  readonly sentAtMs: number;
  readonly endedAtMs: number;
  /** The HTTP status, or undefined when no response came (connection refused or closed before one). */
  readonly status?: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body?: any;
  /** Set when headers came but the body could not be read or parsed: a response cut mid-way. */
  readonly cut?: string;
  readonly refused?: string;
}

let child: ChildProcess | undefined;

async function call(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Outcome> {
  const sentAtMs = Date.now();
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    return { sentAtMs, endedAtMs: Date.now(), refused: String((error as Error).cause ?? error) };
  }
  try {
    const text = await response.text();
    return { sentAtMs, endedAtMs: Date.now(), status: response.status, body: JSON.parse(text) };
  } catch (error) {
    return { sentAtMs, endedAtMs: Date.now(), status: response.status, cut: String(error) };
  }
}

const bed = processTestBed('ledger-shutdown-', {
  poolMax: 4,
  beforeTeardown: async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (child !== undefined) await exited(child);
  },
});

describe('Graceful shutdown of the service process', () => {
  it('SIGTERM under load: exit 0, every response complete, no check lost, no reservation left open', async () => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const adminToken = `admin_${randomBytes(24).toString('base64url')}`;
    const started = await startNodeProcess(DIST.main, {
      env: {
        PATH: process.env.PATH,
        ...bed.events.env,
        DATABASE_URL: bed.database.url,
        CONSOLE_MAIL_LOG_ONLY: 'true',
        DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
        DATA_DIR: bed.dir,
        PORT: String(port),
        HOST: '127.0.0.1',
        ADMIN_TOKEN: adminToken,
        RUN_PROJECTIONS: 'true',
        PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
        SANDBOX_CREDIT_KOBO: '1000000000',
        SHUTDOWN_TIMEOUT_MS: '20000',
        DB_POOL_SIZE: '10',
        LOG_LEVEL: 'info',
      },
      keepChars: 200_000,
      ready: healthy(baseUrl),
    });
    const service = started.child;
    child = service;
    const admin = { authorization: `Bearer ${adminToken}` };
    const org = await call(baseUrl, 'POST', '/admin/v1/organizations', admin, { name: 'Shutdown Ltd', email: 'ops@shutdown.example' });
    expect(org.status).toBe(201);
    const organizationId: string = org.body.data.id;
    const issued = await call(baseUrl, 'POST', `/admin/v1/organizations/${organizationId}/keys`, admin, { environment: 'test' });
    expect(issued.status).toBe(201);
    const key: string = issued.body.data.key;
    const integrator = { 'x-service-key': key };
    while ((await call(baseUrl, 'GET', '/v1/wallet', integrator)).status !== 200) await new Promise((wake) => setTimeout(wake, 50));

    // Clients that keep posting (one in three a slow provider, which answers only at the timeout)
    // until the service stops answering them.
    const outcomes: Outcome[] = [];
    let signalledAtMs = Number.POSITIVE_INFINITY;
    /** When each client's slow check in flight was sent. */
    const slowSentAtMs = new Map<number, number>();
    const client = async (index: number) => {
      for (let round = 0; ; round += 1) {
        const slow = (index + round) % 3 === 0;
        if (slow) slowSentAtMs.set(index, Date.now());
        const outcome = await call(baseUrl, 'POST', '/v1/nin', integrator, { nin: `${String(10_000_00 + index * 1_000 + round).padStart(10, '0')}${slow ? '3' : '5'}` });
        slowSentAtMs.delete(index);
        outcomes.push(outcome);
        if (outcome.status === undefined || outcome.status === 503 || outcome.cut !== undefined) return;
        if (Date.now() > signalledAtMs + 30_000) return;
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, (_, index) => client(index)));
    // Signal once the load is warm and a slow check is well under way (sent long enough ago to be
    // in the service's hands) with most of its provider timeout still ahead: the slow checks come
    // in waves, and a fixed delay can fall between two of them on a slow machine.
    await new Promise((wake) => setTimeout(wake, 2_000));
    const slowInFlight = () => [...slowSentAtMs.values()].some((sentAtMs) => Date.now() - sentAtMs >= 200 && Date.now() - sentAtMs <= PROVIDER_TIMEOUT_MS / 3);
    const signalDeadline = Date.now() + 20_000;
    while (!slowInFlight() && Date.now() < signalDeadline) await new Promise((wake) => setTimeout(wake, 5));
    signalledAtMs = Date.now();
    service.kill('SIGTERM');
    await load;
    await exited(service);

    expect({ code: service.exitCode, signal: service.signalCode }).toEqual({ code: 0, signal: null });
    expect(started.output()).toMatch(/"msg":"stopped"/);

    const answered = outcomes.filter((outcome) => outcome.status !== undefined);
    // Every response that started arrived whole, in the envelope.
    expect(outcomes.filter((outcome) => outcome.cut !== undefined)).toEqual([]);
    // 201 found, 502 the slow provider's timeout, 503 a request that reached a draining instance.
    expect(answered.filter((outcome) => ![201, 502, 503].includes(outcome.status ?? 0))).toEqual([]);
    for (const outcome of answered) expect(typeof outcome.body?.status).toBe('boolean');
    // Checks in flight at the signal were finished and answered: slow ones (502 at the provider timeout) after it.
    const finishedAfterSignal = answered.filter(
      (outcome) => outcome.sentAtMs < signalledAtMs && outcome.endedAtMs > signalledAtMs && (outcome.status === 201 || outcome.status === 502),
    );
    expect(finishedAfterSignal.filter((outcome) => outcome.status === 502 && outcome.endedAtMs - signalledAtMs > PROVIDER_TIMEOUT_MS / 3).length).toBeGreaterThan(0);
    expect(answered.filter((outcome) => outcome.status === 201).length).toBeGreaterThan(0);
    // Requests after the signal found the port closed (or a 503): nothing else.
    for (const outcome of outcomes.filter((entry) => entry.status === undefined)) expect(outcome.refused).toMatch(/ECONNREFUSED|ECONNRESET|other side closed|SocketError/);

    // No check started without its answer reaching the client: every verification in the log is one a client was told about.
    const answeredReferences = new Set(
      answered.map((outcome) => outcome.body?.data?.reference ?? outcome.body?.error?.details?.reference).filter((reference) => reference !== undefined),
    );
    const events = await allEvents(bed.events.store, { streamCategories: ['verification', 'wallet'] });
    const byStream = new Map<string, RecordedEvent[]>();
    for (const event of events) byStream.set(event.streamId, [...(byStream.get(event.streamId) ?? []), event]);
    const verificationStreams = [...byStream.keys()].filter((streamId) => streamId.startsWith('verification-'));
    expect(verificationStreams.length).toBe(answeredReferences.size);
    for (const streamId of verificationStreams) {
      expect(answeredReferences.has(streamId.slice('verification-'.length))).toBe(true);
      // Terminal: requested, then completed or failed.
      expect((byStream.get(streamId) ?? []).map((event) => event.type)).toEqual(['VerificationRequested', expect.stringMatching(/^Verification(Completed|Failed)$/)]);
    }
    // Every reservation closed: debited (found) or released (failed).
    const open = new Set<string>();
    for (const event of byStream.get(`wallet-${organizationId}.test`) ?? []) {
      const reference = (event.data as { reference?: string }).reference ?? '';
      if (event.type === 'WalletFundsReserved') open.add(reference);
      if (event.type === 'WalletDebited' || event.type === 'WalletReservationReleased') open.delete(reference);
    }
    expect([...open]).toEqual([]);
  });
});
