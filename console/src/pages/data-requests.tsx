import { Badge, Button, Paper, Table, Text, Title } from '@mantine/core';
import { errorText } from '../api';
import { when } from '../dates';
import { Failure, Loading, PageTitle } from '../components/common';
import { Scroll } from '../components/scroll';
import { useDataRequests, useHolds, useLiftHold, type DataRequest, type Subject } from '../features/data-subjects/api';
import { useEnvironment } from '../session';

const subjectText = (subject: Subject | null) => (subject === null ? 'by reference' : `${subject.kind} ${subject.maskedIdentifier}`);

/** The record of exports and erasures, by reference and masked identifier: no personal data. */
export function RequestsTable({ rows, withOrganization = false }: { rows: DataRequest[]; withOrganization?: boolean }) {
  if (rows.length === 0) return <Text c="dimmed">No exports or erasures yet.</Text>;
  return (
    <Scroll minWidth={640}>
      <Table striped aria-label="Exports and erasures">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>When</Table.Th>
            {withOrganization ? <Table.Th>Organization</Table.Th> : null}
            <Table.Th>What</Table.Th>
            <Table.Th>Subject</Table.Th>
            <Table.Th>Verifications</Table.Th>
            <Table.Th>Who</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={row.id}>
              <Table.Td>{when(row.at)}</Table.Td>
              {withOrganization ? <Table.Td>{row.organizationId}</Table.Td> : null}
              <Table.Td>
                <Badge color={row.type === 'erasure' ? 'red.9' : 'blue.9'} variant="light">
                  {row.type}
                  {row.format === null ? '' : ` (${row.format})`}
                </Badge>
              </Table.Td>
              <Table.Td>{subjectText(row.subject)}</Table.Td>
              <Table.Td>
                {row.references.length === 0 ? '—' : row.references.join(', ')}
                {row.pending.length > 0 ? ` (still running: ${row.pending.join(', ')})` : ''}
              </Table.Td>
              <Table.Td>
                {row.actor.type} {row.actor.id}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Scroll>
  );
}

/** The owner's page: the record of the environment's exports and erasures, and its holds (lifted here). */
export default function DataRequestsPage() {
  const { environment } = useEnvironment();
  const requests = useDataRequests(environment, 100);
  const holds = useHolds(environment, 100);
  const lift = useLiftHold(environment);

  return (
    <>
      <PageTitle>Data requests</PageTitle>
      <Text mb="md" size="sm">
        Exports and holds are made through the API (POST /v1/data-subjects/export and /holds), with the identifier in the body. Identifiers are shown masked.
      </Text>
      <Paper withBorder p="md" mb="lg">
        <Title order={2} size="h4" mb="sm">
          Holds
        </Title>
        {holds.isPending ? <Loading /> : holds.error ? <Failure error={holds.error} /> : null}
        {lift.error ? (
          <Text c="red.9" size="sm" role="alert">
            {errorText(lift.error)}
          </Text>
        ) : null}
        {holds.data !== undefined && holds.data.rows.length === 0 ? <Text c="dimmed">No holds.</Text> : null}
        {holds.data !== undefined && holds.data.rows.length > 0 ? (
          <Scroll minWidth={600}>
            <Table striped aria-label="Holds">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Placed</Table.Th>
                  <Table.Th>On</Table.Th>
                  <Table.Th>Reason</Table.Th>
                  <Table.Th>Until</Table.Th>
                  <Table.Th>State</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {holds.data.rows.map((hold) => (
                  <Table.Tr key={hold.id}>
                    <Table.Td>{when(hold.placedAt)}</Table.Td>
                    <Table.Td>{hold.reference ?? subjectText(hold.subject)}</Table.Td>
                    <Table.Td>{hold.reason}</Table.Td>
                    <Table.Td>{hold.until === null ? 'until lifted' : when(hold.until)}</Table.Td>
                    <Table.Td>
                      {hold.inForce ? (
                        <Button size="xs" variant="light" color="red.9" loading={lift.isPending && lift.variables === hold.id} onClick={() => lift.mutate(hold.id)}>
                          Lift
                        </Button>
                      ) : hold.liftedAt !== null ? (
                        `lifted ${when(hold.liftedAt)}`
                      ) : (
                        'ended'
                      )}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Scroll>
        ) : null}
      </Paper>
      <Paper withBorder p="md">
        <Title order={2} size="h4" mb="sm">
          Exports and erasures
        </Title>
        {requests.isPending ? <Loading /> : requests.error ? <Failure error={requests.error} /> : <RequestsTable rows={requests.data?.rows ?? []} />}
      </Paper>
    </>
  );
}
