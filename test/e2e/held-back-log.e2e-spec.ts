import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import pg from 'pg';
import { waitUntil } from '../../projections/runner/counting.projection.testing.js';
import { freePort, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/database/embedded-postgres.js';
import { HELD_BACK_DEGRADED_SECONDS } from '../../src/health/log-holdback.monitor.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { describeOnProject } from '../support/store-independent.js';

describeOnProject('postgres', 'A PostgreSQL log held back by an open transaction', "the visible bound is the PostgreSQL log's", () => {
  let app: TestApp;
  let holder: pg.Client;
  // A cluster of its own: the transaction held open here holds back every database of its cluster,
  // and would hold back the other test files' logs for as long.
  let cluster: EmbeddedPostgresHandle;
  const clusterDir = resolve('.data', 'test', `held-back-${process.pid}-${randomBytes(4).toString('hex')}`);

  beforeAll(async () => {
    cluster = await startEmbeddedPostgres({ dataDir: clusterDir, port: await freePort(), database: 'ledger', ephemeral: true });
    app = await startTestApp({ database: { url: cluster.url, name: 'ledger', drop: async () => undefined } });
    holder = new pg.Client({ connectionString: app.database.url, application_name: 'forgotten-session' });
    await holder.connect();
  });

  afterAll(async () => {
    await holder?.end().catch(() => undefined);
    await app?.close();
    await cluster?.stop();
    await rm(clusterDir, { recursive: true, force: true });
  });

  it('is reported, with how long and by which backend, in /health/ready (degraded), /admin/v1/projections and the metrics, and clears when the transaction ends', async () => {
    await waitUntil(async () => (await app.admin('GET', '/admin/v1/projections')).body.data.every((entry: { worker: unknown }) => entry.worker !== null), 10_000, 'the workers');
    const ready = await app.request('GET', '/health/ready');
    expect(ready.body.data).toMatchObject({ status: 'ready', checks: { eventLog: { status: 'ok', heldBackEvents: 0 } } });

    // A session that began a transaction, took a transaction id (as any write does) and went quiet.
    await holder.query('begin');
    const [{ pid }] = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid, pg_current_xact_id()')).rows;
    // An organization registered after it: committed, but behind the bound for every reader.
    const registered = await app.admin('POST', '/admin/v1/organizations', { name: `Held Back ${randomUUID().slice(0, 8)}`, email: 'ops@example.com' });
    expect(registered.status).toBe(201);

    await new Promise((resolveWait) => setTimeout(resolveWait, HELD_BACK_DEGRADED_SECONDS * 1_000 + 200));
    const degraded = await app.request('GET', '/health/ready');
    expect(degraded.status).toBe(200);
    expect(degraded.body.data).toMatchObject({
      status: 'degraded',
      checks: {
        postgres: 'ok',
        eventStore: 'ok',
        eventLog: { status: 'held_back', holder: { kind: 'backend', pid, applicationName: 'forgotten-session', state: 'idle in transaction' } },
      },
    });
    expect(degraded.body.data.checks.eventLog.heldBackSeconds).toBeGreaterThanOrEqual(HELD_BACK_DEGRADED_SECONDS);
    expect(degraded.body.data.reasons).toEqual([expect.stringMatching(new RegExp(`held back for \\d+\\.\\d s .* by backend pid ${pid} \\(idle in transaction`))]);

    const projections = (await app.admin('GET', '/admin/v1/projections')).body.data as Array<Record<string, any>>;
    const organizations = projections.find((entry) => entry.name === 'organizations');
    // Lag is counted against the newest event written, not the visible head: the new organization's events are lag.
    expect(BigInt(organizations?.newestPosition)).toBeGreaterThan(BigInt(organizations?.headPosition));
    expect(organizations).toMatchObject({ state: 'held_back', logHeldBack: { holder: { kind: 'backend', pid } } });
    expect(organizations?.lagEvents).toBeGreaterThan(0);
    expect(organizations?.lagSeconds).toBeGreaterThanOrEqual(HELD_BACK_DEGRADED_SECONDS);

    const metrics = await (await fetch(`${app.baseUrl}/metrics`)).text();
    const heldSeconds = Number(/^ivl_event_log_held_back_seconds (\S+)$/m.exec(metrics)?.[1]);
    expect(heldSeconds).toBeGreaterThanOrEqual(HELD_BACK_DEGRADED_SECONDS);
    expect(metrics).toMatch(new RegExp(`^ivl_event_log_holder_transaction_seconds\\{kind="backend",pid="${pid}"\\} \\S+$`, 'm'));

    await holder.query('commit');
    await waitUntil(async () => (await app.request('GET', '/health/ready')).body.data.status === 'ready', 5_000, 'readiness to clear');
    await waitUntil(
      async () =>
        (await app.admin('GET', '/admin/v1/projections')).body.data.every(
          (entry: { logHeldBack: unknown; state: string }) => entry.logHeldBack === null && entry.state !== 'held_back',
        ),
      10_000,
      'the projections to catch up',
    );
  });
});
