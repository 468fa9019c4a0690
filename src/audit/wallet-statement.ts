import type { EventStore } from '../event-store/event-store.port.js';
import { ngn, renderPdf, rows } from '../payments/receipt.pdf.js';
import type { WalletId } from '../wallets/wallet-ledger.port.js';
import { WalletReplay } from './wallet-replay.js';

/** Lagos is UTC+1 all year: a month's statement runs from its first day's 00:00 to the next month's, Lagos time. */
const LAGOS_OFFSET_MS = 3_600_000;
export const STATEMENT_MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

export interface WalletStatement {
  readonly organizationId: string;
  readonly environment: string;
  readonly month: string;
  readonly from: string;
  readonly to: string;
  readonly openingKobo: number;
  readonly fundings: { readonly count: number; readonly amountKobo: number };
  /** Checks charged, per scope. */
  readonly charged: readonly { readonly scope: string; readonly count: number; readonly amountKobo: number }[];
  readonly releases: { readonly count: number; readonly amountKobo: number };
  readonly closingKobo: number;
  readonly chainVerified: boolean;
}

/** The month's bounds: [from, to], `to` the last millisecond before the next month (Lagos time). */
export function monthBounds(month: string): { from: Date; to: Date } {
  const match = STATEMENT_MONTH.exec(month);
  if (match === null) throw new RangeError('a month is YYYY-MM');
  const from = Date.UTC(Number(match[1]), Number(match[2]) - 1, 1) - LAGOS_OFFSET_MS;
  const next = Date.UTC(Number(match[1]), Number(match[2]), 1) - LAGOS_OFFSET_MS;
  return { from: new Date(from), to: new Date(next - 1) };
}

/**
 * One wallet's month, computed by the auditor's replay of its stream (wallet-replay.ts): the
 * balance at the month's start, the fundings, the checks charged by scope, the releases, and the
 * balance at its end.
 */
export async function walletStatement(store: EventStore, wallet: WalletId, month: string): Promise<WalletStatement> {
  const { from, to } = monthBounds(month);
  const replay = new WalletReplay(store, wallet, { from, to });
  let fundings = { count: 0, amountKobo: 0 };
  let releases = { count: 0, amountKobo: 0 };
  const charged = new Map<string, { count: number; amountKobo: number }>();
  for await (const page of replay.pages()) {
    for (const entry of page) {
      if (entry.entryType === 'funding') fundings = { count: fundings.count + 1, amountKobo: fundings.amountKobo + entry.amountKobo };
      else if (entry.entryType === 'release') releases = { count: releases.count + 1, amountKobo: releases.amountKobo + entry.amountKobo };
      else if (entry.entryType === 'debit') {
        const scope = entry.scope ?? 'unknown';
        const total = charged.get(scope) ?? { count: 0, amountKobo: 0 };
        charged.set(scope, { count: total.count + 1, amountKobo: total.amountKobo + entry.amountKobo });
      }
    }
  }
  const summary = replay.summary;
  return {
    organizationId: wallet.organizationId,
    environment: wallet.environment,
    month,
    from: from.toISOString(),
    to: to.toISOString(),
    openingKobo: summary.opening.balanceKobo,
    fundings,
    charged: [...charged].sort(([a], [b]) => a.localeCompare(b)).map(([scope, total]) => ({ scope, ...total })),
    releases,
    closingKobo: summary.closing.balanceKobo,
    chainVerified: summary.chain.firstBreak === null,
  };
}

export function statementPdf(statement: WalletStatement): Promise<Buffer> {
  return renderPdf(`Statement ${statement.month} ${statement.environment}`, (doc) => {
    doc.font('Helvetica-Bold').fontSize(18).text(`Wallet statement, ${statement.month}`);
    doc.font('Helvetica').fontSize(10).text(`${statement.organizationId}, ${statement.environment} wallet, ${statement.from} to ${statement.to}`);
    doc.moveDown();
    rows(doc, [
      ['Opening balance', ngn(statement.openingKobo)],
      [`Fundings (${statement.fundings.count})`, ngn(statement.fundings.amountKobo)],
      ...statement.charged.map(({ scope, count, amountKobo }) => [`Checks charged: ${scope} (${count})`, `-${ngn(amountKobo)}`] as const),
      [`Reservations released, not charged (${statement.releases.count})`, ngn(statement.releases.amountKobo)],
      ['Closing balance', ngn(statement.closingKobo)],
      ["Wallet's hash chain", statement.chainVerified ? 'verified' : 'BROKEN: see the finance audit'],
    ]);
  });
}
