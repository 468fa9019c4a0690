import { Badge, Paper, Table, Text, Title } from '@mantine/core';
import { Scroll } from '../../components/scroll';
import { lazy, Suspense, useMemo } from 'react';
import { when } from '../../dates';
import { Failure, Loading, PageTitle } from '../../components/common';
import { useProjections } from '../../features/operator/api';

const LagChart = lazy(() => import('../../components/lag-chart'));

const PALETTE = ['#364fc7', '#2b8a3e', '#e67700', '#c92a2a', '#862e9c', '#0b7285', '#5f3dc4', '#a61e4d'];

export default function OperatorProjectionsPage() {
  const status = useProjections(10_000);
  const chart = useMemo(() => {
    const history = [...(status.data?.history ?? [])].sort((a, b) => a.at.localeCompare(b.at));
    const names = [...new Set(history.flatMap((sample) => sample.projections.map((projection) => projection.name)))].sort();
    return {
      times: history.map((sample) => sample.at),
      series: names.map((name, index) => ({
        label: name,
        color: PALETTE[index % PALETTE.length],
        values: history.map((sample) => sample.projections.find((projection) => projection.name === name)?.lagEvents ?? null),
      })),
    };
  }, [status.data]);

  if (status.isPending) return <Loading />;
  if (status.error) return <Failure error={status.error} />;
  return (
    <>
      <PageTitle>Projections</PageTitle>
      <Scroll minWidth={720}>
        <Table striped aria-label="Projections">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Projection</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th ta="right">Lag (events)</Table.Th>
              <Table.Th ta="right">Lag (s)</Table.Th>
              <Table.Th ta="right">Events/s</Table.Th>
              <Table.Th>Updated</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {status.data.projections.map((projection) => (
              <Table.Tr key={projection.name}>
                <Table.Td>{projection.name}</Table.Td>
                <Table.Td>
                  <Badge color={projection.error ? 'red.9' : projection.state === 'running' ? '#237032' : 'gray.8'}>{projection.state}</Badge>
                  {projection.error ? (
                    <Text size="xs" c="red.9">
                      {projection.error.message}
                    </Text>
                  ) : null}
                </Table.Td>
                <Table.Td ta="right">{projection.lagEvents === null ? 'unknown' : `${projection.lagEventsCapped ? '≥' : ''}${projection.lagEvents}`}</Table.Td>
                <Table.Td ta="right">{projection.lagSeconds ?? '—'}</Table.Td>
                <Table.Td ta="right">{projection.eventsPerSecond ?? '—'}</Table.Td>
                <Table.Td>{when(projection.updatedAt)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Scroll>
      <Paper withBorder p="md" mt="md">
        <Title order={2} size="h4" mb="sm">
          Lag over the last hour
        </Title>
        {chart.times.length < 2 ? (
          <Text c="dimmed">Sampled every 10 seconds: the chart appears after two samples.</Text>
        ) : (
          <Suspense fallback={<Loading label="Loading the chart" />}>
            <LagChart times={chart.times} series={chart.series} />
          </Suspense>
        )}
      </Paper>
    </>
  );
}
