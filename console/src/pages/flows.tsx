import { Anchor, Button, Group, Pagination, Table, Text } from '@mantine/core';
import { Scroll } from '../components/scroll';
import { useState } from 'react';
import { Link } from 'wouter';
import { Failure, Loading, PageTitle } from '../components/common';
import { when } from '../dates';
import { useFlows } from '../features/flows/api';
import { useEnvironment } from '../session';

const PAGE_SIZE = 20;

/** The environment's verification flows at their newest versions, newest first. */
export default function FlowsPage() {
  const { environment } = useEnvironment();
  const [page, setPage] = useState(1);
  const list = useFlows(environment, page, PAGE_SIZE);

  return (
    <>
      <PageTitle
        actions={
          <Group>
            <Anchor component={Link} href="/sessions">
              Sessions
            </Anchor>
            <Button component={Link} href="/flows/new">
              New flow
            </Button>
          </Group>
        }
      >
        Verification flows
      </PageTitle>
      <Failure error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data ? (
        <>
          <Scroll minWidth={560}>
            <Table striped aria-label={`Verification flows in ${environment}`}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th>Version</Table.Th>
                  <Table.Th>Steps</Table.Th>
                  <Table.Th>Updated</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.data.rows.map((flow) => (
                  <Table.Tr key={flow.id}>
                    <Table.Td>
                      <Anchor component={Link} href={`/flows/${flow.id}`}>
                        {flow.name}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>{flow.version}</Table.Td>
                    <Table.Td>{flow.steps.map((step) => step.type.replace('_', ' ')).join(' → ')}</Table.Td>
                    <Table.Td>{when(flow.updatedAt)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Scroll>
          {list.data.rows.length === 0 ? (
            <Text c="dimmed" mt="md">
              No flows in {environment} yet.
            </Text>
          ) : null}
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              {list.data.meta.total} in all
            </Text>
            {list.data.meta.totalPages > 1 ? <Pagination total={list.data.meta.totalPages} value={page} onChange={setPage} aria-label="Pages of flows" /> : null}
          </Group>
        </>
      ) : null}
    </>
  );
}
