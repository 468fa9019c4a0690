import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { streamEvents, testEventStoreKind, testEventStoreEnv } from '../../test/support/event-store.js';
import { createOrganization, issueKey } from '../../test/support/fixtures.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { WalletLedger } from '../wallets/wallet-ledger.port.js';
import { CSV_COLUMNS } from './audit-format.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../../test/support/data-protection.js';

const run = promisify(execFile);
const ROOT = resolve('.');
const PRICE_KOBO = 10_000;

interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `npm run audit:wallet` as an auditor runs it: the built command against the database and event
 * store of a running service. Built into a directory of its own (see src/admin/cli.e2e-spec.ts).
 */
describe('audit:wallet', () => {
  let app: TestApp;
  let pool: pg.Pool;
  let buildDir: string;
  let cliEnv: Record<string, string | undefined>;

  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: '0' } });
    pool = new pg.Pool({ connectionString: app.database.url, max: 2 });
    buildDir = await mkdtemp(join(tmpdir(), 'ledger-audit-'));
    for (const entry of ['src', 'projections', 'bench', '.swcrc', 'package.json', 'node_modules']) await symlink(join(ROOT, entry), join(buildDir, entry));
    await run(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: buildDir });
    cliEnv = {
      PATH: process.env.PATH,
      ...(await testEventStoreEnv(app.database)),
      DATABASE_URL: app.database.url,
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: join(buildDir, '.data'),
    };
  });
  afterAll(async () => {
    await pool?.end();
    await app?.close();
    if (buildDir !== undefined) await rm(buildDir, { recursive: true, force: true });
  });

  async function audit(...args: string[]): Promise<CliResult> {
    return auditWith({}, ...args);
  }
  async function auditWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
    try {
      const { stdout, stderr } = await run(process.execPath, [join(buildDir, 'dist/src/audit/audit-cli.js'), ...args], {
        cwd: buildDir,
        env: { ...cliEnv, ...env },
        timeout: 60_000,
        maxBuffer: 64 * 1024 * 1024,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      if (typeof failed.code !== 'number') throw error;
      return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
    }
  }
  async function auditJson(...args: string[]) {
    const result = await audit('--format', 'json', ...args);
    return { ...result, document: result.stdout === '' ? undefined : JSON.parse(result.stdout) };
  }

  async function fundedWallet(amountKobo: number): Promise<{ organizationId: string; key: string }> {
    const { id } = await createOrganization(app, { scopes: ['nin'] });
    const { key } = await issueKey(app, id, { environment: 'test' });
    expect((await app.admin('POST', `/admin/v1/organizations/${id}/wallets/test/fundings`, { amountKobo, reference: 'INV-0001' })).status).toBe(201);
    return { organizationId: id, key };
  }

  const check = (key: string, nin: string) => app.request('POST', '/v1/nin', { body: { nin }, headers: { 'x-service-key': key } });
  /** Until the wallet and verification read models hold a check's events (before a test edits them by hand). */
  const readModelsCaughtUp = async (organizationId: string, reference: string) => {
    const store = app.app.get<EventStore>(EVENT_STORE);
    const newestOf = async (streamId: string) => (await store.readStream(streamId, { direction: 'backwards', maxCount: 1 }))[0]?.position ?? 0n;
    const waiter = app.app.get(ProjectionWaiter);
    expect(await waiter.waitFor(['wallets', 'wallet-ledger'], await newestOf(`wallet-${organizationId}.test`), 10_000)).toBe(true);
    expect(await waiter.waitFor(['verifications'], await newestOf(`verification-${reference}`), 10_000)).toBe(true);
  };

  it('replays a wallet while checks run on it, and matches the read models to the kobo', async () => {
    const { organizationId, key } = await fundedWallet(30 * PRICE_KOBO);
    // Checks keep arriving, in waves, for as long as the reconcile runs: found (…5), not_found (…1),
    // provider failure (…2, released), and 402s once the wallet runs dry (at most 36 checks, 30 paid for).
    let auditing = true;
    const during = auditJson('--org', organizationId, '--env', 'test', '--reconcile').finally(() => {
      auditing = false;
    });
    const responses: Array<{ status: number }> = [];
    let waves = 0;
    while (auditing || waves < 3) {
      const wave = Array.from({ length: 6 }, (_, i) => `1234567890${[5, 1, 2][(waves * 6 + i) % 3]}`);
      responses.push(...(await Promise.all(wave.map((nin) => check(key, nin)))));
      waves++;
      if (responses.length >= 36) break;
    }
    const reconciledDuring = await during;
    expect(reconciledDuring.document.reconcile.differences).toEqual([]);
    expect(reconciledDuring.stderr).not.toContain('error:');
    expect(reconciledDuring.code).toBe(0);
    expect(responses.map((response) => response.status).filter((status) => ![201, 402, 502].includes(status))).toEqual([]);

    const after = await auditJson('--org', organizationId, '--env', 'test', '--reconcile');
    expect(after.stderr).not.toContain('error:');
    expect(after.code).toBe(0);
    const { summary, reconcile, entries } = after.document;
    expect(reconcile.differenceCount).toBe(0);
    expect(summary.chain).toMatchObject({ verified: true, unhashedEvents: 0, hashedFromRevision: 0, breaks: 0 });
    // Revisions and positions are JSON numbers where they fit in 2^53.
    expect(entries.map((entry: { revision: unknown }) => entry.revision)).toEqual(entries.map((_: unknown, i: number) => i));
    expect(typeof entries[0].position).toBe('number');
    expect(summary.lastRevision).toBe(entries.length - 1);
    expect(summary.chain.hashedEvents).toBe(entries.length);

    const charged = responses.filter((response) => response.status === 201).length;
    const wallet = (await app.admin('GET', `/admin/v1/organizations/${organizationId}/wallets/test`)).body.data;
    expect(summary.closing).toEqual({
      fundedKobo: 30 * PRICE_KOBO,
      debitedKobo: charged * PRICE_KOBO,
      balanceKobo: wallet.balanceKobo,
      reservedKobo: wallet.reservedKobo,
      availableKobo: wallet.availableKobo,
    });
    expect(summary.totals.debit).toEqual({ count: charged, amountKobo: charged * PRICE_KOBO });
    const released = responses.filter((response) => response.status === 502).length;
    expect(summary.totals.release.count).toBe(released);
    expect(summary.totals.reservation.count).toBe(charged + released);
    // Each line's figures run on from the one before it.
    let balanceKobo = 0;
    for (const entry of entries) {
      balanceKobo += entry.entryType === 'funding' ? entry.amountKobo : entry.entryType === 'debit' ? -entry.amountKobo : 0;
      expect(entry.balanceKobo).toBe(balanceKobo);
    }
  });

  it('answers the balance as of a moment between two events, and shows entries from a moment with the opening balance', async () => {
    const { organizationId } = await fundedWallet(1_000);
    await new Promise((resolveWait) => setTimeout(resolveWait, 30));
    await app.admin('POST', `/admin/v1/organizations/${organizationId}/wallets/test/fundings`, { amountKobo: 234, reference: 'INV-0002' });
    const [first, second] = await streamEvents(app.eventStore, `wallet-${organizationId}.test`);
    const t1 = Date.parse(first.metadata.occurredAt as string);
    const t2 = Date.parse(second.metadata.occurredAt as string);
    expect(t2).toBeGreaterThan(t1);
    // The midpoint, written in Lagos time (+01:00): offsets are honoured.
    const between = new Date(Math.floor((t1 + t2) / 2) + 3_600_000).toISOString().replace('Z', '+01:00');

    const asOf = await audit('--org', organizationId, '--env', 'test', '--to', between);
    expect(asOf.code).toBe(0);
    expect(asOf.stdout).toContain('INV-0001');
    expect(asOf.stdout).not.toContain('INV-0002');
    expect(asOf.stdout).toMatch(/1 events replayed \(revisions 0 to 0\)/);
    expect(asOf.stdout).toMatch(/balance as of .*: balance ₦10\.00 \(1,000 kobo\), reserved ₦0\.00 \(0 kobo\), available ₦10\.00 \(1,000 kobo\)/);
    // Every column the docs list, amounts in naira with separators.
    const [header, , row] = asOf.stdout.split('\n');
    expect(header.split(/ {2,}/)).toEqual([
      'occurred at',
      'type',
      'reference',
      'scope',
      'amount ₦',
      'balance ₦',
      'reserved ₦',
      'available ₦',
      'actor',
      'rev',
      'position',
      'chain',
      'hash',
    ]);
    expect(row).toMatch(/ funding +INV-0001 +10\.00 +10\.00 +0\.00 +10\.00 +operator:admin +0 +\d+ +hashed +[0-9a-f]{12}…$/);
    expect(asOf.stdout).toContain('hash chain: verified, 1 hashed events');

    const fromThen = await auditJson('--org', organizationId, '--env', 'test', '--from', between);
    expect(fromThen.code).toBe(0);
    expect(fromThen.document.entries.map((entry: { reference: string; balanceKobo: number }) => [entry.reference, entry.balanceKobo])).toEqual([['INV-0002', 1_234]]);
    expect(fromThen.document.summary).toMatchObject({ opening: { balanceKobo: 1_000 }, closing: { balanceKobo: 1_234 }, totals: { funding: { count: 1, amountKobo: 234 } } });
  });

  it('writes CSV that a spreadsheet opens: one header, CRLF rows of the same width, amounts as integers, totals on stderr', async () => {
    const { organizationId, key } = await fundedWallet(3 * PRICE_KOBO);
    for (const nin of ['12345678905', '12345678902', '12345678901']) await check(key, nin);
    const result = await audit('--org', organizationId, '--env', 'test', '--format', 'csv');
    expect(result.code).toBe(0);
    expect(result.stdout.endsWith('\r\n')).toBe(true);
    const lines = result.stdout.slice(0, -2).split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines.slice(1).map((line) => line.split(',')[4])).toEqual(['funding', 'reservation', 'debit', 'reservation', 'release', 'reservation', 'debit']);
    const rows = lines.slice(1).map((line) => Object.fromEntries(line.split(',').map((field, i) => [CSV_COLUMNS[i], field])));
    for (const row of rows) {
      expect(Object.keys(row)).toHaveLength(CSV_COLUMNS.length);
      expect(row.amount_kobo).toMatch(/^\d+$/);
      expect(row.balance_naira).toBe((Number(row.balance_kobo) / 100).toFixed(2));
      expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(rows.at(-1)).toMatchObject({ balance_kobo: String(PRICE_KOBO), available_kobo: String(PRICE_KOBO) });
    expect(result.stderr).toMatch(/debit +2 entries +₦200\.00 +\(20,000 kobo\)/);
    for (const row of rows) expect(row.reserved_naira).toBe((Number(row.reserved_kobo) / 100).toFixed(2));
  });

  it('lists every difference between the log and the read models, and exits 1', async () => {
    const { organizationId, key } = await fundedWallet(2 * PRICE_KOBO);
    const found = await check(key, '12345678905');
    expect(found.body.error).toBeUndefined();
    const reference = found.body.data.reference as string;
    await readModelsCaughtUp(organizationId, reference);

    await pool.query("update wallets set balance_kobo = balance_kobo + 1 where organization_id = $1 and environment = 'test'", [organizationId]);
    await pool.query("delete from wallet_ledger where organization_id = $1 and environment = 'test' and entry_type = 'reservation'", [organizationId]);
    await pool.query('update verifications set price_kobo = 9999 where reference = $1', [reference]);
    const result = await auditJson('--org', organizationId, '--env', 'test', '--reconcile');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: audit: 3 difference(s) between the log and the read models');
    const differences = result.document.reconcile.differences as { check: string; message: string }[];
    expect(differences.map((difference) => difference.check).sort()).toEqual(['verification_charge', 'wallet_ledger', 'wallet_totals']);
    expect(differences.find((difference) => difference.check === 'wallet_totals')?.message).toMatch(/^balance at revision 2: log 10000 kobo, wallets read model 10001 kobo$/);
    expect(differences.find((difference) => difference.check === 'wallet_ledger')?.message).toContain(`reservation ${reference} of 10000 kobo is in the log, not in wallet_ledger`);
    expect(differences.find((difference) => difference.check === 'verification_charge')?.message).toBe(`${reference}: charged 9999 kobo, debited 10000 kobo`);
    // The log itself is sound.
    expect(result.document.summary.chain.verified).toBe(true);
  });

  it('names a reservation left open past the recovery deadline', async () => {
    const { organizationId } = await fundedWallet(PRICE_KOBO);
    // A reservation with no verification behind it: nothing will ever capture or release it.
    const ledger = app.app.get(WalletLedger);
    await ledger.reserve(
      { organizationId, environment: 'test' },
      { reference: 'vrf_orphan', amountKobo: 700, scope: 'nin' },
      { correlationId: 'orphan', actor: { type: 'system', id: 'test' } },
    );
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_100));
    const result = await auditWith({ RECOVERY_DEADLINE_MS: '1000', PROVIDER_TIMEOUT_MS: '300' }, '--org', organizationId, '--env', 'test', '--reconcile', '--format', 'json');
    expect(result.code).toBe(1);
    const { reconcile } = JSON.parse(result.stdout);
    expect(reconcile.differences).toEqual([
      { check: 'reservation_past_deadline', message: expect.stringMatching(/^vrf_orphan: 700 kobo reserved at .* is still open past the recovery deadline$/) },
    ]);
  });

  (testEventStoreKind() === 'postgres' ? it : it.skip)(
    'fails naming the event when a row of the PostgreSQL event table is changed by hand (postgres only: EventStoreDB has no rows to edit)',
    async () => {
      const { organizationId, key } = await fundedWallet(PRICE_KOBO);
      await check(key, '12345678905');
      const streamId = `wallet-${organizationId}.test`;
      const [, reserved] = await streamEvents(app.eventStore, streamId);
      const history = `/admin/v1/organizations/${organizationId}/wallets/test/history`;
      expect((await app.admin('GET', history)).body.meta.chain).toMatchObject({ verified: true, hashedEvents: 3 });

      // What someone with write access to the database could do: lower a reservation by hand.
      const client = await pool.connect();
      try {
        await client.query('begin');
        await client.query('alter table events disable trigger events_no_update');
        await client.query(`update events set data = jsonb_set(data, '{amountKobo}', '1') where stream_id = $1 and revision = 1`, [streamId]);
        await client.query('alter table events enable trigger events_no_update');
        await client.query('commit');
      } finally {
        client.release();
      }

      const result = await audit('--org', organizationId, '--env', 'test');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`error: audit: hash chain broken at revision 1 (position ${reserved.position}, event ${reserved.id}): its content does not match its hash`);
      // The changed amount no longer matches the debit that closes the reservation: the replay says so too.
      expect(result.stderr).toContain("error: audit: 1 event(s) break the ledger's rules");
      expect((await app.admin('GET', history)).body.meta.chain).toMatchObject({
        verified: false,
        breaks: 1,
        firstBreak: { revision: '1', eventId: reserved.id, kind: 'content_changed' },
      });
      expect((await app.admin('GET', history)).body.meta.ledgerProblems).toEqual([
        expect.objectContaining({ revision: '2', kind: 'ledger_invalid', message: 'its debit is for another amount than the reservation' }),
      ]);
    },
  );

  it('refuses bad arguments with exit 2 and an unknown organization with exit 3', async () => {
    const { organizationId } = await fundedWallet(100);
    const usage = [
      ['--org', organizationId],
      ['--org', organizationId, '--env', 'prod'],
      ['--org', organizationId, '--env', 'test', '--to', '2026-03-03T14:00:00'],
      ['--org', organizationId, '--env', 'test', '--from', 'yesterday'],
      ['--org', organizationId, '--env', 'test', '--from', '2026-03-04T00:00:00Z', '--to', '2026-03-03T00:00:00Z'],
      ['--org', organizationId, '--env', 'test', '--reconcile', '--to', '2026-03-03T00:00:00Z'],
      ['--org', organizationId, '--env', 'test', '--format', 'xlsx'],
    ];
    for (const args of usage) {
      const result = await audit(...args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toContain('error');
    }
    expect((await audit('--org', organizationId, '--env', 'test', '--to', '2026-03-03T14:00:00')).stderr).toContain('ISO 8601 date-time with an offset');
    const unknown = await audit('--org', 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR', '--env', 'test');
    expect(unknown).toMatchObject({ code: 3, stdout: '' });
    expect(unknown.stderr).toContain('error: not_found: no organization org_01JD3Q9ZK8W6V2C4X7N5B0M1TR');
  });
});
