import { Button, Group, Pagination, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { get, page as fetchPage, query } from '../api';
import { Balances } from '../components/balances';
import { Failure, Loading, PageTitle } from '../components/common';
import { ColumnsTable, whenColumn, type Column } from '../components/columns-table';
import { entryMoneyColumns, referenceColumn } from '../components/money-columns';
import { useEnvironment } from '../session';
import type { Wallet, WalletTransaction } from '../types';

const PAGE_SIZE = 20;

const TRANSACTION_COLUMNS: Column<WalletTransaction>[] = [
  whenColumn('When', (row) => row.createdAt),
  { header: 'Type', cell: (row) => row.type },
  referenceColumn,
  { header: 'Scope', cell: (row) => row.scope ?? '—' },
  ...entryMoneyColumns,
];

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
      <Balances figures={wallet.data} />
      <Title order={2} size="h4" mb="sm">
        Transactions
      </Title>
      <Failure error={transactions.error} />
      {transactions.isPending ? (
        <Loading />
      ) : transactions.data ? (
        <>
          <ColumnsTable rows={transactions.data.rows} columns={TRANSACTION_COLUMNS} rowKey={(row, index) => `${row.reference}-${row.type}-${index}`} label="Wallet transactions" minWidth={720} />
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
