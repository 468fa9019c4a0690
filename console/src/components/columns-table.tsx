import { Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { when } from '../dates';
import { Scroll } from './scroll';

export interface Column<Row> {
  header: string;
  cell: (row: Row) => ReactNode;
  /** Amounts are right-aligned so that their digits line up. */
  align?: 'right';
  font?: 'monospace' | 'small';
  testId?: (row: Row) => string;
}

export function whenColumn<Row>(header: string, at: (row: Row) => string | null | undefined): Column<Row> {
  return { header, cell: (row) => when(at(row)) };
}

/**
 * A table of rows, one cell per column the caller gives: the wallet's transactions, the audit's
 * entries, an organization's wallets, the operators' organizations and approval queue.
 */
export function ColumnsTable<Row>({
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
      <Table striped highlightOnHover aria-label={label}>
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
