import { Paper, Text } from '@mantine/core';
import { Failure, Loading, PageTitle } from '../../components/common';
import { useAllDataRequests } from '../../features/data-subjects/api';
import { RequestsTable } from '../data-requests';

/** Every organization's exports and erasures, most recent first: references and masked identifiers only. */
export default function OperatorDataRequestsPage() {
  const requests = useAllDataRequests(100);
  return (
    <>
      <PageTitle>Data requests</PageTitle>
      <Text mb="md" size="sm">
        The last 100 exports and erasures of all organizations.
      </Text>
      <Paper withBorder p="md">
        {requests.isPending ? <Loading /> : requests.error ? <Failure error={requests.error} /> : <RequestsTable rows={requests.data?.rows ?? []} withOrganization />}
      </Paper>
    </>
  );
}
