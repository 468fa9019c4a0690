import { Badge, Button, Group, Paper, Select, SimpleGrid, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { errorText, naira } from '../../api';
import { when } from '../../dates';
import { Failure, Loading, PageTitle } from '../../components/common';
import { usePaymentsAttention, useResolveTopUp, type PaymentAttention } from '../../features/operator/api';
import { readOnly, useSession } from '../../session';
import type { Body } from '../../types';

type DismissReason = NonNullable<Body<'resolveTopUp'>['reason']>;
const REASONS: { value: DismissReason; label: string }[] = [
  { value: 'refunded_to_payer', label: 'Refunded to the payer' },
  { value: 'credited_by_manual_funding', label: 'Credited by a manual funding' },
  { value: 'duplicate_payment', label: 'A duplicate payment' },
  { value: 'not_our_payment', label: 'Not a payment to us' },
];

const kobo = (value: number | null) => (value === null ? '—' : naira(value));

/** One top-up: ours and the provider's figures side by side, and (for an admin) its resolution. */
function Payment({ row, writable }: { row: PaymentAttention; writable: boolean }) {
  const resolve = useResolveTopUp();
  const [reason, setReason] = useState<DismissReason | null>(null);
  const settled = row.providerStatus === 'success';
  return (
    <Paper withBorder p="md" aria-label={`Top-up ${row.reference}`}>
      <Group justify="space-between" mb="xs" wrap="wrap">
        <Text ff="monospace" size="sm" style={{ wordBreak: 'break-all' }}>
          {row.reference}
        </Text>
        <Badge color={row.attention === 'flagged' ? 'red.9' : 'blue.9'} variant="filled">
          {row.attention === 'flagged' ? `Flagged: ${row.flagReason ?? 'held'}` : 'Settled, not credited'}
        </Badge>
      </Group>
      <Text size="sm" c="dimmed" mb="xs">
        {row.organizationId}, {row.environment} wallet, {row.rail} ({row.channel}), {when(row.createdAt)}
      </Text>
      <SimpleGrid cols={2} spacing="xs" data-testid="figures">
        <Text size="sm">Ours: {row.status}</Text>
        <Text size="sm">Provider: {row.providerStatus ?? 'not reachable'}</Text>
        <Text size="sm">Started for {naira(row.initiatedKobo)}</Text>
        <Text size="sm">
          Settled {kobo(row.providerKobo)}
          {row.providerCurrency !== null && row.providerCurrency !== 'NGN' ? ` (${row.providerCurrency})` : ''}, fees {kobo(row.providerFeesKobo)}
        </Text>
      </SimpleGrid>
      {writable ? (
        <Group align="end" mt="sm" wrap="wrap">
          <Button
            onClick={() => resolve.mutate({ reference: row.reference, resolution: { action: 'credit' } })}
            loading={resolve.isPending && resolve.variables.resolution.action === 'credit'}
            disabled={!settled}
          >
            Credit {kobo(row.providerKobo)}
          </Button>
          {row.attention === 'flagged' ? (
            <>
              <Select label="Dismiss because" placeholder="Pick a reason" data={REASONS} value={reason} onChange={(value) => setReason(value)} w={260} />
              <Button
                variant="outline"
                color="red.9"
                disabled={reason === null}
                onClick={() => reason !== null && resolve.mutate({ reference: row.reference, resolution: { action: 'dismiss', reason } })}
                loading={resolve.isPending && resolve.variables.resolution.action === 'dismiss'}
              >
                Dismiss
              </Button>
            </>
          ) : null}
        </Group>
      ) : null}
      {resolve.error ? (
        <Text c="red.9" size="sm" mt="xs" role="alert">
          {errorText(resolve.error)}
        </Text>
      ) : null}
    </Paper>
  );
}

/**
 * The payments reconciliation across organizations: flagged top-ups and those the provider settled
 * that were not credited, with the provider's figures asked now. Auditors read it; admins resolve.
 */
export default function OperatorPaymentsPage() {
  const { data: session } = useSession();
  const writable = !readOnly(session);
  const attention = usePaymentsAttention();
  return (
    <>
      <PageTitle>Payments</PageTitle>
      <Text size="sm" mb="md">
        Top-ups that need a person: flagged (nothing was credited: the amounts or currency disagreed) or settled at the provider and not credited. A credit is the provider’s
        settled amount, verified again, credited once; a dismissal credits nothing. Each is recorded on the top-up’s log.
      </Text>
      <Failure error={attention.error} />
      {attention.isPending ? (
        <Loading />
      ) : attention.data?.length === 0 ? (
        <Text c="dimmed">Nothing needs attention.</Text>
      ) : (
        <Stack>
          {attention.data?.map((row) => (
            <Payment key={row.reference} row={row} writable={writable} />
          ))}
        </Stack>
      )}
    </>
  );
}
