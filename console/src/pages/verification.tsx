import { Alert, Anchor, Button, Group, Image, Paper, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { CodeBlock } from '../components/code';
import { Link, useParams } from 'wouter';
import { errorText, naira } from '../api';
import { when } from '../dates';
import { Failure, Loading, PageTitle } from '../components/common';
import { StatusBadge } from '../components/status';
import { useEnvironment } from '../session';
import { useEraseVerification, useVerification } from '../features/checks/api';

/** A portrait arrives as a signed link in the result; its field name ends in "Url" or names an image. */
function portraitOf(result: Record<string, unknown>): { field: string; url: string } | undefined {
  for (const [field, value] of Object.entries(result)) {
    if (typeof value === 'string' && /portrait|photo|image/i.test(field) && /^(https?:\/\/|\/)/.test(value)) return { field, url: value };
  }
  return undefined;
}

function text(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

export default function VerificationPage() {
  const { reference } = useParams<{ reference: string }>();
  const { environment } = useEnvironment();
  const detail = useVerification(environment, reference);
  const erase = useEraseVerification(environment, reference);

  if (detail.isPending) return <Loading />;
  if (detail.error) return <Failure error={detail.error} />;
  const verification = detail.data;
  const portrait = portraitOf(verification.result ?? {});
  const fields = Object.entries(verification.result ?? {}).filter(([field]) => field !== portrait?.field);

  return (
    <>
      <PageTitle
        actions={
          <Anchor component={Link} href="/verifications">
            Back to the list
          </Anchor>
        }
      >
        Verification
      </PageTitle>
      <Paper withBorder p="md" mb="md">
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }}>
          <div>
            <Text size="xs" c="dimmed">
              Reference
            </Text>
            <Text ff="monospace" size="sm" data-testid="verification-reference" style={{ wordBreak: 'break-all' }}>
              {verification.reference}
            </Text>
          </div>
          <div>
            <Text size="xs" c="dimmed">
              Scope
            </Text>
            <Text>{verification.scope}</Text>
          </div>
          <div>
            <Text size="xs" c="dimmed">
              Status
            </Text>
            <StatusBadge status={verification.status} />
          </div>
          <div>
            <Text size="xs" c="dimmed">
              Price
            </Text>
            <Text>
              {naira(verification.priceKobo)} {verification.charged ? 'charged' : 'not charged'}
            </Text>
          </div>
          <div>
            <Text size="xs" c="dimmed">
              When
            </Text>
            <Text>{when(verification.createdAt)}</Text>
          </div>
          {verification.errorMessage ? (
            <div>
              <Text size="xs" c="dimmed">
                Error
              </Text>
              <Text>
                {verification.errorMessage}
                {verification.failureReason ? ` (${verification.failureReason})` : ''}
              </Text>
            </div>
          ) : null}
        </SimpleGrid>
      </Paper>
      {verification.personalDataErasedAt ? (
        <Alert color="gray" mb="md">
          The personal data of this check was erased on {when(verification.personalDataErasedAt)}.
        </Alert>
      ) : null}
      <SimpleGrid cols={{ base: 1, md: portrait ? 2 : 1 }}>
        <Paper withBorder p="md">
          <Title order={2} size="h4" mb="sm">
            Result
          </Title>
          {fields.length === 0 ? (
            <Text c="dimmed">No fields.</Text>
          ) : (
            <Table aria-label="Result fields">
              <Table.Tbody>
                {fields.map(([field, value]) => (
                  <Table.Tr key={field}>
                    <Table.Th scope="row" w="40%">
                      {field}
                    </Table.Th>
                    <Table.Td>{text(value)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
          <Title order={3} size="h5" mt="md" mb="xs">
            Request
          </Title>
          <CodeBlock label="The request">{JSON.stringify(verification.request, null, 2)}</CodeBlock>
        </Paper>
        {portrait ? (
          <Paper withBorder p="md">
            <Title order={2} size="h4" mb="sm">
              Portrait
            </Title>
            <Image src={portrait.url} alt="Portrait on record" maw={240} radius="sm" />
          </Paper>
        ) : null}
      </SimpleGrid>
      {!verification.personalDataErasedAt && verification.status !== 'pending' ? (
        <Stack mt="md" gap="xs">
          <Group>
            <Button
              color="red.9"
              variant="outline"
              loading={erase.isPending}
              onClick={() => {
                if (window.confirm('Erase the personal data of this check? This cannot be undone.')) erase.mutate();
              }}
            >
              Erase personal data
            </Button>
          </Group>
          {erase.error ? (
            <Text c="red.9" size="sm" role="alert">
              {errorText(erase.error)}
            </Text>
          ) : null}
        </Stack>
      ) : null}
    </>
  );
}
