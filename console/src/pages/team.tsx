import { Badge, Button, Group, Paper, Select, Table, Text, TextInput, Title } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { useState, type FormEvent } from 'react';
import { errorText } from '../api';
import { when } from '../dates';
import { Failure, Loading, PageTitle } from '../components/common';
import { ROLE_LABELS, useTeam, useTeamChanges } from '../features/team/api';
import { useSession } from '../session';
import type { Role } from '../types';

const ROLES = (Object.entries(ROLE_LABELS) as [Role, string][]).map(([value, label]) => ({ value, label }));

export default function TeamPage() {
  const { data: session } = useSession();
  const owner = session?.user?.role === 'owner';
  const team = useTeam();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const { invite, cancel, changeRole, remove } = useTeamChanges(() => setEmail(''));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ email, role });
  };

  if (team.isPending) return <Loading />;
  if (team.error) return <Failure error={team.error} />;
  const failure = invite.error ?? cancel.error ?? changeRole.error ?? remove.error;

  return (
    <>
      <PageTitle>Team</PageTitle>
      {owner ? (
        <Paper withBorder p="md" mb="md">
          <form onSubmit={submit}>
            <Title order={2} size="h4" mb="sm">
              Invite a member
            </Title>
            <Group align="end" wrap="wrap">
              <TextInput label="Email" type="email" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} w={280} />
              <Select label="Role" data={ROLES} value={role} onChange={(value) => setRole(value ?? 'developer')} allowDeselect={false} w={320} />
              <Button type="submit" loading={invite.isPending}>
                Send invitation
              </Button>
            </Group>
          </form>
        </Paper>
      ) : null}
      {failure ? (
        <Text c="red.9" role="alert" mb="sm">
          {errorText(failure)}
        </Text>
      ) : null}
      <Paper withBorder p="md" mb="md">
        <Title order={2} size="h4" mb="sm">
          Members
        </Title>
        <Scroll minWidth={560}>
          <Table aria-label="Team members">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Email</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Since</Table.Th>
                {owner ? <Table.Th>Action</Table.Th> : null}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {team.data.members.map((member) => (
                <Table.Tr key={member.id}>
                  <Table.Td>
                    {member.email} {member.you ? <Badge ml="xs">you</Badge> : null}
                    {!member.emailVerified ? (
                      <Badge ml="xs" color="gray.8">
                        unverified
                      </Badge>
                    ) : null}
                    {member.secondFactor === false ? (
                      <Badge ml="xs" color="gray.8">
                        no second factor
                      </Badge>
                    ) : null}
                  </Table.Td>
                  <Table.Td>
                    {owner && !member.you ? (
                      <Select
                        aria-label={`Role of ${member.email}`}
                        data={ROLES.map((item) => ({ value: item.value, label: item.value }))}
                        value={member.role}
                        onChange={(value) => value && changeRole.mutate({ id: member.id, role: value })}
                        allowDeselect={false}
                        w={140}
                        size="xs"
                      />
                    ) : (
                      member.role
                    )}
                  </Table.Td>
                  <Table.Td>{when(member.createdAt)}</Table.Td>
                  {owner ? (
                    <Table.Td>
                      {!member.you ? (
                        <Button size="xs" variant="outline" color="red.9" onClick={() => remove.mutate(member.id)} aria-label={`Remove ${member.email}`}>
                          Remove
                        </Button>
                      ) : null}
                    </Table.Td>
                  ) : null}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Scroll>
      </Paper>
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="sm">
          Pending invitations
        </Title>
        {team.data.invitations.length === 0 ? (
          <Text c="dimmed">None.</Text>
        ) : (
          <Table aria-label="Pending invitations">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Email</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Expires</Table.Th>
                {owner ? <Table.Th>Action</Table.Th> : null}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {team.data.invitations.map((invitation) => (
                <Table.Tr key={invitation.id}>
                  <Table.Td>{invitation.email}</Table.Td>
                  <Table.Td>{invitation.role}</Table.Td>
                  <Table.Td>{when(invitation.expiresAt)}</Table.Td>
                  {owner ? (
                    <Table.Td>
                      <Button size="xs" variant="outline" onClick={() => cancel.mutate(invitation.id)} aria-label={`Cancel the invitation of ${invitation.email}`}>
                        Cancel
                      </Button>
                    </Table.Td>
                  ) : null}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Paper>
    </>
  );
}
