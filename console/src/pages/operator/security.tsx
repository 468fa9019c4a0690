import { Badge, Button, Group, Paper, Select, Table, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { errorText } from '../../api';
import { when } from '../../dates';
import { Failure, PageTitle } from '../../components/common';
import { OPERATOR_ROLE_LABELS, useInviteOperator, useOperators } from '../../features/operator/api';
import { readOnly, useSession } from '../../session';
import type { OperatorRole } from '../../types';
import { DeleteAccountPanel, PasswordPanel, SessionsPanel } from '../security';

export default function OperatorSecurityPage() {
  const { data: session } = useSession();
  const operators = useOperators();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<OperatorRole>('auditor');
  const invite = useInviteOperator(() => setEmail(''));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate({ email, role });
  };
  return (
    <>
      <PageTitle>Operators and your account</PageTitle>
      <Paper withBorder p="md" mb="md">
        <Title order={2} size="h4" mb="sm">
          Operator accounts
        </Title>
        <Failure error={operators.error} />
        <Table aria-label="Operator accounts">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Email</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>Second factor</Table.Th>
              <Table.Th>Since</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(operators.data?.operators ?? []).map((operator) => (
              <Table.Tr key={operator.id}>
                <Table.Td>{operator.email}</Table.Td>
                <Table.Td>{operator.role}</Table.Td>
                <Table.Td>{operator.totpEnabled ? <Badge color="#237032">on</Badge> : <Badge color="gray.8">not set up</Badge>}</Table.Td>
                <Table.Td>{when(operator.createdAt)}</Table.Td>
              </Table.Tr>
            ))}
            {(operators.data?.invitations ?? []).map((invitation) => (
              <Table.Tr key={invitation.id}>
                <Table.Td>{invitation.email}</Table.Td>
                <Table.Td>{invitation.role}</Table.Td>
                <Table.Td>invited, until {when(invitation.expiresAt)}</Table.Td>
                <Table.Td>—</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        {!readOnly(session) ? (
          <form onSubmit={submit}>
            <Group align="end" mt="md">
              <TextInput label="Invite by email" type="email" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} w={260} />
              <Select
                label="Role"
                data={(Object.entries(OPERATOR_ROLE_LABELS) as [OperatorRole, string][]).map(([value, label]) => ({ value, label }))}
                value={role}
                onChange={(value) => setRole(value ?? 'auditor')}
                allowDeselect={false}
                w={280}
              />
              <Button type="submit" loading={invite.isPending}>
                Invite
              </Button>
            </Group>
            {invite.error ? (
              <Text c="red.9" size="sm" role="alert">
                {errorText(invite.error)}
              </Text>
            ) : null}
            {invite.isSuccess ? (
              <Text c="#237032" size="sm" role="status">
                Invitation sent.
              </Text>
            ) : null}
          </form>
        ) : null}
      </Paper>
      <SessionsPanel />
      <PasswordPanel />
      <DeleteAccountPanel totpEnabled={session?.user?.totpEnabled === true} />
    </>
  );
}
