import { Alert, Button, Group, NumberInput, Pagination, Paper, Text, TextInput, Title } from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import { errorText, naira, query } from '../api';
import { Balances } from '../components/balances';
import { Failure, Loading, PageTitle } from '../components/common';
import { ColumnsTable, whenColumn, type Column } from '../components/columns-table';
import { entryMoneyColumns, referenceColumn } from '../components/money-columns';
import { useEnvironment, type Environment } from '../session';
import {
  useAssignDedicatedAccount,
  useDedicatedAccount,
  useLowBalanceThreshold,
  useRefreshAfterTopUp,
  useSetLowBalanceThreshold,
  useSimulateTransfer,
  useStartTopUp,
  useTopUp,
  useTopUpLimits,
  useTopUps,
  useTransactions,
  useWallet,
} from '../features/wallet/api';
import type { TopUp, WalletTransaction } from '../types';

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
  const wallet = useWallet(environment);
  const transactions = useTransactions(environment, page, PAGE_SIZE);

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
      <TopUpForm environment={environment} />
      <TransferAccount environment={environment} />
      <TopUps environment={environment} />
      <Statement environment={environment} />
      <LowBalanceThreshold environment={environment} />
      <Title order={2} size="h4" mb="sm">
        Transactions
      </Title>
      <Failure error={transactions.error} />
      {transactions.isPending ? (
        <Loading />
      ) : transactions.data ? (
        <>
          <ColumnsTable
            rows={transactions.data.rows}
            columns={TRANSACTION_COLUMNS}
            rowKey={(row, index) => `${row.reference}-${row.type}-${index}`}
            label="Wallet transactions"
            minWidth={720}
          />
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

/** The balance below which wallet.low_balance is sent and the owner and finance users are mailed, in naira on the page, kobo on the wire. */
function LowBalanceThreshold({ environment }: { environment: Environment }) {
  const threshold = useLowBalanceThreshold(environment);
  const [amount, setAmount] = useState<string | number>('');
  const save = useSetLowBalanceThreshold(environment, () => setAmount(''));
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
          {threshold.isPending
            ? 'Loading…'
            : current === null || current === undefined
              ? 'Off: no alert is sent.'
              : `When the balance falls below ${naira(current)}, the wallet.low_balance webhook is sent and owners and finance members are mailed.`}
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
        {(save.error ?? threshold.error) ? (
          <Text c="red.9" size="sm" mt="xs" role="alert">
            {errorText(save.error ?? threshold.error)}
          </Text>
        ) : null}
      </form>
    </Paper>
  );
}

const FINISHED: readonly TopUp['status'][] = ['credited', 'failed', 'flagged', 'dismissed'];
const STATUS_TEXT: Record<TopUp['status'], string> = {
  initiated: 'Waiting for the payment…',
  paid: 'Paid: crediting the wallet…',
  credited: 'Credited',
  failed: 'Not paid',
  flagged: 'Held for review (the amounts did not match, or the day’s limit was spent): nothing was credited',
  dismissed: 'Reviewed: nothing credited',
};

/** The top-up the payer came back from (`?topup=` on the page's address), until it is finished. */
function returningTopUp(): string | null {
  return new URLSearchParams(window.location.search).get('topup');
}

/** Top up: an amount in naira, then the payment rail's checkout (Paystack's, or the sandbox's on test). */
function TopUpForm({ environment }: { environment: Environment }) {
  const [amount, setAmount] = useState<string | number>('');
  const [reference] = useState(returningTopUp);
  const start = useStartTopUp(environment);
  const followed = useTopUp(reference, (state) => FINISHED.includes(state));
  const limits = useTopUpLimits(environment);
  const status = followed.data?.status;
  const refreshAfterTopUp = useRefreshAfterTopUp();
  useEffect(() => {
    if (status === undefined || !FINISHED.includes(status)) return;
    refreshAfterTopUp();
  }, [refreshAfterTopUp, status]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (amount === '') return;
    start.mutate(Math.round(Number(amount) * 100));
  };

  return (
    <Paper withBorder p="md" mb="lg">
      {followed.data ? (
        <Alert
          mb="md"
          color={status === 'credited' ? 'green' : status === 'initiated' || status === 'paid' ? 'blue' : 'red'}
          title={`Top-up of ${naira(followed.data.amountKobo)}`}
          data-testid="topup-status"
        >
          {STATUS_TEXT[followed.data.status]}
          {status === 'credited'
            ? ` — ${naira(followed.data.paidKobo)} added; the provider's fees: ${naira(followed.data.feesKobo)}. A receipt was mailed to owners and finance members.`
            : ''}
        </Alert>
      ) : null}
      <form onSubmit={submit}>
        <Title order={2} size="h4" mb="xs">
          Top up
        </Title>
        <Text size="sm" mb="sm">
          {environment === 'test'
            ? 'Test wallets are paid on the sandbox checkout: no real money moves.'
            : 'Pay by card or bank transfer on Paystack’s checkout; the wallet is credited once Paystack confirms the payment.'}
        </Text>
        {limits.data ? (
          <Text size="sm" mb="sm" data-testid="topup-limits">
            From {naira(limits.data.minTopUpKobo)} to {naira(limits.data.maxTopUpKobo)} a top-up, {naira(limits.data.dailyLimitKobo)} a day: {naira(limits.data.leftTodayKobo)} left
            today.
          </Text>
        ) : null}
        <Group align="end" wrap="wrap">
          <NumberInput
            label="Amount (₦)"
            value={amount}
            onChange={setAmount}
            min={limits.data ? limits.data.minTopUpKobo / 100 : 100}
            max={limits.data ? limits.data.maxTopUpKobo / 100 : 100_000_000}
            decimalScale={2}
            thousandSeparator=","
            w={220}
          />
          <Button type="submit" loading={start.isPending} disabled={amount === ''}>
            Top up
          </Button>
        </Group>
        {(start.error ?? followed.error) ? (
          <Text c="red.9" size="sm" mt="xs" role="alert">
            {errorText(start.error ?? followed.error)}
          </Text>
        ) : null}
      </form>
    </Paper>
  );
}

const TOPUP_COLUMNS: Column<TopUp>[] = [
  whenColumn('When', (row) => row.createdAt),
  { header: 'Reference', cell: (row) => row.reference },
  { header: 'Amount', cell: (row) => naira(row.amountKobo) },
  { header: 'Credited', cell: (row) => (row.creditedKobo === null ? '—' : naira(row.creditedKobo)) },
  { header: 'Fees', cell: (row) => (row.feesKobo === null ? '—' : naira(row.feesKobo)) },
  { header: 'Status', cell: (row) => STATUS_TEXT[row.status] },
  {
    header: 'Receipt',
    cell: (row) =>
      row.status === 'credited' ? (
        <a href={`/console/api/wallet/topups/${encodeURIComponent(row.reference)}/receipt.pdf`} download>
          PDF
        </a>
      ) : (
        '—'
      ),
  },
];

/** This month in Lagos (UTC+1), as YYYY-MM. */
function thisMonth(): string {
  return new Date(Date.now() + 3_600_000).toISOString().slice(0, 7);
}

/** The month's statement as PDF, computed from the wallet's log. */
function Statement({ environment }: { environment: Environment }) {
  const [month, setMonth] = useState(thisMonth);
  return (
    <Group align="end" wrap="wrap" mb="lg">
      <TextInput label="Statement month" type="month" value={month} onChange={(event) => setMonth(event.currentTarget.value)} w={200} />
      <Button component="a" variant="outline" href={`/console/api/wallet/statement${query({ environment, month })}`} download>
        Download statement (PDF)
      </Button>
    </Group>
  );
}

function TopUps({ environment }: { environment: Environment }) {
  const topUps = useTopUps(environment, 10);
  if (topUps.data === undefined || topUps.data.rows.length === 0) return <Failure error={topUps.error} />;
  return (
    <>
      <Title order={2} size="h4" mb="sm">
        Top-ups
      </Title>
      <ColumnsTable rows={topUps.data.rows} columns={TOPUP_COLUMNS} rowKey={(row) => row.reference} label="Top-ups" minWidth={640} />
      <div style={{ height: 24 }} />
    </>
  );
}

/**
 * Pay by bank transfer: the organization's dedicated account, assigned on request (at once, or later
 * when the provider's assignment webhook arrives: the page asks again until then); transfers to it are
 * credited once the provider confirms them.
 */
function TransferAccount({ environment }: { environment: Environment }) {
  const account = useDedicatedAccount(environment);
  const assign = useAssignDedicatedAccount(environment);
  const status = account.data?.status;
  return (
    <Paper withBorder p="md" mb="lg">
      <Title order={2} size="h4" mb="xs">
        Pay by bank transfer
      </Title>
      {account.data && status === 'assigned' ? (
        <Text size="sm" data-testid="transfer-account">
          Transfer to <strong>{account.data.accountNumber}</strong>, {account.data.bankName}, {account.data.accountName}. Each transfer is credited once the provider confirms it.
        </Text>
      ) : null}
      {account.data && status === 'assigned' && environment === 'test' ? <SimulateTransfer environment={environment} /> : null}
      {account.data && status === 'assigned' ? null : status === 'requested' ? (
        <Text size="sm" data-testid="transfer-account">
          The payment provider is assigning the account: it shows here once assigned.
        </Text>
      ) : (
        <>
          {status === 'failed' ? (
            <Text size="sm" mb="xs" data-testid="transfer-account">
              The payment provider could not assign an account. You may ask again.
            </Text>
          ) : null}
          <Button variant="outline" onClick={() => assign.mutate()} loading={assign.isPending} disabled={account.isPending}>
            Get a transfer account
          </Button>
        </>
      )}
      {(assign.error ?? account.error) ? (
        <Text c="red.9" size="sm" mt="xs" role="alert">
          {errorText(assign.error ?? account.error)}
        </Text>
      ) : null}
    </Paper>
  );
}

/** Test wallets only: a transfer into the sandbox's account as a payer would send it, through the same webhook as Paystack's. */
function SimulateTransfer({ environment }: { environment: Environment }) {
  const [amount, setAmount] = useState<string | number>('');
  const simulate = useSimulateTransfer(environment);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (amount === '') return;
    simulate.mutate(Math.round(Number(amount) * 100));
  };
  return (
    <form onSubmit={submit}>
      <Group align="end" wrap="wrap" mt="sm">
        <NumberInput label="Transfer amount (₦)" value={amount} onChange={setAmount} min={1} decimalScale={2} thousandSeparator="," w={220} />
        <Button type="submit" variant="outline" loading={simulate.isPending} disabled={amount === ''}>
          Simulate a transfer
        </Button>
      </Group>
      {simulate.data ? (
        <Text size="sm" mt="xs" role="status" data-testid="simulated-transfer">
          Transfer {simulate.data.reference}: {simulate.data.outcome === 'credited' ? 'credited' : simulate.data.outcome}.
        </Text>
      ) : null}
      {simulate.error ? (
        <Text c="red.9" size="sm" mt="xs" role="alert">
          {errorText(simulate.error)}
        </Text>
      ) : null}
    </form>
  );
}
