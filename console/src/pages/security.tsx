import { Badge, Button, Checkbox, Paper, PasswordInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { useState, type FormEvent } from 'react';
import { errorText } from '../api';
import { when } from '../dates';
import { Failure, Loading, PageTitle } from '../components/common';
import { useChangePassword, useDeleteAccount, useEndSignInSession, useSignInSessions } from '../features/account/api';
import { useForgetSession, useSession } from '../session';
import { RequirementPanel, SecondFactorPanel } from './second-factor';

function browserOf(userAgent: string | null): string {
  if (!userAgent) return 'Unknown';
  const match = /(Firefox|Edg|Chrome|Safari)\/[\d.]+/.exec(userAgent);
  return match ? match[0].replace('Edg', 'Edge') : userAgent.slice(0, 40);
}

export function SessionsPanel() {
  const forget = useForgetSession();
  const sessions = useSignInSessions();
  const revoke = useEndSignInSession(forget);
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
  const change = useChangePassword();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate(
      { currentPassword, newPassword },
      {
        onSuccess: () => {
          setCurrent('');
          setNew('');
        },
      },
    );
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
          {change.error ? (
            <Text c="red.9" size="sm" role="alert">
              {errorText(change.error)}
            </Text>
          ) : null}
          {change.isSuccess ? (
            <Text c="#237032" size="sm" role="status">
              Changed; your other sessions are signed out.
            </Text>
          ) : null}
          <Button type="submit" loading={change.isPending} w="fit-content">
            Change password
          </Button>
        </Stack>
      </form>
    </Paper>
  );
}

/** Deletes the signed-in account after the password (or an authenticator code); the last owner is refused by the server. */
export function DeleteAccountPanel({ totpEnabled }: { totpEnabled: boolean }) {
  const forget = useForgetSession();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [sure, setSure] = useState(false);
  const remove = useDeleteAccount(forget);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    remove.mutate(password !== '' ? { password } : { code });
  };
  return (
    <Paper withBorder p="md" maw={480} mt="md">
      <form onSubmit={submit} aria-label="Delete your account">
        <Stack>
          <Title order={2} size="h4">
            Delete your account
          </Title>
          <Text size="sm">Your sign-in, sessions and email are erased for good. The organization and its data stay; its last owner cannot leave.</Text>
          <PasswordInput label="Password" autoComplete="current-password" value={password} onChange={(event) => setPassword(event.currentTarget.value)} />
          {totpEnabled ? (
            <TextInput
              label="Or a code of your authenticator app"
              autoComplete="one-time-code"
              inputMode="numeric"
              value={code}
              onChange={(event) => setCode(event.currentTarget.value)}
            />
          ) : null}
          <Checkbox label="I understand this cannot be undone" checked={sure} onChange={(event) => setSure(event.currentTarget.checked)} />
          {remove.error ? (
            <Text c="red.9" size="sm" role="alert">
              {errorText(remove.error)}
            </Text>
          ) : null}
          <Button type="submit" color="red.9" disabled={!sure || (password === '' && code === '')} loading={remove.isPending} w="fit-content">
            Delete my account
          </Button>
        </Stack>
      </form>
    </Paper>
  );
}

export default function SecurityPage() {
  const { data: session } = useSession();
  return (
    <>
      <PageTitle>Security</PageTitle>
      {session?.user?.role === 'owner' ? <RequirementPanel /> : null}
      <SecondFactorPanel />
      <SessionsPanel />
      <PasswordPanel />
      <DeleteAccountPanel totpEnabled={session?.user?.totpEnabled === true} />
    </>
  );
}
