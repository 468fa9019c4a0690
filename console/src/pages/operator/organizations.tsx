import { Anchor, Badge, Group, Pagination, Select, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useState } from 'react';
import { Link } from 'wouter';
import { ColumnsTable, whenColumn, type Column } from '../../components/columns-table';
import { Failure, Loading, PageTitle } from '../../components/common';
import { ORGANIZATION_STATUSES, useOrganizations } from '../../features/operator/api';
import type { Organization } from '../../session';

export function OrganizationState({ organization }: { organization: Organization }) {
  if (organization.status === 'suspended') return <Badge color="red.9">suspended</Badge>;
  if (organization.approved) return <Badge color="#237032">approved</Badge>;
  if (organization.liveAccessRequestedAt) return <Badge color="#8a5a00">live access requested</Badge>;
  return <Badge color="gray.8">sandbox only</Badge>;
}

/** Who an organization is, linked to its page: the first columns of the organizations list and of the approval queue. */
export const organizationColumns: Column<Organization>[] = [
  {
    header: 'Name',
    cell: (organization) => (
      <Anchor component={Link} href={`/operator/organizations/${organization.id}`}>
        {organization.name}
      </Anchor>
    ),
  },
  { header: 'Email', cell: (organization) => organization.email },
];

const LIST_COLUMNS: Column<Organization>[] = [
  ...organizationColumns,
  { header: 'State', cell: (organization) => <OrganizationState organization={organization} /> },
  whenColumn('Created', (organization) => organization.createdAt),
];

export default function OperatorOrganizationsPage() {
  const [search, setSearch] = useState('');
  const [debounced] = useDebouncedValue(search, 300);
  const [status, setStatus] = useState<string | null>(null);
  const [page, setPage] = useState(1);
  const list = useOrganizations(debounced, status, page, 20);
  return (
    <>
      <PageTitle>Organizations</PageTitle>
      <Group mb="md" align="end">
        <TextInput
          label="Search"
          placeholder="Name, email or identifier"
          value={search}
          onChange={(event) => {
            setSearch(event.currentTarget.value);
            setPage(1);
          }}
          w={280}
        />
        <Select
          label="Status"
          placeholder="Any"
          clearable
          data={ORGANIZATION_STATUSES}
          value={status}
          onChange={(value) => {
            setStatus(value);
            setPage(1);
          }}
          w={160}
        />
      </Group>
      <Failure error={list.error} />
      {list.isPending ? <Loading /> : null}
      {list.data ? (
        <>
          <ColumnsTable rows={list.data.rows} columns={LIST_COLUMNS} rowKey={(organization) => organization.id} label="Organizations" minWidth={640} />
          {list.data.rows.length === 0 ? <Text c="dimmed">No organization matches.</Text> : null}
          <Group justify="space-between" mt="md">
            <Text size="sm" c="dimmed">
              {list.data.meta.total} in all
            </Text>
            {list.data.meta.totalPages > 1 ? <Pagination total={list.data.meta.totalPages} value={page} onChange={setPage} aria-label="Pages of organizations" /> : null}
          </Group>
        </>
      ) : null}
    </>
  );
}
