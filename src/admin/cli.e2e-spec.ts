import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashApiKey } from '../auth/api-key.js';
import { MAX_FUNDING_KOBO } from '../wallets/wallet.decider.js';
import { runAdmin } from './cli/run.js';
import { processTestBed } from '../../test/support/process-test-bed.js';
import { DIST, type Run, runNode } from '../../test/support/processes.js';
import { allEvents, eventsContaining, streamEvents } from '../../test/support/event-store.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../../test/support/data-protection.js';

/**
 * The CLI against its own test database. Most commands run through its entry point in this process
 * (cli/run.ts: the same parsing, configuration, application context, job, settlement and output as
 * a run of the binary, without a Node start-up each); `spawned` runs the built CLI (dist/, which a
 * build never empties) as `npm run admin` does, in a working directory of its own, for the exit
 * codes, the streams and the help as a shell sees them.
 */
describe('admin CLI', () => {
  const bed = processTestBed('ledger-cli-');

  const env = () => ({
    PATH: process.env.PATH,
    ...bed.events.env,
    DATABASE_URL: bed.database.url,
    DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
    DATA_DIR: join(bed.dir, '.data'),
    SANDBOX_CREDIT_KOBO: '100000',
  });
  function spawned(...args: string[]): Promise<Run> {
    return runNode(DIST.admin, args, { cwd: bed.dir, env: env(), timeoutMs: 30_000 });
  }
  async function cli(...args: string[]): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const code = await runAdmin(['node', 'admin', ...args], {
      env: env(),
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
    });
    return { code, stdout, stderr };
  }
  const json = async (...args: string[]) => {
    const result = await cli('--json', ...args);
    if (result.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return JSON.parse(result.stdout);
  };
  const eventTypes = async (streamId: string) => (await streamEvents(bed.events.store, streamId)).map((event) => event.type);

  it("creates an operators' console account with a one-time set-password link, once per email", async () => {
    // Through the built CLI, as an operator runs it.
    const run = await spawned('--json', 'operator', 'create', '--email', 'ops@ledger.test', '--role', 'auditor');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const created = JSON.parse(run.stdout);
    expect(created).toMatchObject({ email: 'ops@ledger.test', role: 'auditor' });
    const link = new URL(created.setPasswordLink);
    expect(link.pathname).toBe('/console/reset-password');
    const { rows } = await bed.pool.query(
      'select u.kind, u.role, u.password_hash, t.purpose, t.used_at from console_tokens t join console_users u on u.id = t.user_id where t.token_hash = $1',
      [
        createHash('sha256')
          .update(link.searchParams.get('token') ?? '')
          .digest('hex'),
      ],
    );
    expect(rows).toEqual([{ kind: 'operator', role: 'auditor', password_hash: null, purpose: 'reset_password', used_at: null }]);
    // The account's creation is an event with the CLI as its actor, ids and role only.
    const recorded = await streamEvents(bed.events.store, `consoleUser-${created.id}`);
    expect(recorded.map((event) => [event.type, event.data, event.metadata.actor])).toEqual([
      ['ConsoleOperatorCreated', { schemaVersion: 1, userId: created.id, role: 'auditor', via: 'cli' }, { type: 'operator', id: 'cli' }],
    ]);
    const again = await cli('operator', 'create', '--email', 'OPS@ledger.test');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('email_taken');
    // The refused one recorded nothing.
    expect((await allEvents(bed.events.store)).filter((event) => event.type === 'ConsoleOperatorCreated')).toHaveLength(1);
  });

  it('runs an organization through its life with the same events as the admin API, the operator recorded as the CLI', async () => {
    const created = await json('org', 'create', '--name', 'Cli Co', '--email', 'ops@cli.test');
    expect(created).toMatchObject({ name: 'Cli Co', email: 'ops@cli.test', status: 'pending' });
    const id = created.id as string;
    expect((await json('org', 'approve', id)).status).toBe('approved');
    // Again, in human output: readable lines, not JSON, and no second event.
    const again = await cli('org', 'approve', id);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`id: ${id}`);
    expect(again.stdout).toContain('status: approved');
    expect((await json('org', 'scopes', id, 'nin', 'bvn')).activeScopes).toEqual(['nin', 'bvn']);
    // One list syntax: commas, as the help shows, and spaces too.
    expect((await json('org', 'scopes', id, 'nin,bvn,phone')).activeScopes).toEqual(['nin', 'bvn', 'phone']);
    expect((await json('org', 'scopes', id, 'nin,bvn')).activeScopes).toEqual(['nin', 'bvn']);
    const priced = await json('org', 'prices', id, 'nin=5000');
    expect(priced.prices).toEqual({ nin: 5_000 });
    expect(priced.effectivePrices).toMatchObject({ nin: { priceKobo: 5_000, source: 'override' }, bvn: { priceKobo: 10_000, source: 'default' } });
    // A person sees every scope's price, the default ones named as such, and the rate limit's default.
    const shown = await cli('org', 'prices', id, 'nin=5000');
    expect(shown.stdout).toContain('prices:\n  nin: ₦50.00 (5,000 kobo), override\n  pnv: ₦100.00 (10,000 kobo), default\n');
    expect(shown.stdout).toContain('  passport: ₦150.00 (15,000 kobo), default\n');
    expect(shown.stdout).toContain('rateLimitPerMinute: 600, default (RATE_LIMIT_PER_MINUTE)');
    expect(shown.stdout).not.toContain('(none)');
    expect((await json('org', 'rename', id, ' Acme Lending Holdings ')).name).toBe('Acme Lending Holdings');
    expect((await json('org', 'rate-limit', id, '120')).rateLimitPerMinute).toBe(120);
    expect((await json('org', 'rate-limit', id, 'default')).rateLimitPerMinute).toBeNull();
    expect(await json('org', 'suspend', id, '--reason', 'review')).toMatchObject({ status: 'suspended', suspensionReason: 'review' });
    expect((await json('org', 'reinstate', id)).status).toBe('approved');

    const types = await eventTypes(`organization-${id}`);
    expect(types.slice(0, 2)).toEqual(['OrganizationRegistered', 'OrganizationApproved']);
    expect(types.filter((type) => type === 'OrganizationApproved')).toHaveLength(1);
    expect(types.slice(-6)).toEqual(['ScopePriceSet', 'OrganizationRenamed', 'RateLimitSet', 'RateLimitSet', 'OrganizationSuspended', 'OrganizationReinstated']);
    const actors = (await streamEvents(bed.events.store, `organization-${id}`)).map((event) => event.metadata.actor);
    expect(actors).toEqual(types.map(() => ({ type: 'operator', id: 'cli' })));
    expect(await eventTypes(`wallet-${id}.test`)).toEqual(['WalletFunded']);
  });

  it('issues a key (printed once, stored as a hash), lists it without the key, and revokes it once', async () => {
    const { id } = await json('org', 'create', '--name', 'Keys Co', '--email', 'keys@cli.test');
    const issued = await json('key', 'issue', id, '--env', 'live', '--name', 'ci', '--scopes', 'nin,bvn');
    expect(issued.key).toMatch(/^service_live_/);
    expect(issued.scopes).toEqual(['nin', 'bvn']);
    expect((await json('key', 'issue', id, '--env', 'live', '--scopes', 'nin', 'bvn')).scopes).toEqual(['nin', 'bvn']);
    const log = await allEvents(bed.events.store);
    expect(log.filter((event) => event.data.keyHash === hashApiKey(issued.key))).toHaveLength(1);
    expect(eventsContaining(log, issued.key)).toEqual([]);

    const revoked = await json('key', 'revoke', issued.id);
    expect(revoked.revokedAt).toMatch(/\+00:00$/);
    await json('key', 'revoke', issued.id);
    expect((await eventTypes(`organization-${id}`)).filter((type) => type === 'ApiKeyRevoked')).toHaveLength(1);

    const human = await cli('key', 'issue', id, '--env', 'test');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/key: service_test_[A-Za-z0-9_-]{43}/);
    expect(human.stdout).toContain('shown this once only');
    expect(human.stdout).toContain('scopes: all (every scope active for the organization)\n');
    expect(human.stdout).not.toMatch(/scopes: -/);
    // `key list` reads the api_keys read model, which no projection worker fills here; a revoke answers from the stream.
    expect((await cli('key', 'revoke', issued.id)).stdout).toContain('scopes: nin, bvn\n');
  });

  it('funds a wallet once per funding reference, through the wallet ledger', async () => {
    const { id } = await json('org', 'create', '--name', 'Funded Co', '--email', 'funds@cli.test');
    const funded = await json('wallet', 'fund', id, '--env', 'live', '--amount', '500000', '--reference', 'bank-transfer-1');
    expect(funded).toMatchObject({ funded: true, balanceKobo: 500_000 });
    const repeated = await json('wallet', 'fund', id, '--env', 'live', '--amount', '500000', '--reference', 'bank-transfer-1');
    expect(repeated).toMatchObject({ funded: false, balanceKobo: 500_000 });
    expect(await eventTypes(`wallet-${id}.live`)).toEqual(['WalletFunded']);
    // Through the built CLI: exit code 1, nothing on stdout and on stderr the error alone.
    const conflict = await spawned('wallet', 'fund', id, '--env', 'live', '--amount', '700000', '--reference', 'bank-transfer-1');
    expect(conflict).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: funding_reference_conflict: This funding reference already credited the wallet with another amount\n  reference: bank-transfer-1\n  existingAmountKobo: 500000\n  requestedAmountKobo: 700000\n',
    });
    expect(await eventTypes(`wallet-${id}.live`)).toEqual(['WalletFunded']);
    expect(await json('wallet', 'balance', id, '--env', 'live')).toEqual({
      organizationId: id,
      environment: 'live',
      balanceKobo: 500_000,
      reservedKobo: 0,
      availableKobo: 500_000,
    });
    const balance = await cli('wallet', 'balance', id, '--env', 'live');
    expect(balance.stdout).toBe(`organizationId: ${id}\nenvironment: live\nbalance: ₦5,000.00 (500,000 kobo)\nreserved: ₦0.00 (0 kobo)\navailable: ₦5,000.00 (500,000 kobo)\n`);
    expect((await cli('wallet', 'balance', id)).code).toBe(2);
    const invalid = await cli('wallet', 'fund', id, '--env', 'live', '--amount', '-3', '--reference', 'has spaces');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/amount: [\s\S]*reference: /);
    // The wallet's own bound: an amount the wallet would refuse is refused here, before anything is written.
    const tooMuch = await cli('wallet', 'fund', id, '--env', 'live', '--amount', String(MAX_FUNDING_KOBO + 1), '--reference', 'too-much');
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.stderr).toContain(`amount: amount must be an integer number of kobo from 1 to ${MAX_FUNDING_KOBO}`);
    // A top-up's reference namespace is the top-ups' own: an operator's funding there could take a top-up's credit.
    const topUpNamespace = await cli('wallet', 'fund', id, '--env', 'live', '--amount', '1000', '--reference', 'topup:top_01JD3Q9ZK8W6V2C4X7N5B0M1TR');
    expect(topUpNamespace.code).toBe(1);
    expect(topUpNamespace.stderr).toContain('reference: ');
    expect(topUpNamespace.stderr).toContain('topup:');
    expect(await eventTypes(`wallet-${id}.live`)).toEqual(['WalletFunded']);
    expect((await cli('wallet', 'fund', 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR', '--env', 'test', '--amount', '1', '--reference', 'r')).stderr).toContain('error: not_found:');
  });

  it('configures an upstream with credentials from a file: sealed in the event, never printed', async () => {
    const { id } = await json('org', 'create', '--name', 'Upstream Co', '--email', 'upstream@cli.test');
    const secret = 'sk_live_cli_secret_0123456789';
    const file = join(bed.dir, 'dojah.json');
    await writeFile(file, JSON.stringify({ appId: 'app-cli', secretKey: secret }), { mode: 0o600 });
    await json('org', 'scopes', id, 'nin', 'bvn');
    // Through the built CLI: nothing the process writes, answer or log line, holds the secret.
    const configured = await spawned('--json', 'provider', 'set', id, '--env', 'live', '--provider', 'dojah', '--credentials', `@${file}`);
    expect(configured.code).toBe(0);
    expect(JSON.parse(configured.stdout).providers).toEqual({ live: { provider: 'dojah', fallback: null } });
    expect(`${configured.stdout}${configured.stderr}`).not.toContain(secret);
    const log = await allEvents(bed.events.store);
    expect(
      log.filter(
        (event) =>
          event.type === 'ProviderConfigured' && event.data.organizationId === id && typeof event.data.credentials === 'string' && event.data.credentials.startsWith('v1.'),
      ),
    ).toHaveLength(1);
    expect(eventsContaining(log, secret)).toEqual([]);
    expect((await cli('provider', 'set', id, '--env', 'live', '--provider', 'dojah', '--credentials', '{not json')).code).toBe(2);
  });

  it('refuses invalid input with the error code, every field, and exit code 1', async () => {
    const invalid = await cli('org', 'create', '--name', '', '--email', 'nope');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('error: validation_failed:');
    expect(invalid.stderr).toMatch(/name: /);
    expect(invalid.stderr).toMatch(/email: /);
    const unknown = await cli('org', 'approve', 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('error: not_found: No organization with that id');
    // Reads go to the read models, which only projection workers fill (none run in a CLI).
    const missing = await cli('org', 'get', 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error: not_found:');
    const { id } = await json('org', 'create', '--name', 'Scopes Co', '--email', 'scopes@cli.test');
    const badScopes = await cli('org', 'scopes', id, 'nin', 'teleport');
    expect(badScopes.code).toBe(1);
    expect(badScopes.stderr).toContain('scopes[1]: unknown scope "teleport"');
    const badPrice = await cli('org', 'prices', id, 'nin=-5');
    expect(badPrice.code).toBe(1);
    expect(badPrice.stderr).toContain('nin: must be an integer number of kobo');
  });

  it('exits 2 on usage errors', async () => {
    expect((await spawned('org', 'create', '--name', 'No Email')).code).toBe(2);
    expect((await spawned('frobnicate')).code).toBe(2);
    expect((await spawned('key', 'issue', 'org_x', '--env', 'prod')).code).toBe(2);
    expect((await spawned()).code).toBe(2);
  });
});
