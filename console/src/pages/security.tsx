import { Badge, Button, Paper, PasswordInput, Stack, Table, Text, Title } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { del, errorText, get, post, when } from '../api';
import { Failure, Loading, PageTitle } from '../components/common';
import { useForgetSession } from '../session';

interface SessionRow {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  userAgent: string | null;
  address: string | null;
  current: boolean;
}

function browserOf(userAgent: string | null): string {
  if (!userAgent) return 'Unknown';
  const match = /(Firefox|Edg|Chrome|Safari)\/[\d.]+/.exec(userAgent);
  return match ? match[0].replace('Edg', 'Edge') : userAgent.slice(0, 40);
}

export function SessionsPanel() {
  const client = useQueryClient();
  const forget = useForgetSession();
  const sessions = useQuery({ queryKey: ['sessions'], queryFn: ({ signal }) => get<SessionRow[]>('/sessions', signal) });
  const revoke = useMutation({
    mutationFn: async (row: SessionRow) => {
      await del(`/sessions/${encodeURIComponent(row.id)}`);
      return row;
    },
    onSuccess: async (row) => {
      if (row.current) await forget();
      else await client.invalidateQueries({ queryKey: ['sessions'] });
    },
  });
  return (
    <Paper withBorder p="md" mb="md">
      <Title order={2} size="h4" mb="sm">
        Signed-in sessions
      </Title>
      <Failure error={sessions.error ?? revoke.error} />
      {sessions.isPending ? (
        <Loading />
      ) : (
        <Scroll minWidth={640}>
          <Table aria-label="Sessions">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Browser</Table.Th>
                <Table.Th>Address</Table.Th>
                <Table.Th>Signed in</Table.Th>
                <Table.Th>Last seen</Table.Th>
                <Table.Th>Action</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(sessions.data ?? []).map((row) => (
                <Table.Tr key={row.id} data-testid="session-row">
                  <Table.Td>
                    {browserOf(row.userAgent)} {row.current ? <Badge ml="xs">this one</Badge> : null}
                  </Table.Td>
                  <Table.Td>{row.address ?? '—'}</Table.Td>
                  <Table.Td>{when(row.createdAt)}</Table.Td>
                  <Table.Td>{when(row.lastSeenAt)}</Table.Td>
                  <Table.Td>
                    <Button size="xs" variant="outline" color="red.9" onClick={() => revoke.mutate(row)} loading={revoke.isPending && revoke.variables?.id === row.id}>
                      {row.current ? 'Sign out' : 'Revoke'}
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Scroll>
      )}
    </Paper>
  );
}

export function PasswordPanel() {
  const [currentPassword, setCurrent] = useState('');
  const [newPassword, setNew] = useState('');
  const change = useMutation({ mutationFn: () => post('/password/change', { currentPassword, newPassword }) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate(undefined, {
      onSuccess: () => {
        setCurrent('');
        setNew('');
      },
    });
  };
  return (
    <Paper withBorder p="md" maw={480}>
      <form onSubmit={submit}>
        <Stack>
          <Title order={2} size="h4">
            Change your password
          </Title>
          <PasswordInput label="Current password" autoComplete="current-password" required value={currentPassword} onChange={(event) => setCurrent(event.currentTarget.value)} />
          <PasswordInput label="New password" autoComplete="new-password" required value={newPassword} onChange={(event) => setNew(event.currentTarget.value)} />
          {change.error ? <Text c="red.9" size="sm" role="alert">{errorText(change.error)}</Text> : null}
          {change.isSuccess ? <Text c="#237032" size="sm" role="status">Changed; your other sessions are signed out.</Text> : null}
          <Button type="submit" loading={change.isPending} w="fit-content">
            Change password
          </Button>
        </Stack>
      </form>
    </Paper>
  );
}

export default function SecurityPage() {
  return (
    <>
      <PageTitle>Sessions and password</PageTitle>
      <SessionsPanel />
      <PasswordPanel />
    </>
  );
}
