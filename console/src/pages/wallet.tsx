import { Button, Group, Pagination, Table, Text, Title } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { get, naira, page as fetchPage, query, when } from '../api';
import { Balances } from '../components/balances';
import { Failure, Loading, PageTitle } from '../components/common';
import { useEnvironment } from '../session';
import type { Wallet, WalletTransaction } from '../types';

const PAGE_SIZE = 20;

export default function WalletPage() {
  const { environment } = useEnvironment();
  const [page, setPage] = useState(1);
  const wallet = useQuery({ queryKey: ['wallet', environment], queryFn: ({ signal }) => get<Wallet>(`/wallet${query({ environment })}`, signal) });
  const transactions = useQuery({
    queryKey: ['transactions', environment, page],
    queryFn: ({ signal }) => fetchPage<WalletTransaction>(`/wallet/transactions${query({ environment, page, pageSize: PAGE_SIZE })}`, signal),
    placeholderData: keepPreviousData,
  });

  return (
    <>
      <PageTitle
        actions={
          <Button component="a" href={`/console/api/wallet/transactions.csv${query({ environment })}`} download variant="outline">
            Export CSV
          </Button>
        }
      >
        Wallet ({environment})
      </PageTitle>
      <Failure error={wallet.error} />
      <Balances wallet={wallet.data} />
      <Title order={2} size="h4" mb="sm">
        Transactions
      </Title>
      <Failure error={transactions.error} />
      {transactions.isPending ? (
        <Loading />
      ) : transactions.data ? (
        <>
          <Scroll minWidth={720}>
            <Table striped aria-label="Wallet transactions">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>When</Table.Th>
                  <Table.Th>Type</Table.Th>
                  <Table.Th>Reference</Table.Th>
                  <Table.Th>Scope</Table.Th>
                  <Table.Th ta="right">Amount</Table.Th>
                  <Table.Th ta="right">Balance</Table.Th>
                  <Table.Th ta="right">Available</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {transactions.data.rows.map((row, index) => (
                  <Table.Tr key={`${row.reference}-${row.type}-${index}`}>
                    <Table.Td>{when(row.createdAt)}</Table.Td>
                    <Table.Td>{row.type}</Table.Td>
                    <Table.Td ff="monospace" fz="sm">
                      {row.reference}
                    </Table.Td>
                    <Table.Td>{row.scope ?? '—'}</Table.Td>
                    <Table.Td ta="right">{naira(row.amountKobo)}</Table.Td>
                    <Table.Td ta="right">{naira(row.balanceKobo)}</Table.Td>
                    <Table.Td ta="right">{naira(row.availableKobo)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Scroll>
          {transactions.data.rows.length === 0 ? (
            <Text c="dimmed" mt="md">
              No transactions in {environment} yet.
            </Text>
          ) : null}
          {transactions.data.meta.totalPages > 1 ? (
            <Group justify="end" mt="md">
              <Pagination total={transactions.data.meta.totalPages} value={page} onChange={setPage} aria-label="Pages of transactions" />
            </Group>
          ) : null}
        </>
      ) : null}
    </>
  );
}
