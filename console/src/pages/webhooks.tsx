import { Alert, Badge, Button, Group, Modal, MultiSelect, Paper, Stack, Switch, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { errorText } from '../api';
import { when } from '../dates';
import { CodeBlock } from '../components/code';
import { Failure, Loading, PageTitle } from '../components/common';
import { CopyButton } from '../components/copy';
import { Scroll } from '../components/scroll';
import { useDeliveries, useEndpointChanges, useEndpoints, useEventTypes, useResendDelivery, type Endpoint, type EventType } from '../features/webhooks/api';
import { useEnvironment, type Environment } from '../session';

/** While the page is open, deliveries are read again every second: a check's event shows up as it is sent. */
const LIVE_MS = 1_000;
const DELIVERIES_SHOWN = 20;
/** Characters of an answer shown in the table (the server keeps the first 1 KiB). */
const EXCERPT = 120;
const STATUS_COLORS = { succeeded: '#237032', failed: 'red.9', pending: 'gray.8' } as const;

export default function WebhooksPage() {
  const { environment } = useEnvironment();
  const endpoints = useEndpoints(environment);
  const eventTypes = useEventTypes();
  const [form, setForm] = useState({ url: '', description: '', eventTypes: [] as EventType[] });
  const [secret, setSecret] = useState<{ url: string; secret: string }>();
  const [chosen, setChosen] = useState<string>();
  const { create, toggle, remove, rotate } = useEndpointChanges(environment, {
    created: (created) => {
      setSecret({ url: created.url, secret: created.secret });
      setChosen(created.id);
      setForm({ url: '', description: '', eventTypes: [] });
    },
    rotated: (rotated, endpoint) => setSecret({ url: endpoint.url, secret: rotated.secret }),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ url: form.url.trim(), eventTypes: form.eventTypes, description: form.description.trim() === '' ? null : form.description.trim() });
  };

  const list = endpoints.data ?? [];
  const shown = list.find((endpoint) => endpoint.id === chosen) ?? list[0];

  return (
    <>
      <PageTitle>Webhooks ({environment})</PageTitle>
      <Paper withBorder p="md" mb="lg">
        <form onSubmit={submit}>
          <Title order={2} size="h4" mb="sm">
            Add an endpoint
          </Title>
          <Stack gap="sm">
            <TextInput
              label="URL"
              placeholder="https://hooks.example.com/ledger"
              value={form.url}
              onChange={(event) => setForm({ ...form, url: event.currentTarget.value })}
              required
              maxLength={2048}
            />
            <MultiSelect
              label="Event types"
              placeholder={form.eventTypes.length === 0 ? 'Every event type' : undefined}
              data={eventTypes.data ?? []}
              value={form.eventTypes}
              onChange={(value) => setForm({ ...form, eventTypes: value })}
              clearable
              searchable
            />
            <TextInput
              label="Description"
              placeholder="e.g. Production receiver"
              value={form.description}
              onChange={(event) => setForm({ ...form, description: event.currentTarget.value })}
              maxLength={500}
            />
            <Group>
              <Button type="submit" loading={create.isPending}>
                Add endpoint
              </Button>
            </Group>
          </Stack>
          {create.error ? (
            <Text c="red.9" size="sm" mt="xs" role="alert">
              {errorText(create.error)}
            </Text>
          ) : null}
        </form>
      </Paper>

      <Modal opened={secret !== undefined} onClose={() => setSecret(undefined)} title="Signing secret" size="lg" closeOnClickOutside={false}>
        {secret ? (
          <Stack>
            <Alert color="yellow" title="Shown this once">
              Copy the signing secret of {secret.url} now: you will not see it again. Your receiver checks each delivery's signature with it.
            </Alert>
            <CodeBlock label="The signing secret" testId="webhook-secret">
              {secret.secret}
            </CodeBlock>
            <Group justify="space-between">
              <CopyButton value={secret.secret} label="Copy the signing secret" />
              <Button onClick={() => setSecret(undefined)}>I have copied it</Button>
            </Group>
          </Stack>
        ) : null}
      </Modal>

      <Title order={2} size="h4" mb="sm">
        Endpoints
      </Title>
      <Failure error={endpoints.error ?? toggle.error ?? remove.error ?? rotate.error} />
      {endpoints.isPending ? (
        <Loading />
      ) : (
        <Scroll minWidth={760}>
          <Table striped aria-label={`${environment} webhook endpoints`}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>URL</Table.Th>
                <Table.Th>Event types</Table.Th>
                <Table.Th>Enabled</Table.Th>
                <Table.Th>Description</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((endpoint) => (
                <Table.Tr key={endpoint.id} data-testid={`endpoint-${endpoint.id}`}>
                  <Table.Td ff="monospace" fz="sm" style={{ wordBreak: 'break-all' }}>
                    {endpoint.url}
                  </Table.Td>
                  <Table.Td>{endpoint.eventTypes.length === 0 ? 'every event type' : endpoint.eventTypes.join(', ')}</Table.Td>
                  <Table.Td>
                    <Switch
                      checked={endpoint.enabled}
                      onChange={() => toggle.mutate(endpoint)}
                      disabled={toggle.isPending && toggle.variables?.id === endpoint.id}
                      aria-label={`Send to ${endpoint.url}`}
                      label={endpoint.enabled ? 'on' : 'off'}
                    />
                  </Table.Td>
                  <Table.Td>{endpoint.description ?? '—'}</Table.Td>
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      <Button
                        size="xs"
                        variant={shown?.id === endpoint.id ? 'filled' : 'outline'}
                        onClick={() => setChosen(endpoint.id)}
                        aria-label={`Show the deliveries to ${endpoint.url}`}
                      >
                        Deliveries
                      </Button>
                      <Button
                        size="xs"
                        variant="outline"
                        loading={rotate.isPending && rotate.variables?.id === endpoint.id}
                        aria-label={`Rotate the secret of ${endpoint.url}`}
                        onClick={() => {
                          if (window.confirm(`Rotate the signing secret of ${endpoint.url}? The current one keeps signing beside the new one for a day.`)) rotate.mutate(endpoint);
                        }}
                      >
                        Rotate secret
                      </Button>
                      <Button
                        size="xs"
                        color="red.9"
                        variant="outline"
                        loading={remove.isPending && remove.variables === endpoint.id}
                        aria-label={`Delete ${endpoint.url}`}
                        onClick={() => {
                          if (window.confirm(`Delete the endpoint ${endpoint.url}? Nothing more will be sent to it.`)) remove.mutate(endpoint.id);
                        }}
                      >
                        Delete
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {list.length === 0 ? <Text c="dimmed">No {environment} webhook endpoints yet.</Text> : null}
        </Scroll>
      )}
      {shown ? <Deliveries endpoint={shown} environment={environment} /> : null}
    </>
  );
}

function Deliveries({ endpoint, environment }: { endpoint: Endpoint; environment: Environment }) {
  const deliveries = useDeliveries(environment, endpoint.id, DELIVERIES_SHOWN, LIVE_MS);
  const resend = useResendDelivery(environment, endpoint.id);
  const rows = deliveries.data?.rows ?? [];

  return (
    <section aria-labelledby="deliveries-title">
      <Title order={2} size="h4" mt="lg" mb="xs" id="deliveries-title">
        Deliveries
      </Title>
      <Text size="sm" c="dimmed" mb="sm" style={{ wordBreak: 'break-all' }}>
        To {endpoint.url}, newest first, updated every second.
      </Text>
      <Failure error={deliveries.error ?? resend.error} />
      {deliveries.isPending ? <Loading label="Loading the deliveries" /> : null}
      {deliveries.data && rows.length === 0 ? <Text c="dimmed">No deliveries yet: run a check in the playground to send verification.completed.</Text> : null}
      <Stack gap="sm">
        {rows.map((delivery) => (
          <Paper withBorder p="sm" key={delivery.id} data-testid={`delivery-${delivery.eventType}`}>
            <Group justify="space-between" mb="xs" wrap="wrap">
              <Group gap="xs" wrap="wrap">
                <Text fw={600}>{delivery.eventType}</Text>
                <Badge color={STATUS_COLORS[delivery.status]} variant="filled">
                  {delivery.status}
                </Badge>
                <Text size="sm" c="dimmed">
                  {when(delivery.createdAt)}
                </Text>
              </Group>
              <Button
                size="xs"
                variant="outline"
                loading={resend.isPending && resend.variables === delivery.id}
                onClick={() => resend.mutate(delivery.id)}
                aria-label={`Resend ${delivery.eventType} ${delivery.webhookId}`}
              >
                Resend
              </Button>
            </Group>
            <Text size="xs" ff="monospace" c="dimmed" mb="xs" style={{ wordBreak: 'break-all' }}>
              {delivery.webhookId}
            </Text>
            {delivery.attempts.length === 0 ? (
              <Text size="sm" c="dimmed">
                {delivery.nextAttemptAt ? `First attempt ${when(delivery.nextAttemptAt)}` : 'No attempt yet'}
              </Text>
            ) : (
              <Scroll minWidth={520}>
                <Table aria-label={`Attempts of ${delivery.eventType} ${delivery.webhookId}`} fz="sm">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>#</Table.Th>
                      <Table.Th>Time</Table.Th>
                      <Table.Th>Latency</Table.Th>
                      <Table.Th>Status</Table.Th>
                      <Table.Th>Response</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {delivery.attempts.map((attempt) => (
                      <Table.Tr key={attempt.attempt}>
                        <Table.Td>{attempt.attempt}</Table.Td>
                        <Table.Td>{when(attempt.attemptedAt)}</Table.Td>
                        <Table.Td>{attempt.latencyMs} ms</Table.Td>
                        <Table.Td data-testid="attempt-status">{attempt.statusCode ?? attempt.errorCode ?? attempt.outcome}</Table.Td>
                        <Table.Td ff="monospace" style={{ wordBreak: 'break-all' }}>
                          {excerpt(attempt.responseExcerpt)}
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Scroll>
            )}
          </Paper>
        ))}
      </Stack>
    </section>
  );
}

function excerpt(text: string | null): string {
  if (text === null || text === '') return '—';
  return text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text;
}
