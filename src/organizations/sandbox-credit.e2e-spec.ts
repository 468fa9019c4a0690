import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SYSTEM_ACTOR } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { MAX_FUNDING_KOBO } from '../wallets/wallet.decider.js';
import { WalletLedger } from '../wallets/wallet-ledger.port.js';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { OrganizationStore } from './organization.store.js';
import { SandboxCreditSweep } from './sandbox-credit.js';

const CREDIT_KOBO = 250_000;

describe('The sandbox-credit sweep', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ env: { SANDBOX_CREDIT_KOBO: String(CREDIT_KOBO) } });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** An organization whose registration recorded `creditKobo` and whose credit was never written (the process stopped in between). */
  async function registeredWithoutCredit(creditKobo: number): Promise<string> {
    const organizationId = app.app.get(IdGenerator).organizationId();
    await app.app
      .get(OrganizationStore)
      .execute(
        organizationId,
        { type: 'RegisterOrganization', organizationId, name: 'Sweep Ltd', email: 'sweep@example.com', activeScopes: ['nin'], sandboxCreditKobo: creditKobo },
        { correlationId: `test-${organizationId}`, actor: SYSTEM_ACTOR },
      );
    return organizationId;
  }

  it('credits the organizations after one whose credit the wallet refuses, and reports that one', async () => {
    // Registered by a release that accepted a credit above one funding's limit: the wallet refuses it every time.
    const refused = await registeredWithoutCredit(MAX_FUNDING_KOBO + 1);
    const owed = await registeredWithoutCredit(CREDIT_KOBO);
    const sweep = app.app.get(SandboxCreditSweep);
    const report = await sweep.runOnce(new Date(Date.now() + 24 * 3_600_000));
    expect(report).toEqual({ examined: 2, credited: 1, failed: 1 });
    const ledger = app.app.get(WalletLedger);
    expect((await ledger.balance({ organizationId: owed, environment: 'test' })).balanceKobo).toBe(CREDIT_KOBO);
    expect((await ledger.balance({ organizationId: refused, environment: 'test' })).balanceKobo).toBe(0);
  });
});
