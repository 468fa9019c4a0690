import { Anchor, Badge, Code, Paper, Table, Text, Title } from '@mantine/core';
import { Link } from 'wouter';
import { Scroll } from '../../components/scroll';
import { lazy, Suspense, useMemo } from 'react';
import { when } from '../../dates';
import { Failure, Loading, PageTitle } from '../../components/common';
import { useProjections, useUnsettledChecks } from '../../features/operator/api';

const LagChart = lazy(() => import('../../components/lag-chart'));

/** Unsettled checks shown: the oldest; GET /admin/v1/recovery/unsettled pages through them all. */
const UNSETTLED_SHOWN = 50;

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
      <UnsettledChecks />
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

/**
 * The checks recovery cannot settle (a stream damaged by hand, an event it cannot fold): their
 * money stays held until an operator restores the cause. References and codes only, no personal data.
 */
function UnsettledChecks() {
  const unsettled = useUnsettledChecks(UNSETTLED_SHOWN, 10_000);
  return (
    <Paper withBorder p="md" mt="md">
      <Title order={2} size="h4" mb="sm">
        Checks recovery cannot settle
      </Title>
      {unsettled.isPending ? (
        <Loading />
      ) : unsettled.error ? (
        <Failure error={unsettled.error} />
      ) : unsettled.data.rows.length === 0 ? (
        <Text c="dimmed">None: recovery settled every check past its deadline.</Text>
      ) : (
        <>
          <Text size="sm" mb="xs">
            {unsettled.data.meta.total > unsettled.data.rows.length
              ? `The oldest ${unsettled.data.rows.length} of ${unsettled.data.meta.total}; their money stays held until the cause is restored.`
              : `${unsettled.data.meta.total} in all; their money stays held until the cause is restored.`}
          </Text>
          <Scroll minWidth={720}>
            <Table striped aria-label="Checks recovery cannot settle">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Reference</Table.Th>
                  <Table.Th>Organization</Table.Th>
                  <Table.Th>Since</Table.Th>
                  <Table.Th ta="right">Attempts</Table.Th>
                  <Table.Th>Last error</Table.Th>
                  <Table.Th>Next attempt</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {unsettled.data.rows.map((check) => (
                  <Table.Tr key={check.reference}>
                    <Table.Td>
                      <Code>{check.reference}</Code>
                    </Table.Td>
                    <Table.Td>
                      <Anchor component={Link} href={`/operator/organizations/${encodeURIComponent(check.organizationId)}`} size="sm">
                        {check.organizationId}
                      </Anchor>{' '}
                      ({check.environment})
                    </Table.Td>
                    <Table.Td>{when(check.firstFailedAt)}</Table.Td>
                    <Table.Td ta="right">{check.attempts}</Table.Td>
                    <Table.Td>
                      <Code>{check.reason}</Code>
                    </Table.Td>
                    <Table.Td>{when(check.nextAttemptAt)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Scroll>
        </>
      )}
    </Paper>
  );
}
