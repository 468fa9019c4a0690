import { Anchor, Group, Pagination, Select, Table, Text } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import { get, naira, page as fetchPage, query, when } from '../api';
import { Failure, Loading, PageTitle } from '../components/common';
import { StatusBadge } from '../components/status';
import { useEnvironment } from '../session';
import type { ScopeInfo, VerificationSummary } from '../types';

const PAGE_SIZE = 20;
const STATUSES = ['found', 'not_found', 'failed', 'pending'];

export default function VerificationsPage() {
  const { environment } = useEnvironment();
  const [page, setPage] = useState(1);
  const [scope, setScope] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const scopes = useQuery({ queryKey: ['scopes'], queryFn: ({ signal }) => get<ScopeInfo[]>('/scopes', signal) });
  const list = useQuery({
    queryKey: ['verifications', environment, page, scope, status],
    queryFn: ({ signal }) => fetchPage<VerificationSummary>(`/verifications${query({ environment, page, pageSize: PAGE_SIZE, scope, status })}`, signal),
    placeholderData: keepPreviousData,
  });

  return (
    <>
      <PageTitle>Verifications</PageTitle>
      <Group mb="md" align="end">
        <Select
          label="Scope"
          placeholder="Every scope"
          clearable
          data={(scopes.data ?? []).map((item) => item.scope)}
          value={scope}
          onChange={(value) => {
            setScope(value);
            setPage(1);
          }}
          w={200}
        />
        <Select
          label="Status"
          placeholder="Every status"
          clearable
          data={STATUSES.map((value) => ({ value, label: value.replace('_', ' ') }))}
          value={status}
          onChange={(value) => {
            setStatus(value);
            setPage(1);
          }}
          w={200}
        />
      </Group>
      <Failure error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data ? (
        <>
          <Scroll minWidth={560}>
            <Table striped highlightOnHover aria-label={`Verifications in ${environment}`}>
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
                {list.data.rows.map((row) => (
                  <Table.Tr key={row.reference}>
                    <Table.Td>
                      <Anchor component={Link} href={`/verifications/${row.reference}`} ff="monospace" size="sm">
                        {row.reference}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{row.scope}</Table.Td>
                    <Table.Td>
                      <StatusBadge status={row.status} />
                    </Table.Td>
                    <Table.Td>
                      {naira(row.priceKobo)}
                      {row.charged ? '' : ' (not charged)'}
                    </Table.Td>
                    <Table.Td>{when(row.createdAt)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Scroll>
          {list.data.rows.length === 0 ? (
            <Text c="dimmed" mt="md">
              No verifications in {environment} yet{scope || status ? ' with these filters' : ''}.
            </Text>
          ) : null}
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              {list.data.meta.total} in all
            </Text>
            {list.data.meta.totalPages > 1 ? (
              <Pagination total={list.data.meta.totalPages} value={page} onChange={setPage} aria-label="Pages of verifications" />
            ) : null}
          </Group>
        </>
      ) : null}
    </>
  );
}
