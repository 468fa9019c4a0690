import { Paper, SimpleGrid, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { naira } from '../api';
import type { Environment } from '../session';
import type { WalletFigures } from '../types';
import { ColumnsTable, type Column } from './columns-table';
import { moneyColumn } from './money-columns';

/**
 * A wallet's balance, reserved and available money as cards (test ids `balance`, `reserved`,
 * `available`, after `testIdPrefix`); `extra` adds a card of the caller's after them.
 */
export function Balances({ figures, testIdPrefix = '', extra }: { figures: WalletFigures | undefined; testIdPrefix?: string; extra?: { label: string; content: ReactNode } }) {
  const items = [
    { label: 'Balance', value: figures?.balanceKobo, testId: 'balance' },
    { label: 'Reserved', value: figures?.reservedKobo, testId: 'reserved' },
    { label: 'Available', value: figures?.availableKobo, testId: 'available' },
  ];
  return (
    <SimpleGrid cols={{ base: 1, xs: extra ? 4 : 3 }} mb="md">
      {items.map((item) => (
        <Card label={item.label} key={item.label}>
          <Text fz="xl" fw={700} data-testid={`${testIdPrefix}${item.testId}`}>
            {naira(item.value)}
          </Text>
        </Card>
      ))}
      {extra ? <Card label={extra.label}>{extra.content}</Card> : null}
    </SimpleGrid>
  );
}

function Card({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md">
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      {children}
    </Paper>
  );
}

const ENVIRONMENTS = ['test', 'live'] as const satisfies readonly Environment[];

interface EnvironmentWallet {
  environment: Environment;
  figures: WalletFigures | undefined;
}

const WALLET_COLUMNS: Column<EnvironmentWallet>[] = [
  { header: 'Wallet', cell: (row) => row.environment },
  moneyColumn(
    'Balance',
    (row) => row.figures?.balanceKobo,
    (row) => `wallet-${row.environment}-balance`,
  ),
  moneyColumn('Reserved', (row) => row.figures?.reservedKobo),
  moneyColumn('Available', (row) => row.figures?.availableKobo),
];

/** An organization's test and live wallets, a row each (the balance's test id is `wallet-<environment>-balance`). */
export function WalletsTable({ wallets }: { wallets: Partial<Record<Environment, WalletFigures>> }) {
  const rows = ENVIRONMENTS.map((environment) => ({ environment, figures: wallets[environment] }));
  return <ColumnsTable rows={rows} columns={WALLET_COLUMNS} rowKey={(row) => row.environment} label="Wallets" minWidth={360} />;
}
