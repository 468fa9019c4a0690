import { naira } from '../api';
import type { MoneyEntry } from '../types';
import type { Column } from './columns-table';

export function moneyColumn<Row>(header: string, kobo: (row: Row) => number | undefined, testId?: (row: Row) => string): Column<Row> {
  return { header, cell: (row) => naira(kobo(row)), align: 'right', testId };
}

export const referenceColumn: Column<{ reference: string }> = { header: 'Reference', cell: (row) => row.reference, font: 'monospace' };

/** What an entry did to its wallet, as the integrator's transactions and the audit's entries both show it. */
export const entryMoneyColumns: Column<MoneyEntry>[] = [
  moneyColumn('Amount', (row) => row.amountKobo),
  moneyColumn('Balance', (row) => row.balanceKobo),
  moneyColumn('Available', (row) => row.availableKobo),
];
