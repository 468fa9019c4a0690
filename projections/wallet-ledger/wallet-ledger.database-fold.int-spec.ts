import { expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { CATEGORIES } from '../../src/common/streams.js';
import type { SqlRunner } from '../../src/event-store/event-store.port.js';
import { availableOf, balanceOf, lineFigures, moveMoney, type WalletFigures } from '../../src/wallets/money.rule.js';
import type { WalletEvent } from '../../src/wallets/wallet.events.js';
import { WALLET_LEDGER_TABLE } from '../../src/wallets/wallet.read-model.js';
import { allEvents, useTestEventStore } from '../../test/support/event-store.js';
import { describeOnProject } from '../../test/support/store-independent.js';

const db = useTestEventStore({ poolSize: 2 });
const SCRATCH = 'wallet_ledger__rule';

/** One generated wallet event: a close picks one of the open reservations (or none), for its amount or another. */
type Step =
  | { readonly kind: 'fund'; readonly amountKobo: number }
  | { readonly kind: 'reserve'; readonly amountKobo: number }
  | { readonly kind: 'debit' | 'release'; readonly pick: number; readonly exact: boolean; readonly amountKobo: number };

const amount = fc.integer({ min: 0, max: 20_000 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('fund' as const), amountKobo: amount }),
  fc.record({ kind: fc.constant('reserve' as const), amountKobo: amount }),
  fc.record({ kind: fc.constantFrom('debit' as const, 'release' as const), pick: fc.nat(), exact: fc.boolean(), amountKobo: amount }),
);

/** The steps as a wallet's events, an overdraft or a close of nothing open included. */
function walletEvents(organizationId: string, steps: readonly Step[]): WalletEvent[] {
  const wallet = { organizationId, environment: 'test', schemaVersion: 1 };
  const open: { reference: string; amountKobo: number }[] = [];
  return steps.map((given, at): WalletEvent => {
    switch (given.kind) {
      case 'fund':
        return { type: 'WalletFunded', data: { ...wallet, fundingReference: `funding-${at}`, amountKobo: given.amountKobo } };
      case 'reserve':
        open.push({ reference: `vrf-${at}`, amountKobo: given.amountKobo });
        return { type: 'WalletFundsReserved', data: { ...wallet, reference: `vrf-${at}`, amountKobo: given.amountKobo, scope: 'nin' } };
      case 'debit':
      case 'release': {
        const [closed] = open.length === 0 ? [{ reference: `vrf-none-${at}`, amountKobo: given.amountKobo }] : open.splice(given.pick % open.length, 1);
        const amountKobo = given.exact ? closed.amountKobo : given.amountKobo;
        return given.kind === 'debit'
          ? { type: 'WalletDebited', data: { ...wallet, reference: closed.reference, amountKobo } }
          : { type: 'WalletReservationReleased', data: { ...wallet, reference: closed.reference, amountKobo, reason: 'provider_failed' } };
      }
      default: {
        const _exhaustive: never = given;
        throw new Error(`unknown step ${String(_exhaustive)}`);
      }
    }
  });
}

describeOnProject('postgres', 'The wallet ledger folded in the database, against the money rule', 'the fold runs over the PostgreSQL events table', () => {
  it('writes for generated wallet histories the figures moveMoney gives, negative exactly where the rule refuses an overdraft, and counts those lines', async () => {
    const folds = db.store.logReader?.folds;
    if (folds === undefined) throw new Error('the PostgreSQL store has log folds');
    const run: SqlRunner = async <T>(sql: string, params?: readonly unknown[]) => (await db.pool.query(sql, params as unknown[])).rows as T[];
    await db.pool.query(`create table ${SCRATCH} (like ${WALLET_LEDGER_TABLE} including all)`);
    let overdrafts = 0;

    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
        const organizationId = `org_${randomUUID().replaceAll('-', '')}`;
        const events = walletEvents(organizationId, steps);
        await db.store.append(
          `wallet-${organizationId}.test`,
          events.map((event) => ({ id: randomUUID(), type: event.type, data: event.data, metadata: { occurredAt: new Date(Date.UTC(2026, 11, 1)).toISOString() } })),
          { expectedRevision: 'any' },
        );
        const head = (await allEvents(db.store)).at(-1)?.position ?? 0n;

        // The rule, line by line, as the ledger keeps its figures (a balance and a reserved total).
        let figures: WalletFigures = lineFigures(0, 0);
        const expected = events.map((event) => {
          const moved = moveMoney(figures, { type: event.type, amountKobo: event.data.amountKobo });
          figures = moved.figures;
          if (moved.refused === 'overdrawn') overdrafts++;
          return { balance: String(balanceOf(figures)), reserved: String(figures.reservedKobo), available: String(availableOf(figures)), refused: moved.refused ?? null };
        });
        expect(expected.every((line) => line.refused === null || line.refused === 'overdrawn')).toBe(true);

        // The fold, over the whole log so far (its counts are checked once, below).
        await db.pool.query(`truncate ${SCRATCH}`);
        await folds.walletLedgerLines(run, SCRATCH, [CATEGORIES.wallet], head, 0, 1);
        const lines = await run<{ balance_kobo: string; reserved_kobo: string; available_kobo: string }>(
          `select balance_kobo, reserved_kobo, available_kobo from ${SCRATCH} where organization_id = $1 order by event_position`,
          [organizationId],
        );
        expect(
          lines.map((line) => ({
            balance: line.balance_kobo,
            reserved: line.reserved_kobo,
            available: line.available_kobo,
            refused: BigInt(line.reserved_kobo) < 0n || BigInt(line.available_kobo) < 0n ? 'overdrawn' : null,
          })),
        ).toEqual(expected);
      }),
      { numRuns: 25 },
    );
    // The generated histories reached the refusal, not only the ordinary path; the fold's count of negative lines is the rule's count of overdrafts.
    expect(overdrafts).toBeGreaterThan(0);
    await db.pool.query(`truncate ${SCRATCH}`);
    expect(await folds.walletLedgerLines(run, SCRATCH, [CATEGORIES.wallet], (await allEvents(db.store)).at(-1)?.position ?? 0n, 0, 1)).toEqual({
      negative: overdrafts,
      inexact: 0,
    });

    // Beyond the integers a JavaScript number holds exactly: the rule refuses it, the fold counts it.
    const organizationId = `org_${randomUUID().replaceAll('-', '')}`;
    const wallet = { schemaVersion: 1, organizationId, environment: 'test' };
    const huge = [0, 1].map((at) => ({ id: randomUUID(), type: 'WalletFunded', data: { ...wallet, fundingReference: `funding-${at}`, amountKobo: 2 ** 52 }, metadata: {} }));
    await db.store.append(`wallet-${organizationId}.test`, huge, { expectedRevision: 'any' });
    const moved = moveMoney(lineFigures(2 ** 52, 0), { type: 'WalletFunded', amountKobo: 2 ** 52 });
    expect(moved.refused).toBe('beyond_exact_integers');
    await db.pool.query(`truncate ${SCRATCH}`);
    const head = (await allEvents(db.store)).at(-1)?.position ?? 0n;
    expect(await folds.walletLedgerLines(run, SCRATCH, [CATEGORIES.wallet], head, 0, 1)).toEqual({ negative: overdrafts, inexact: 1 });
  });
});
