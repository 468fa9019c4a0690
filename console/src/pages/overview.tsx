import { Anchor, Paper, SegmentedControl, Text, Title, Group } from '@mantine/core';
import { lazy, Suspense, useMemo, useState } from 'react';
import { Link } from 'wouter';
import { Balances } from '../components/balances';
import { ChecksTable } from '../components/checks-table';
import { Failure, Loading, PageTitle } from '../components/common';
import { mayOpen, useEnvironment, useSession } from '../session';
import { useOverview } from '../features/checks/api';

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
  const overview = useOverview(environment);

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
      <Balances figures={data.wallet} />
      <Paper withBorder p="md" mb="md">
        <Group justify="space-between" mb="sm">
          <Title order={2} size="h4">
            Checks per day
          </Title>
          <SegmentedControl
            size="xs"
            aria-label="Group the checks by"
            value={by}
            onChange={(value) => setBy(value)}
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
          <ChecksTable rows={data.recent} label="Recent checks" linked={mayOpen(session, 'verifications')} minWidth={480} />
        )}
      </Paper>
    </>
  );
}
