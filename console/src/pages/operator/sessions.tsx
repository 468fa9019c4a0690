import { Anchor, Group, Pagination, Text } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'wouter';
import { ColumnsTable, whenColumn, type Column } from '../../components/columns-table';
import { Failure, Loading, PageTitle } from '../../components/common';
import { reasonText } from '../../components/session-review';
import { useReviewQueue, type QueueItem } from '../../features/flows/api';

const PAGE_SIZE = 20;

const columns: Column<QueueItem>[] = [
  {
    header: 'Session',
    font: 'monospace',
    cell: (item) => (
      <Anchor component={Link} href={`/operator/sessions/${item.id}`} size="sm">
        {item.id}
      </Anchor>
    ),
  },
  {
    header: 'Organization',
    font: 'monospace',
    cell: (item) => (
      <Anchor component={Link} href={`/operator/organizations/${item.organizationId}`} size="sm">
        {item.organizationId}
      </Anchor>
    ),
  },
  { header: 'Environment', cell: (item) => item.environment },
  { header: 'Reasons', cell: (item) => item.reasons.map(reasonText).join(', ') },
  { header: 'Face match', cell: (item) => item.faceMatchConfidence ?? '—' },
  whenColumn('In review since', (item) => item.decidedAt),
];

/** Every organization's sessions in review, oldest first. */
export default function OperatorSessionsPage() {
  const [page, setPage] = useState(1);
  const queue = useReviewQueue(page, PAGE_SIZE);
  if (queue.isPending) return <Loading />;
  return (
    <>
      <PageTitle>Sessions in review</PageTitle>
      <Failure error={queue.error} />
      {queue.data?.rows.length === 0 ? <Text c="dimmed">No session is waiting for a review.</Text> : null}
      {queue.data && queue.data.rows.length > 0 ? (
        <>
          <ColumnsTable rows={queue.data.rows} columns={columns} rowKey={(item) => item.id} label="Sessions in review" minWidth={760} />
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              {queue.data.meta.total} in all
            </Text>
            {queue.data.meta.totalPages > 1 ? <Pagination total={queue.data.meta.totalPages} value={page} onChange={setPage} aria-label="Pages of sessions in review" /> : null}
          </Group>
        </>
      ) : null}
    </>
  );
}
