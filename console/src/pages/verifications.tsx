import { Group, Pagination, Select, Text } from '@mantine/core';
import { useState } from 'react';
import { ChecksTable } from '../components/checks-table';
import { Failure, Loading, PageTitle } from '../components/common';
import { useEnvironment } from '../session';
import { useScopes, useVerifications, VERIFICATION_STATUSES } from '../features/checks/api';

const PAGE_SIZE = 20;

export default function VerificationsPage() {
  const { environment } = useEnvironment();
  const [page, setPage] = useState(1);
  const [scope, setScope] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const scopes = useScopes();
  const list = useVerifications(environment, page, PAGE_SIZE, scope, status);

  return (
    <>
      <PageTitle>Verifications</PageTitle>
      <Group mb="md" align="end">
        <Select
          label="Scope"
          placeholder="Every scope"
          clearable
          data={(scopes.data ?? []).map((item) => item.scope)}
          value={scope}
          onChange={(value) => {
            setScope(value);
            setPage(1);
          }}
          w={200}
        />
        <Select
          label="Status"
          placeholder="Every status"
          clearable
          data={VERIFICATION_STATUSES.map((value) => ({ value, label: value.replace('_', ' ') }))}
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
          <ChecksTable rows={list.data.rows} label={`Verifications in ${environment}`} linked showCharged striped minWidth={560} />
          {list.data.rows.length === 0 ? (
            <Text c="dimmed" mt="md">
              No verifications in {environment} yet{scope || status ? ' with these filters' : ''}.
            </Text>
          ) : null}
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              {list.data.meta.total} in all
            </Text>
            {list.data.meta.totalPages > 1 ? <Pagination total={list.data.meta.totalPages} value={page} onChange={setPage} aria-label="Pages of verifications" /> : null}
          </Group>
        </>
      ) : null}
    </>
  );
}
