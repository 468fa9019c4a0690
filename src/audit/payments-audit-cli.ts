/**
 * `npm run audit:payments [-- --csv <file>]`
 *
 * Checks every top-up in the event log against its payment provider's transaction (verified by
 * reference; the sandbox rail answers the same way) and the wallet fundings under its reference,
 * as the console's Payments audit does (`checkTopUp`): a credited one must be funded once and
 * settled for its amount; one not credited must be neither funded nor settled (a settled payment
 * never credited is `uncredited`, or `flagged` when held for an operator). Prints a summary, writes
 * the findings as CSV (`--csv`, else payments-audit.csv). Exit codes: 0 no difference, 1
 * differences (or transactions that could not be verified), 2 usage, 3 could not run.
 */
import { writeFile } from 'node:fs/promises';
import { ConfigError, loadConfig } from '../config/config.js';
import { migrationsApplied } from '../database/migration-status.js';
import { createPool } from '../database/pool.js';
import { resolveDatabase } from '../database/resolve-database.js';
import type { EventStore } from '../event-store/event-store.port.js';
import { findingsCsv, reconcilePayments } from '../payments/payment-reconciliation.js';
import { PaystackRail } from '../payments/paystack.rail.js';
import { PaystackKeySource } from '../payments/paystack-key.js';
import { CredentialsCipher } from '../providers/credentials.js';
import { SystemClock } from '../common/clock.js';
import { RandomIdGenerator } from '../common/ids.js';
import { SandboxRail } from '../payments/sandbox.rail.js';
import { openEventStoreAdapter } from '../event-store/open-event-store.js';

async function main(argv: readonly string[]): Promise<number> {
  const csvAt = argv.indexOf('--csv');
  const csvPath = csvAt >= 0 ? argv[csvAt + 1] : 'payments-audit.csv';
  if (csvPath === undefined || argv.some((arg, index) => arg.startsWith('--') && arg !== '--csv' && index !== csvAt)) {
    process.stderr.write('usage: npm run audit:payments [-- --csv <file>]\n');
    return 2;
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`error: config: ${error.message}\n`);
      return 3;
    }
    throw error;
  }
  const database = await resolveDatabase(config, { log: (line) => process.stderr.write(`${line}\n`) });
  const pool = createPool(database.url, 4);
  let store: EventStore | undefined;
  try {
    store = await openEventStoreAdapter(config.eventStore, pool, database.url);
    if (!(await migrationsApplied(pool))) await (await import('../database/data-source.js')).runMigrations(database.url);
    const sandbox = new SandboxRail(pool);
    const { paystackSecretKey, paystackBaseUrl, paystackTimeoutMs } = config.payments;
    // The key the service uses: the sealed one an operator set, else PAYSTACK_SECRET_KEY.
    const keys = new PaystackKeySource(store, () => CredentialsCipher.open(config), new SystemClock(), new RandomIdGenerator(), paystackSecretKey);
    const paystack = new PaystackRail({ baseUrl: paystackBaseUrl, keys, timeoutMs: paystackTimeoutMs, breakerFailures: 1_000_000, breakerHalfOpenMs: 1_000 });
    const result = await reconcilePayments(store, (rail) => (rail === 'sandbox' ? sandbox : paystack));
    await writeFile(csvPath, findingsCsv(result.findings));
    const counts = new Map<string, number>();
    for (const finding of result.findings) counts.set(finding.kind, (counts.get(finding.kind) ?? 0) + 1);
    process.stdout.write(`top-ups: ${result.topUps}, credited: ${result.credited} (${result.creditedKobo} kobo)\n`);
    process.stdout.write(result.findings.length === 0 ? 'differences: none\n' : `differences: ${[...counts].map(([kind, count]) => `${count} ${kind}`).join(', ')}\n`);
    process.stdout.write(`csv: ${csvPath}\n`);
    return result.findings.length === 0 ? 0 : 1;
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 3;
  } finally {
    await store?.close?.().catch(() => undefined);
    await pool.end();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  () => process.exit(3),
);
