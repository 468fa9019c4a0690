import { Anchor, Button, Table, Text } from '@mantine/core';
import { Scroll } from '../../components/scroll';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'wouter';
import { errorText, get, post, when } from '../../api';
import { Failure, Loading, PageTitle } from '../../components/common';
import { readOnly, useSession, type Organization } from '../../session';

export default function OperatorQueuePage() {
  const client = useQueryClient();
  const { data: session } = useSession();
  const queue = useQuery({ queryKey: ['operator', 'queue'], queryFn: ({ signal }) => get<Organization[]>('/operator/approval-queue', signal) });
  const approve = useMutation({
    mutationFn: (id: string) => post<Organization>(`/operator/organizations/${encodeURIComponent(id)}/approve`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['operator'] }),
  });
  if (queue.isPending) return <Loading />;
  return (
    <>
      <PageTitle>Approval queue</PageTitle>
      <Failure error={queue.error} />
      {approve.error ? <Text c="red.9" role="alert">{errorText(approve.error)}</Text> : null}
      {queue.data?.length === 0 ? <Text c="dimmed">No organization is waiting for live access.</Text> : null}
      {queue.data && queue.data.length > 0 ? (
        <Scroll minWidth={640}>
          <Table striped aria-label="Organizations waiting for live access">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Email</Table.Th>
                <Table.Th>Requested</Table.Th>
                <Table.Th>Action</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {queue.data.map((organization) => (
                <Table.Tr key={organization.id}>
                  <Table.Td>
                    <Anchor component={Link} href={`/operator/organizations/${organization.id}`}>
                      {organization.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{organization.email}</Table.Td>
                  <Table.Td>{when(organization.liveAccessRequestedAt)}</Table.Td>
                  <Table.Td>
                    {readOnly(session) ? (
                      <Text size="sm" c="dimmed">read only</Text>
                    ) : (
                      <Button size="xs" onClick={() => approve.mutate(organization.id)} loading={approve.isPending && approve.variables === organization.id} aria-label={`Approve ${organization.name}`}>
                        Approve
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Scroll>
      ) : null}
    </>
  );
}
