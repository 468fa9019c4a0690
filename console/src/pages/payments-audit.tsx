import { Badge, Group, Paper, Text } from '@mantine/core';
import { naira } from '../api';
import { Failure, Loading, PageTitle } from '../components/common';
import { ColumnsTable, type Column } from '../components/columns-table';
import { useEnvironment } from '../session';
import { usePaymentsReconciliation } from '../features/wallet/api';
import type { Data } from '../types';

type Row = Data<'getPaymentsReconciliation'>['topUps'][number];
type Flag = Row['flags'][number];

const FLAG_TEXT: Record<Flag, string> = {
  mismatch: 'Mismatch',
  uncredited: 'Uncredited',
  duplicate: 'Credited twice',
  missing_at_provider: 'Not at the provider',
  unverified: 'Provider not answering',
};

const money = (kobo: number | null) => (kobo === null ? '—' : naira(kobo));

const COLUMNS: Column<Row>[] = [
  { header: 'Reference', cell: (row) => row.reference, font: 'monospace' },
  { header: 'Top-up', cell: (row) => row.status },
  { header: 'Provider', cell: (row) => `${row.rail}: ${row.providerStatus ?? 'not answering'}` },
  { header: 'Initiated', cell: (row) => naira(row.initiatedKobo), align: 'right' },
  { header: 'Settled', cell: (row) => money(row.settledKobo), align: 'right' },
  { header: 'Fees', cell: (row) => money(row.feesKobo), align: 'right' },
  { header: 'Credited', cell: (row) => money(row.creditedKobo), align: 'right' },
  {
    header: 'Flags',
    cell: (row) =>
      row.flags.length === 0 ? (
        'None'
      ) : (
        <Group gap={4}>
          {row.flags.map((flag) => (
            <Badge key={flag} color="red.9" variant="filled">
              {FLAG_TEXT[flag]}
            </Badge>
          ))}
        </Group>
      ),
    testId: (row) => `flags-${row.reference}`,
  },
];

/**
 * The payments reconciliation for the auditor: each recent top-up of the wallet, what the provider
 * settled (asked now, by reference), what was credited and the fees, flagged where they disagree.
 */
export default function PaymentsAuditPage() {
  const { environment } = useEnvironment();
  const reconciliation = usePaymentsReconciliation(environment);
  const data = reconciliation.data;
  return (
    <>
      <PageTitle>Payments reconciliation ({environment})</PageTitle>
      <Text size="sm" mb="md">
        Each top-up from the event log, checked now with the payment provider by its reference and against the wallet&apos;s fundings. The most recent {data?.limit ?? 100} are
        shown.
      </Text>
      <Failure error={reconciliation.error} />
      {reconciliation.isPending ? (
        <Loading />
      ) : data ? (
        <>
          <Paper withBorder p="md" mb="lg" data-testid="reconciliation-totals">
            <Text size="sm">
              {data.totals.count} top-ups: {naira(data.totals.settledKobo)} settled by the provider, {naira(data.totals.creditedKobo)} credited, {naira(data.totals.feesKobo)} in
              the provider&apos;s fees. <strong>{data.totals.flagged === 0 ? 'No difference.' : `${data.totals.flagged} flagged.`}</strong>
            </Text>
          </Paper>
          <ColumnsTable rows={data.topUps} columns={COLUMNS} rowKey={(row) => row.reference} label="Top-ups reconciled" minWidth={900} />
        </>
      ) : null}
    </>
  );
}
