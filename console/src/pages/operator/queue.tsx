import { Button, Text } from '@mantine/core';
import { errorText } from '../../api';
import { ColumnsTable, whenColumn, type Column } from '../../components/columns-table';
import { Failure, Loading, PageTitle } from '../../components/common';
import { useApprovalQueue, useApprove } from '../../features/operator/api';
import { readOnly, useSession, type Organization } from '../../session';
import { organizationColumns } from './organizations';

export default function OperatorQueuePage() {
  const { data: session } = useSession();
  const queue = useApprovalQueue();
  const approve = useApprove();
  const columns: Column<Organization>[] = [
    ...organizationColumns,
    whenColumn('Requested', (organization) => organization.liveAccessRequestedAt),
    {
      header: 'Action',
      cell: (organization) =>
        readOnly(session) ? (
          <Text size="sm" c="dimmed">
            read only
          </Text>
        ) : (
          <Button
            size="xs"
            onClick={() => approve.mutate(organization.id)}
            loading={approve.isPending && approve.variables === organization.id}
            aria-label={`Approve ${organization.name}`}
          >
            Approve
          </Button>
        ),
    },
  ];
  if (queue.isPending) return <Loading />;
  return (
    <>
      <PageTitle>Approval queue</PageTitle>
      <Failure error={queue.error} />
      {approve.error ? (
        <Text c="red.9" role="alert">
          {errorText(approve.error)}
        </Text>
      ) : null}
      {queue.data?.length === 0 ? <Text c="dimmed">No organization is waiting for live access.</Text> : null}
      {queue.data && queue.data.length > 0 ? (
        <ColumnsTable rows={queue.data} columns={columns} rowKey={(organization) => organization.id} label="Organizations waiting for live access" minWidth={640} />
      ) : null}
    </>
  );
}
