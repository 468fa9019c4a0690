import { Alert, Badge, Button, Group, Modal, MultiSelect, Paper, Select, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { CodeBlock } from '../components/code';
import { useState, type FormEvent } from 'react';
import { errorText } from '../api';
import { when } from '../dates';
import { CopyButton } from '../components/copy';
import { Failure, Loading, PageTitle } from '../components/common';
import { useEnvironment, type Environment } from '../session';
import { useScopes } from '../features/checks/api';
import { useIssueKey, useKeys, useRevokeKey } from '../features/keys/api';
import type { IssuedApiKey, Scope } from '../types';

export default function KeysPage() {
  const { environment } = useEnvironment();
  const keys = useKeys();
  const scopes = useScopes();
  const [keyEnvironment, setKeyEnvironment] = useState<Environment>(environment);
  const [name, setName] = useState('');
  const [allowed, setAllowed] = useState<Scope[]>([]);
  const [issued, setIssued] = useState<IssuedApiKey>();

  const create = useIssueKey((key) => {
    setIssued(key);
    setName('');
    setAllowed([]);
  });
  const revoke = useRevokeKey();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ environment: keyEnvironment, name: name.trim() === '' ? undefined : name.trim(), scopes: allowed.length === 0 ? undefined : allowed });
  };

  const shown = (keys.data ?? []).filter((key) => key.environment === environment);

  return (
    <>
      <PageTitle>API keys</PageTitle>
      <Paper withBorder p="md" mb="lg">
        <form onSubmit={submit}>
          <Title order={2} size="h4" mb="sm">
            Create a key
          </Title>
          <Group align="end" wrap="wrap">
            <Select
              label="Environment"
              data={[
                { value: 'test', label: 'Test' },
                { value: 'live', label: 'Live' },
              ]}
              value={keyEnvironment}
              onChange={(value) => setKeyEnvironment((value as Environment) ?? 'test')}
              allowDeselect={false}
              w={140}
            />
            <TextInput label="Name" placeholder="e.g. Backend server" value={name} onChange={(event) => setName(event.currentTarget.value)} maxLength={100} w={240} />
            <MultiSelect
              label="Scopes"
              placeholder={allowed.length === 0 ? 'Every active scope' : undefined}
              data={(scopes.data ?? []).filter((item) => item.active).map((item) => item.scope)}
              value={allowed}
              onChange={setAllowed}
              clearable
              w={280}
            />
            <Button type="submit" loading={create.isPending}>
              Create key
            </Button>
          </Group>
          {create.error ? (
            <Text c="red.9" size="sm" mt="xs" role="alert">
              {errorText(create.error)}
            </Text>
          ) : null}
        </form>
      </Paper>

      <Modal opened={issued !== undefined} onClose={() => setIssued(undefined)} title="Your new key" size="lg" closeOnClickOutside={false}>
        {issued ? (
          <Stack>
            <Alert color="yellow" title="Shown this once">
              Copy the key now and keep it somewhere safe: the service keeps only its hash and cannot show it again.
            </Alert>
            <CodeBlock label="The new key" testId="issued-key">
              {issued.key}
            </CodeBlock>
            <Group justify="space-between">
              <CopyButton value={issued.key} label="Copy the key" />
              <Button onClick={() => setIssued(undefined)}>I have copied it</Button>
            </Group>
          </Stack>
        ) : null}
      </Modal>

      <Title order={2} size="h4" mb="sm">
        {environment === 'live' ? 'Live' : 'Test'} keys
      </Title>
      <Failure error={keys.error ?? revoke.error} />
      {keys.isPending ? (
        <Loading />
      ) : (
        <Scroll minWidth={720}>
          <Table striped aria-label={`${environment} API keys`}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>Scopes</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {shown.map((key) => (
                <Table.Tr key={key.id} data-testid={`key-${key.id}`}>
                  <Table.Td>{key.name ?? 'unnamed'}</Table.Td>
                  <Table.Td ff="monospace" fz="sm">
                    {key.prefix}…{key.last4}
                  </Table.Td>
                  <Table.Td>{key.scopes === null ? 'every active scope' : key.scopes.join(', ')}</Table.Td>
                  <Table.Td>{when(key.createdAt)}</Table.Td>
                  <Table.Td>{key.lastUsedAt ? when(key.lastUsedAt) : 'never'}</Table.Td>
                  <Table.Td>
                    {key.revokedAt ? (
                      <Badge color="gray.8">revoked</Badge>
                    ) : (
                      <Button
                        size="xs"
                        color="red.9"
                        variant="outline"
                        aria-label={`Revoke ${key.name ?? 'the key'} ${key.prefix}…${key.last4}`}
                        loading={revoke.isPending && revoke.variables === key.id}
                        onClick={() => {
                          if (window.confirm(`Revoke ${key.prefix}…${key.last4}? Requests with it will be refused at once.`)) revoke.mutate(key.id);
                        }}
                      >
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {shown.length === 0 ? <Text c="dimmed">No {environment} keys yet.</Text> : null}
        </Scroll>
      )}
    </>
  );
}
