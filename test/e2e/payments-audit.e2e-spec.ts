import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SYSTEM_ACTOR } from '../../src/common/event.js';
import { topUpFundingReference } from '../../src/payments/topup.events.js';
import { TopUps } from '../../src/payments/topups.service.js';
import { WalletLedger } from '../../src/wallets/wallet-ledger.port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { TEST_DATA_ENCRYPTION_KEY } from '../support/data-protection.js';
import { testEventStoreEnv } from '../support/event-store.js';
import { createOrganization } from '../support/fixtures.js';
import { PaystackStub } from '../support/paystack-stub.js';
import { postPaystackWebhook } from '../support/topups.js';

const run = promisify(execFile);
const SECRET = 'sk_test_0123456789abcdef0123456789abcdef';
const context = { correlationId: 'payments-audit-e2e', actor: SYSTEM_ACTOR };

/**
 * `npm run audit:payments` run as a process on a log of its own: exit 0 when every payment the
 * provider settled was credited once, 1 with a CSV line per difference otherwise, a payment the
 * provider settled and the wallet never got (its webhook lost, or held for an operator) included.
 */
describe('audit:payments', () => {
  let paystack: PaystackStub;
  let app: TestApp;
  let organizationId: string;
  let directory: string;

  beforeAll(async () => {
    paystack = await PaystackStub.start(SECRET);
    app = await startTestApp({ env: { PAYSTACK_SECRET_KEY: SECRET, PAYSTACK_BASE_URL: paystack.baseUrl, PAYSTACK_TIMEOUT_MS: '2000', TOPUP_RECOVERY_INTERVAL_MS: '3600000' } });
    organizationId = (await createOrganization(app, { approved: true })).id;
    directory = await mkdtemp(join(tmpdir(), 'payments-audit-'));
  });
  afterAll(async () => {
    await app?.close();
    await paystack?.close();
    await rm(directory, { recursive: true, force: true });
  });

  const topUps = () => app.app.get(TopUps);
  const start = (amountKobo: number) => topUps().initiate({ organizationId, environment: 'live' }, { amountKobo, channel: 'card', email: 'finance@example.test' }, context);
  const post = (webhook: { rawBody: string; signature: string }) => postPaystackWebhook(app, webhook);
  async function audit(name: string): Promise<{ code: number; stdout: string; csv: string[] }> {
    const env = {
      PATH: process.env.PATH,
      ...(await testEventStoreEnv(app.database)),
      DATABASE_URL: app.database.url,
      DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
      DATA_DIR: join(directory, '.data'),
      PAYSTACK_SECRET_KEY: SECRET,
      PAYSTACK_BASE_URL: paystack.baseUrl,
      LOG_LEVEL: 'silent',
    };
    const csv = join(directory, `${name}.csv`);
    const outcome = await run(process.execPath, ['dist/src/audit/payments-audit-cli.js', '--csv', csv], { env }).then(
      (result) => ({ code: 0, stdout: result.stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );
    return { ...outcome, csv: (await readFile(csv, 'utf8')).trim().split('\n') };
  }

  it('exits 0 on a clean log: credited top-ups, a failed one and one still open', async () => {
    const credited = await start(170_000);
    paystack.pay(credited.reference);
    expect((await post(paystack.webhook(credited.reference))).body.data.outcome).toBe('credited');
    await start(120_000);
    const declined = await start(110_000);
    paystack.transactions.get(declined.reference)!.status = 'failed';
    expect((await topUps().confirm(declined.reference, null, context)).status).toBe('failed');
    const outcome = await audit('clean');
    expect(outcome).toEqual({
      code: 0,
      stdout: 'top-ups: 3, credited: 1 (170000 kobo)\ndifferences: none\ncsv: ' + join(directory, 'clean.csv') + '\n',
      csv: ['kind,reference,organizationId,environment,rail,creditedKobo,fundedKobo,providerKobo,providerStatus'],
    });
  });

  it('exits 1 on a payment the provider settled and the wallet never got (webhook lost; held for an operator), a stray funding and an amount the provider changed', async () => {
    const lost = await start(130_000);
    paystack.pay(lost.reference);
    const held = await start(140_000);
    paystack.pay(held.reference);
    expect((await post(paystack.webhook(held.reference, { amount: 1_400_000 }))).body.data.outcome).toBe('flagged');
    const changed = await start(150_000);
    paystack.pay(changed.reference);
    expect((await post(paystack.webhook(changed.reference))).body.data.outcome).toBe('credited');
    paystack.transactions.get(changed.reference)!.amount = 145_000;
    // A funding under a top-up's reference that no credit stands behind (only the service itself can write one).
    const stray = await start(160_000);
    await app.app.get(WalletLedger).fund({ organizationId, environment: 'live' }, { fundingReference: topUpFundingReference(stray.reference), amountKobo: 160_000 }, context);

    const outcome = await audit('differences');
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toContain('differences: 1 uncredited, 1 flagged, 1 mismatched, 1 funding_without_top_up\n');
    expect(outcome.csv[0]).toBe('kind,reference,organizationId,environment,rail,creditedKobo,fundedKobo,providerKobo,providerStatus');
    expect(outcome.csv.slice(1).sort()).toEqual(
      [
        `"uncredited","${lost.reference}","${organizationId}","live","paystack","","","130000","success"`,
        `"flagged","${held.reference}","${organizationId}","live","paystack","","","140000","success"`,
        `"mismatched","${changed.reference}","${organizationId}","live","paystack","150000","150000","145000","success"`,
        `"funding_without_top_up","${stray.reference}","${organizationId}","live","paystack","","160000","",""`,
      ].sort(),
    );
  });
});
