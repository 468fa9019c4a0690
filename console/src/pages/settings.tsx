import { Alert, Badge, Button, Group, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { errorText, naira } from '../api';
import { when } from '../dates';
import { Failure, Loading, PageTitle } from '../components/common';
import { useScopes } from '../features/checks/api';
import { useOrganization, useRequestLiveAccess, useResendVerification } from '../features/organization/api';
import { useRefreshSession, useSession } from '../session';

export default function SettingsPage() {
  const { data: session } = useSession();
  const refresh = useRefreshSession();
  const organization = useOrganization();
  const scopes = useScopes();
  const requestLive = useRequestLiveAccess(() => void refresh());
  const resend = useResendVerification();
  const owner = session?.user?.role === 'owner';
  const verified = session?.user?.emailVerified === true;

  if (organization.isPending) return <Loading />;
  if (organization.error) return <Failure error={organization.error} />;
  const org = organization.data;
  const liveState = org.approved ? 'approved' : org.liveAccessRequestedAt ? 'requested' : 'not requested';

  return (
    <>
      <PageTitle>Settings</PageTitle>
      <SimpleGrid cols={{ base: 1, md: 2 }} mb="md">
        <Paper withBorder p="md">
          <Title order={2} size="h4" mb="sm">
            Organization
          </Title>
          {/* A long name, address or the identifier breaks anywhere rather than widen the page on a phone. */}
          <Table aria-label="Organization profile" style={{ overflowWrap: 'anywhere' }}>
            <Table.Tbody>
              <Table.Tr>
                <Table.Th scope="row">Name</Table.Th>
                <Table.Td>{org.name}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th scope="row">Email</Table.Th>
                <Table.Td>{org.email}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th scope="row">Identifier</Table.Th>
                <Table.Td ff="monospace">{org.id}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th scope="row">Status</Table.Th>
                <Table.Td>
                  {org.status}
                  {org.suspensionReason ? ` (${org.suspensionReason})` : ''}
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th scope="row">Created</Table.Th>
                <Table.Td>{when(org.createdAt)}</Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </Table>
        </Paper>
        <Paper withBorder p="md">
          <Title order={2} size="h4" mb="sm">
            Live access
          </Title>
          <Stack gap="sm">
            <Group>
              <Text>Status:</Text>
              <Badge color={org.approved ? '#237032' : org.liveAccessRequestedAt ? '#8a5a00' : 'gray.8'} data-testid="live-access">
                {liveState}
              </Badge>
            </Group>
            <Text size="sm" c="dimmed">
              Live checks call the real registers and are charged to the live wallet. The service's operators review each request and approve the organization.
            </Text>
            {!org.approved && !org.liveAccessRequestedAt && owner ? (
              verified ? (
                <Button onClick={() => requestLive.mutate()} loading={requestLive.isPending} w="fit-content">
                  Request live access
                </Button>
              ) : (
                <Alert color="yellow" title="Verify your email first">
                  <Stack gap="xs">
                    <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                      Open the link we sent to {session?.user?.email} to request live access.
                    </Text>
                    <Button size="xs" variant="outline" onClick={() => resend.mutate()} loading={resend.isPending} w="fit-content">
                      Send the link again
                    </Button>
                    {resend.isSuccess ? (
                      <Text size="sm" role="status">
                        Sent.
                      </Text>
                    ) : null}
                  </Stack>
                </Alert>
              )
            ) : null}
            {!owner && !org.approved ? <Text size="sm">Only an owner can request live access.</Text> : null}
            {requestLive.error ? (
              <Text c="red.9" size="sm" role="alert">
                {errorText(requestLive.error)}
              </Text>
            ) : null}
          </Stack>
        </Paper>
      </SimpleGrid>
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="sm">
          Scopes
        </Title>
        <Failure error={scopes.error} />
        <Scroll minWidth={400}>
          <Table aria-label="Scopes">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Scope</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Price per check</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(scopes.data ?? []).map((scope) => (
                <Table.Tr key={scope.scope}>
                  <Table.Td>{scope.scope}</Table.Td>
                  <Table.Td>{scope.active ? <Badge color="#237032">active</Badge> : <Badge color="gray.8">not active</Badge>}</Table.Td>
                  <Table.Td>{naira(scope.priceKobo)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Scroll>
        <Text size="xs" c="dimmed" mt="xs">
          To activate another scope, write to the service's operators.
        </Text>
      </Paper>
    </>
  );
}
