import { Badge, Button, Group, Paper, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { useSearch } from 'wouter';
import { Balances } from '../../components/balances';
import { Failure, Loading, PageTitle } from '../../components/common';
import { ColumnsTable, whenColumn, type Column } from '../../components/columns-table';
import { entryMoneyColumns, referenceColumn } from '../../components/money-columns';
import { useReconciliation, useWalletAudit, walletAuditCsvUrl, type AuditedWallet, type AuditEntry as Entry } from '../../features/operator/api';

const ENTRY_COLUMNS: Column<Entry>[] = [
  { header: 'Revision', cell: (entry) => entry.revision },
  whenColumn('When', (entry) => entry.occurredAt),
  { header: 'Entry', cell: (entry) => entry.entryType },
  referenceColumn,
  ...entryMoneyColumns,
  { header: 'Actor', cell: (entry) => entry.actor ?? '—', font: 'small' },
];

export default function OperatorAuditPage() {
  const initial = new URLSearchParams(useSearch()).get('organization') ?? '';
  const [organization, setOrganization] = useState(initial);
  const [environment, setEnvironment] = useState<'test' | 'live'>('live');
  const [asOf, setAsOf] = useState('');
  const [asked, setAsked] = useState<AuditedWallet>();
  const asOfIso = asked?.asOf ? new Date(asked.asOf).toISOString() : undefined;
  const replay = useWalletAudit(asked, asOfIso);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setAsked({ organization: organization.trim(), environment, asOf });
  };
  const figures = replay.data?.meta?.summary?.closing;
  const chain = replay.data?.meta?.summary?.chain;
  const reconcile = useReconciliation(asked);

  return (
    <>
      <PageTitle>Wallet audit</PageTitle>
      <Text size="sm" c="dimmed" mb="md">
        Replays a wallet from the event log (never from the read models), as of a moment, and verifies its hash chain.
      </Text>
      <Paper withBorder p="md" mb="md">
        <form onSubmit={submit}>
          <Group align="end" wrap="wrap">
            <TextInput label="Organization identifier" placeholder="org_…" required value={organization} onChange={(event) => setOrganization(event.currentTarget.value)} w={300} />
            <Select
              label="Wallet"
              data={['test', 'live']}
              value={environment}
              onChange={(value) => setEnvironment((value as 'test' | 'live') ?? 'live')}
              allowDeselect={false}
              w={100}
            />
            <TextInput label="As of (optional)" type="datetime-local" value={asOf} onChange={(event) => setAsOf(event.currentTarget.value)} w={220} />
            <Button type="submit">Replay</Button>
            {asked ? (
              <Button component="a" variant="outline" href={walletAuditCsvUrl(asked, asOfIso)} download>
                Download CSV
              </Button>
            ) : null}
          </Group>
        </form>
      </Paper>
      {replay.isFetching ? <Loading label="Replaying" /> : null}
      <Failure error={replay.error} />
      {replay.data ? (
        <>
          <Balances
            figures={figures}
            testIdPrefix="audit-"
            extra={{
              label: 'Hash chain',
              content: chain ? (
                <Badge color={chain.verified ? '#237032' : 'red.9'} data-testid="audit-chain">
                  {chain.verified ? 'verified' : 'broken'}
                </Badge>
              ) : (
                <Text>—</Text>
              ),
            }}
          />
          <Paper withBorder p="md" mb="md">
            <Group justify="space-between">
              <Title order={2} size="h4">
                Reconciliation with the read models
              </Title>
              <Button variant="outline" onClick={() => void reconcile.refetch()} loading={reconcile.isFetching}>
                Reconcile
              </Button>
            </Group>
            <Failure error={reconcile.error} />
            {reconcile.data ? (
              reconcile.data.differenceCount === 0 ? (
                <Text mt="sm" data-testid="reconcile-result">
                  No difference: the balances the API shows match the event log.
                </Text>
              ) : (
                <Stack mt="sm" gap="xs" data-testid="reconcile-result">
                  <Text c="red.9">{reconcile.data.differenceCount} differences</Text>
                  {reconcile.data.differences.map((difference, index) => (
                    <Text size="sm" key={index}>
                      {difference.check}: {difference.message}
                    </Text>
                  ))}
                </Stack>
              )
            ) : null}
            {reconcile.data?.notes.map((note, index) => (
              <Text size="xs" c="dimmed" key={index}>
                {note}
              </Text>
            ))}
          </Paper>
          <Title order={2} size="h4" mb="sm">
            Entries
          </Title>
          <ColumnsTable
            rows={Array.isArray(replay.data.data) ? replay.data.data : []}
            columns={ENTRY_COLUMNS}
            rowKey={(entry) => entry.revision}
            label="Wallet entries"
            minWidth={800}
          />
        </>
      ) : null}
    </>
  );
}
