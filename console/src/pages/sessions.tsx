import { Anchor, Group, Pagination, Select, Table, Text } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { useState } from 'react';
import { Link } from 'wouter';
import { Failure, Loading, PageTitle } from '../components/common';
import { SessionStatusBadge } from '../components/session-review';
import { when } from '../dates';
import { SESSION_STATUSES, useSessions } from '../features/flows/api';
import { useEnvironment } from '../session';

const PAGE_SIZE = 20;

/** The environment's verification sessions, newest first, with the API's paging and a status filter. */
export default function SessionsPage() {
  const { environment } = useEnvironment();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<string | null>(null);
  const list = useSessions(environment, page, PAGE_SIZE, status);

  return (
    <>
      <PageTitle
        actions={
          <Anchor component={Link} href="/flows">
            Flows
          </Anchor>
        }
      >
        Verification sessions
      </PageTitle>
      <Group mb="md" align="end">
        <Select
          label="Status"
          placeholder="Every status"
          clearable
          data={SESSION_STATUSES.map((value) => ({ value, label: value.replace('_', ' ') }))}
          value={status}
          onChange={(value) => {
            setStatus(value);
            setPage(1);
          }}
          w={200}
        />
      </Group>
      <Failure error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data ? (
        <>
          <Scroll minWidth={560}>
            <Table striped aria-label={`Verification sessions in ${environment}`}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Session</Table.Th>
                  <Table.Th>Status</Table.Th>
                  <Table.Th>Started</Table.Th>
                  <Table.Th>Decided</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.data.rows.map((session) => (
                  <Table.Tr key={session.id}>
                    <Table.Td>
                      <Anchor component={Link} href={`/sessions/${session.id}`} ff="monospace" size="sm">
                        {session.id}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>
                      <SessionStatusBadge status={session.status} />
                    </Table.Td>
                    <Table.Td>{when(session.createdAt)}</Table.Td>
                    <Table.Td>{when(session.decidedAt)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Scroll>
          {list.data.rows.length === 0 ? (
            <Text c="dimmed" mt="md">
              No sessions in {environment} yet{status ? ' with this status' : ''}.
            </Text>
          ) : null}
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              {list.data.meta.total} in all
            </Text>
            {list.data.meta.totalPages > 1 ? <Pagination total={list.data.meta.totalPages} value={page} onChange={setPage} aria-label="Pages of sessions" /> : null}
          </Group>
        </>
      ) : null}
    </>
  );
}
