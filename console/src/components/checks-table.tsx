import { Anchor, Table } from '@mantine/core';
import { Link } from 'wouter';
import { naira } from '../api';
import { when } from '../dates';
import type { VerificationSummary } from '../types';
import { Scroll } from './scroll';
import { StatusBadge } from './status';

/**
 * Checks as the list shows them (reference, scope, status, price, when), for the verifications page
 * and the overview's recent checks: `linked` makes each reference a link to its page (the caller
 * decides, by role), `showCharged` notes the checks that were not charged.
 */
export function ChecksTable({
  rows,
  label,
  linked,
  showCharged = false,
  striped = false,
  minWidth,
}: {
  rows: readonly VerificationSummary[];
  label: string;
  linked: boolean;
  showCharged?: boolean;
  striped?: boolean;
  minWidth: number;
}) {
  return (
    <Scroll minWidth={minWidth}>
      <Table striped={striped} highlightOnHover={striped} aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Reference</Table.Th>
            <Table.Th>Scope</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Price</Table.Th>
            <Table.Th>When</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={row.reference}>
              <Table.Td ff="monospace" fz="sm">
                {linked ? (
                  <Anchor component={Link} href={`/verifications/${row.reference}`} size="sm" ff="monospace">
                    {row.reference}
                  </Anchor>
                ) : (
                  row.reference
                )}
              </Table.Td>
              <Table.Td>{row.scope}</Table.Td>
              <Table.Td>
                <StatusBadge status={row.status} />
              </Table.Td>
              <Table.Td>
                {naira(row.priceKobo)}
                {showCharged && !row.charged ? ' (not charged)' : ''}
              </Table.Td>
              <Table.Td>{when(row.createdAt)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Scroll>
  );
}
