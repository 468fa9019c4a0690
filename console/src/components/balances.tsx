import { Paper, SimpleGrid, Text } from '@mantine/core';
import { naira } from '../api';
import type { Wallet } from '../types';

export function Balances({ wallet }: { wallet: Wallet | undefined }) {
  const items = [
    { label: 'Balance', value: wallet?.balanceKobo, testId: 'balance' },
    { label: 'Reserved', value: wallet?.reservedKobo, testId: 'reserved' },
    { label: 'Available', value: wallet?.availableKobo, testId: 'available' },
  ];
  return (
    <SimpleGrid cols={{ base: 1, xs: 3 }} mb="md">
      {items.map((item) => (
        <Paper withBorder p="md" key={item.label}>
          <Text size="sm" c="dimmed">
            {item.label}
          </Text>
          <Text fz="xl" fw={700} data-testid={item.testId}>
            {naira(item.value)}
          </Text>
        </Paper>
      ))}
    </SimpleGrid>
  );
}
