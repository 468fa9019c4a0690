import { Anchor, Paper, SegmentedControl, Table, Text, Title, Group } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useMemo, useState } from 'react';
import { Link } from 'wouter';
import { get, naira, query, when } from '../api';
import { Balances } from '../components/balances';
import { Failure, Loading, PageTitle } from '../components/common';
import { StatusBadge } from '../components/status';
import { mayOpen, useEnvironment, useSession } from '../session';
import type { Overview } from '../types';

const ChecksChart = lazy(() => import('../components/checks-chart'));

const STATUS_COLORS: Record<string, string> = { found: '#2b8a3e', not_found: '#e67700', failed: '#c92a2a', pending: '#495057' };
const PALETTE = ['#364fc7', '#2b8a3e', '#e67700', '#c92a2a', '#862e9c', '#0b7285', '#5f3dc4', '#a61e4d', '#495057', '#087f5b', '#d9480f'];

/** The last 30 days (UTC), oldest first. */
function lastDays(count: number): string[] {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  return Array.from({ length: count }, (_, index) => new Date(today - (count - 1 - index) * 86_400_000).toISOString().slice(0, 10));
}

export default function OverviewPage() {
  const { environment } = useEnvironment();
  const { data: session } = useSession();
  const [by, setBy] = useState<'status' | 'scope'>('status');
  const overview = useQuery({ queryKey: ['overview', environment], queryFn: ({ signal }) => get<Overview>(`/overview${query({ environment })}`, signal) });

  const chart = useMemo(() => {
    const days = lastDays(30);
    const rows = overview.data?.days ?? [];
    const names = [...new Set(rows.map((row) => (by === 'status' ? row.status : row.scope)))].sort();
    const series = names.map((name, index) => ({
      label: name,
      color: by === 'status' ? (STATUS_COLORS[name] ?? PALETTE[index % PALETTE.length]) : PALETTE[index % PALETTE.length],
      values: days.map((day) => rows.filter((row) => row.date === day && (by === 'status' ? row.status : row.scope) === name).reduce((sum, row) => sum + row.count, 0)),
    }));
    const total = rows.reduce((sum, row) => sum + row.count, 0);
    return { days, series, total };
  }, [overview.data, by]);

  if (overview.isPending) return <Loading />;
  if (overview.error) return <Failure error={overview.error} />;
  const data = overview.data;

  return (
    <>
      <PageTitle>Overview ({environment})</PageTitle>
      <Balances wallet={data.wallet} />
      <Paper withBorder p="md" mb="md">
        <Group justify="space-between" mb="sm">
          <Title order={2} size="h4">
            Checks per day
          </Title>
          <SegmentedControl
            size="xs"
            aria-label="Group the checks by"
            value={by}
            onChange={(value) => setBy(value as 'status' | 'scope')}
            data={[
              { value: 'status', label: 'By status' },
              { value: 'scope', label: 'By scope' },
            ]}
          />
        </Group>
        {chart.total === 0 ? (
          <Text c="dimmed">
            No checks in the last 30 days.{' '}
            {mayOpen(session, 'playground') ? (
              <Anchor component={Link} href="/playground">
                Run one in the playground
              </Anchor>
            ) : null}
          </Text>
        ) : (
          <Suspense fallback={<Loading label="Loading the chart" />}>
            <ChecksChart
              days={chart.days}
              series={chart.series}
              label={`Checks per day over the last 30 days: ${chart.total} in all (${chart.series.map((item) => `${item.label} ${item.values.reduce((a, b) => a + b, 0)}`).join(', ')})`}
            />
          </Suspense>
        )}
      </Paper>
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="sm">
          Recent checks
        </Title>
        {data.recent.length === 0 ? (
          <Text c="dimmed">None yet.</Text>
        ) : (
          <Scroll minWidth={480}>
            <Table aria-label="Recent checks">
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
                {data.recent.map((row) => (
                  <Table.Tr key={row.reference}>
                    <Table.Td ff="monospace" fz="sm">
                      {mayOpen(session, 'verifications') ? (
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
                    <Table.Td>{naira(row.priceKobo)}</Table.Td>
                    <Table.Td>{when(row.createdAt)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Scroll>
        )}
      </Paper>
    </>
  );
}
