import { Button, Group, NumberInput, Pagination, Paper, Text, Title } from '@mantine/core';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { errorText, get, naira, page as fetchPage, put, query } from '../api';
import { Balances } from '../components/balances';
import { Failure, Loading, PageTitle } from '../components/common';
import { ColumnsTable, whenColumn, type Column } from '../components/columns-table';
import { entryMoneyColumns, referenceColumn } from '../components/money-columns';
import { useEnvironment, type Environment } from '../session';
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
      <LowBalanceThreshold environment={environment} />
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

interface Threshold {
  environment: Environment;
  thresholdKobo: number | null;
}

/** The balance below which wallet.low_balance is sent and the owner and finance users are mailed, in naira on the page, kobo on the wire. */
function LowBalanceThreshold({ environment }: { environment: Environment }) {
  const client = useQueryClient();
  const key = ['low-balance-threshold', environment];
  const threshold = useQuery({ queryKey: key, queryFn: ({ signal }) => get<Threshold>(`/wallet/low_balance_threshold${query({ environment })}`, signal) });
  const [amount, setAmount] = useState<string | number>('');
  const save = useMutation({
    mutationFn: (thresholdKobo: number | null) => put<Threshold>(`/wallet/low_balance_threshold${query({ environment })}`, { thresholdKobo }),
    onSuccess: (saved) => {
      client.setQueryData(key, saved);
      setAmount('');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (amount === '') return;
    save.mutate(Math.round(Number(amount) * 100));
  };
  const current = threshold.data?.thresholdKobo;

  return (
    <Paper withBorder p="md" mb="lg">
      <form onSubmit={submit}>
        <Title order={2} size="h4" mb="xs">
          Low-balance alert
        </Title>
        <Text size="sm" mb="sm" data-testid="low-balance-threshold">
          {threshold.isPending ? 'Loading…' : current === null || current === undefined ? 'Off: no alert is sent.' : `When the balance falls below ${naira(current)}, the wallet.low_balance webhook is sent and owners and finance members are mailed.`}
        </Text>
        <Group align="end" wrap="wrap">
          <NumberInput label="Threshold (₦)" value={amount} onChange={setAmount} min={0} max={1_000_000_000} decimalScale={2} thousandSeparator="," w={220} />
          <Button type="submit" loading={save.isPending && save.variables !== null} disabled={amount === ''}>
            Set threshold
          </Button>
          {current !== null && current !== undefined ? (
            <Button variant="outline" color="red.9" onClick={() => save.mutate(null)} loading={save.isPending && save.variables === null}>
              Turn off
            </Button>
          ) : null}
        </Group>
        {save.error ?? threshold.error ? (
          <Text c="red.9" size="sm" mt="xs" role="alert">
            {errorText(save.error ?? threshold.error)}
          </Text>
        ) : null}
      </form>
    </Paper>
  );
}
