import { Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { naira, when } from '../api';
import type { MoneyEntry } from '../types';
import { Scroll } from './scroll';

export interface Column<Row> {
  header: string;
  cell: (row: Row) => ReactNode;
  /** Amounts are right-aligned so that their digits line up. */
  align?: 'right';
  font?: 'monospace' | 'small';
  testId?: (row: Row) => string;
}

export function moneyColumn<Row>(header: string, kobo: (row: Row) => number | undefined, testId?: (row: Row) => string): Column<Row> {
  return { header, cell: (row) => naira(kobo(row)), align: 'right', testId };
}

export function whenColumn<Row>(at: (row: Row) => string): Column<Row> {
  return { header: 'When', cell: (row) => when(at(row)) };
}

export const referenceColumn: Column<{ reference: string }> = { header: 'Reference', cell: (row) => row.reference, font: 'monospace' };

/** What an entry did to the wallet, in the order the integrator's transactions and the audit's entries show it. */
export const entryMoneyColumns: Column<MoneyEntry>[] = [
  moneyColumn('Amount', (row) => row.amountKobo),
  moneyColumn('Balance', (row) => row.balanceKobo),
  moneyColumn('Available', (row) => row.availableKobo),
];

/**
 * Rows of money, one column per `columns` entry: the integrator's wallet transactions, the audit's
 * replayed entries and the operator's wallets of an organization.
 */
export function MoneyTable<Row>({
  rows,
  columns,
  rowKey,
  label,
  minWidth,
}: {
  rows: readonly Row[];
  columns: readonly Column<Row>[];
  rowKey: (row: Row, index: number) => string;
  label: string;
  minWidth: number;
}) {
  return (
    <Scroll minWidth={minWidth}>
      <Table striped aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) => (
              <Table.Th key={column.header} ta={column.align}>
                {column.header}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row, index) => (
            <Table.Tr key={rowKey(row, index)}>
              {columns.map((column) => (
                <Table.Td
                  key={column.header}
                  ta={column.align}
                  ff={column.font === 'monospace' ? 'monospace' : undefined}
                  fz={column.font === undefined ? undefined : 'sm'}
                  data-testid={column.testId?.(row)}
                >
                  {column.cell(row)}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Scroll>
  );
}
