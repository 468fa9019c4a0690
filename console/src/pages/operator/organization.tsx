import { Alert, Anchor, Badge, Button, Group, Modal, MultiSelect, NumberInput, Paper, Select, SimpleGrid, Stack, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { Scroll } from '../../components/scroll';
import { CodeBlock } from '../../components/code';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Link, useParams } from 'wouter';
import { errorText, naira } from '../../api';
import { when } from '../../dates';
import { CopyButton } from '../../components/copy';
import { WalletsTable } from '../../components/balances';
import { Failure, Loading, PageTitle, textField } from '../../components/common';
import {
  FALLBACK_PROVIDERS,
  PROVIDERS,
  useOrganizationChanges,
  useOrganizationDetail,
  useOrganizationTopUps,
  type OrganizationDetail as Detail,
  type ProviderForm,
} from '../../features/operator/api';
import { readOnly, useSession, type Environment } from '../../session';
import type { IssuedApiKey, Scope } from '../../types';
import { OrganizationState } from './organizations';

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h4" mb="sm">
        {title}
      </Title>
      {children}
    </Paper>
  );
}

function Outcome({ error, success }: { error: unknown; success?: string | false }) {
  if (error)
    return (
      <Text c="red.9" size="sm" role="alert">
        {errorText(error)}
      </Text>
    );
  if (success)
    return (
      <Text c="#237032" size="sm" role="status">
        {success}
      </Text>
    );
  return null;
}

export default function OperatorOrganizationPage() {
  const { id } = useParams<{ id: string }>();
  const { data: session } = useSession();
  const writable = !readOnly(session);
  const detail = useOrganizationDetail(id);

  const [reason, setReason] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [prices, setPrices] = useState<Record<string, number | string>>({});
  const [rateLimit, setRateLimit] = useState<number | string>('');
  const [name, setName] = useState('');
  const [provider, setProvider] = useState<ProviderForm>({
    environment: 'live',
    provider: 'sandbox',
    fallback: '',
    credentials: '',
    fallbackCredentials: '',
  });
  const [funding, setFunding] = useState({ environment: 'test' as Environment, amountKobo: '' as number | string, reference: '' });
  const [keyForm, setKeyForm] = useState({ environment: 'test' as Environment, name: '' });
  const [issued, setIssued] = useState<IssuedApiKey>();

  // The forms start from each newly loaded detail (React's "adjusting state when a prop changes",
  // done while rendering rather than in an effect that would render twice).
  const [loaded, setLoaded] = useState<Detail>();
  if (detail.data !== undefined && detail.data !== loaded) {
    setLoaded(detail.data);
    const organization = detail.data.organization;
    setScopes(organization.activeScopes);
    setPrices(organization.prices);
    setRateLimit(organization.rateLimitPerMinute ?? '');
    setName(organization.name);
  }

  const {
    approve,
    suspend,
    reinstate,
    setScopes: saveScopes,
    setPrices: savePrices,
    rename,
    setRateLimit: saveRateLimit,
    setProvider: saveProvider,
    fund,
    issueKey: issue,
    revokeKey: revoke,
  } = useOrganizationChanges(id, {
    providerSet: () => setProvider((current) => ({ ...current, credentials: '', fallbackCredentials: '' })),
    funded: () => setFunding((current) => ({ ...current, amountKobo: '', reference: '' })),
    keyIssued: setIssued,
  });

  if (detail.isPending) return <Loading />;
  if (detail.error) return <Failure error={detail.error} />;
  const { organization, wallets, keys } = detail.data;
  const allScopes = [...new Set([...detail.data.scopes, ...organization.activeScopes, ...Object.keys(organization.prices)])];
  const submit = (send: () => void) => (event: FormEvent) => {
    event.preventDefault();
    send();
  };

  return (
    <>
      <PageTitle
        actions={
          <Anchor component={Link} href="/operator">
            All organizations
          </Anchor>
        }
      >
        {organization.name}
      </PageTitle>
      <Group mb="md" gap="xs">
        <OrganizationState organization={organization} />
        <Text size="sm" c="dimmed" ff="monospace">
          {organization.id}
        </Text>
        <Text size="sm" c="dimmed">
          {organization.email} · since {when(organization.createdAt)}
        </Text>
      </Group>
      {!writable ? (
        <Alert color="gray" mb="md">
          Auditor account: you can see everything here and change nothing.
        </Alert>
      ) : null}
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="md">
        <Section title="Standing">
          <Stack gap="sm">
            {organization.suspensionReason ? <Text size="sm">Suspended: {organization.suspensionReason}</Text> : null}
            {organization.liveAccessRequestedAt && !organization.approved ? <Text size="sm">Live access requested {when(organization.liveAccessRequestedAt)}.</Text> : null}
            {writable ? (
              <Group align="end">
                {!organization.approved ? (
                  <Button onClick={() => approve.mutate()} loading={approve.isPending}>
                    Approve
                  </Button>
                ) : null}
                {organization.status === 'suspended' ? (
                  <Button variant="outline" onClick={() => reinstate.mutate()} loading={reinstate.isPending}>
                    Reinstate
                  </Button>
                ) : (
                  <form onSubmit={submit(() => suspend.mutate(reason))}>
                    <Group align="end">
                      <TextInput label="Reason for suspension" required value={reason} onChange={(event) => setReason(event.currentTarget.value)} w={240} />
                      <Button type="submit" color="red.9" variant="outline" loading={suspend.isPending}>
                        Suspend
                      </Button>
                    </Group>
                  </form>
                )}
              </Group>
            ) : null}
            <Outcome error={approve.error ?? suspend.error ?? reinstate.error} />
          </Stack>
        </Section>

        <Section title="Wallets">
          <WalletsTable wallets={wallets} />
          {writable ? (
            <form onSubmit={submit(() => fund.mutate({ environment: funding.environment, funding: { amountKobo: Number(funding.amountKobo), reference: funding.reference } }))}>
              <Group align="end" mt="sm" wrap="wrap">
                <Select
                  label="Fund wallet"
                  data={['test', 'live']}
                  value={funding.environment}
                  onChange={(value) => setFunding((current) => ({ ...current, environment: (value as Environment) ?? 'test' }))}
                  allowDeselect={false}
                  w={100}
                />
                <NumberInput
                  label="Amount (kobo)"
                  description={funding.amountKobo === '' ? ' ' : naira(Number(funding.amountKobo))}
                  min={1}
                  allowDecimal={false}
                  required
                  value={funding.amountKobo}
                  onChange={(value) => setFunding((current) => ({ ...current, amountKobo: value }))}
                  w={160}
                />
                <TextInput
                  label="Funding reference"
                  description="e.g. the invoice number"
                  required
                  value={funding.reference}
                  onChange={textField(setFunding, 'reference')}
                  w={180}
                />
                <Button type="submit" loading={fund.isPending}>
                  Fund
                </Button>
              </Group>
            </form>
          ) : null}
          <Outcome error={fund.error} success={fund.isSuccess && 'Funded.'} />
          <Anchor component={Link} href={`/operator/audit?organization=${organization.id}`} size="sm" mt="xs" display="block">
            Audit these wallets
          </Anchor>
        </Section>

        <TopUpsAndStatements organizationId={organization.id} />

        <Section title="Scopes and prices">
          <form onSubmit={submit(() => saveScopes.mutate(scopes))}>
            <Group align="end">
              <MultiSelect label="Active scopes" data={allScopes} value={scopes} onChange={(values) => setScopes(values as Scope[])} disabled={!writable} w={320} />
              {writable ? (
                <Button type="submit" loading={saveScopes.isPending}>
                  Save scopes
                </Button>
              ) : null}
            </Group>
          </form>
          <Outcome error={saveScopes.error} success={saveScopes.isSuccess && 'Saved.'} />
          <form onSubmit={submit(() => savePrices.mutate(pricesOf(prices)))}>
            <Table mt="sm" aria-label="Prices">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Scope</Table.Th>
                  <Table.Th>Price (kobo)</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {allScopes.map((scope) => (
                  <Table.Tr key={scope}>
                    <Table.Td>{scope}</Table.Td>
                    <Table.Td>
                      <NumberInput
                        aria-label={`Price of ${scope} in kobo`}
                        size="xs"
                        min={0}
                        allowDecimal={false}
                        disabled={!writable}
                        value={prices[scope] ?? ''}
                        onChange={(value) => setPrices((current) => ({ ...current, [scope]: value }))}
                        w={140}
                      />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            {writable ? (
              <Button type="submit" mt="sm" loading={savePrices.isPending}>
                Save prices
              </Button>
            ) : null}
          </form>
          <Outcome error={savePrices.error} success={savePrices.isSuccess && 'Saved.'} />
        </Section>

        <Stack>
          <Section title="Provider">
            {organization.providers ? (
              <Text size="sm" mb="sm">
                Test: {organization.providers.test?.provider ?? '—'} · Live: {organization.providers.live?.provider ?? '—'}
                {organization.providers.live?.fallback ? ` (fallback ${organization.providers.live.fallback})` : ''}
              </Text>
            ) : null}
            {writable ? (
              <form onSubmit={submit(() => saveProvider.mutate(provider))}>
                <Stack gap="xs">
                  <Group>
                    <Select
                      label="Environment"
                      data={['test', 'live']}
                      value={provider.environment}
                      onChange={(value) => setProvider((current) => ({ ...current, environment: value ?? 'live' }))}
                      allowDeselect={false}
                      w={110}
                    />
                    <Select
                      label="Provider"
                      data={PROVIDERS}
                      value={provider.provider}
                      onChange={(value) => setProvider((current) => ({ ...current, provider: value ?? 'sandbox' }))}
                      allowDeselect={false}
                      w={130}
                    />
                    <Select
                      label="Fallback"
                      data={FALLBACK_PROVIDERS}
                      clearable
                      value={provider.fallback || null}
                      onChange={(value) => setProvider((current) => ({ ...current, fallback: value ?? '' }))}
                      w={130}
                    />
                  </Group>
                  <Textarea
                    label="Credentials (JSON)"
                    description="Kept encrypted; never shown again"
                    autosize
                    minRows={2}
                    value={provider.credentials}
                    onChange={textField(setProvider, 'credentials')}
                  />
                  {provider.fallback !== '' ? (
                    <Textarea
                      label="Fallback credentials (JSON)"
                      description="The fallback's own; kept encrypted, never shown again"
                      autosize
                      minRows={2}
                      value={provider.fallbackCredentials}
                      onChange={textField(setProvider, 'fallbackCredentials')}
                    />
                  ) : null}
                  <Button type="submit" loading={saveProvider.isPending} w="fit-content">
                    Set provider
                  </Button>
                </Stack>
              </form>
            ) : null}
            <Outcome error={saveProvider.error} success={saveProvider.isSuccess && 'Saved.'} />
          </Section>
          <Section title="Rate limit">
            <form onSubmit={submit(() => saveRateLimit.mutate(rateLimit === '' ? null : Number(rateLimit)))}>
              <Group align="end">
                <NumberInput
                  label="Requests per minute per key"
                  description="Empty: the service's default"
                  min={1}
                  allowDecimal={false}
                  disabled={!writable}
                  value={rateLimit}
                  onChange={setRateLimit}
                  w={220}
                />
                {writable ? (
                  <Button type="submit" loading={saveRateLimit.isPending}>
                    Save
                  </Button>
                ) : null}
              </Group>
            </form>
            <Outcome error={saveRateLimit.error} success={saveRateLimit.isSuccess && 'Saved.'} />
          </Section>
          <Section title="Name">
            <form onSubmit={submit(() => rename.mutate(name))}>
              <Group align="end">
                <TextInput label="Organization name" required maxLength={200} disabled={!writable} value={name} onChange={(event) => setName(event.currentTarget.value)} w={320} />
                {writable ? (
                  <Button type="submit" loading={rename.isPending}>
                    Rename
                  </Button>
                ) : null}
              </Group>
            </form>
            <Outcome error={rename.error} success={rename.isSuccess && 'Renamed.'} />
          </Section>
        </Stack>
      </SimpleGrid>

      <Paper withBorder p="md" mt="md">
        <Title order={2} size="h4" mb="sm">
          API keys
        </Title>
        {writable ? (
          <form onSubmit={submit(() => issue.mutate({ environment: keyForm.environment, name: keyForm.name.trim() === '' ? undefined : keyForm.name.trim() }))}>
            <Group align="end" mb="sm">
              <Select
                label="Environment"
                data={['test', 'live']}
                value={keyForm.environment}
                onChange={(value) => setKeyForm((current) => ({ ...current, environment: (value as Environment) ?? 'test' }))}
                allowDeselect={false}
                w={110}
              />
              <TextInput label="Name" value={keyForm.name} onChange={textField(setKeyForm, 'name')} w={220} />
              <Button type="submit" loading={issue.isPending}>
                Issue key
              </Button>
            </Group>
          </form>
        ) : null}
        <Outcome error={issue.error ?? revoke.error} />
        <Scroll minWidth={640}>
          <Table striped aria-label="Keys of the organization">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>Environment</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>Action</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {keys.map((key) => (
                <Table.Tr key={key.id}>
                  <Table.Td>{key.name ?? 'unnamed'}</Table.Td>
                  <Table.Td ff="monospace" fz="sm">
                    {key.prefix}…{key.last4}
                  </Table.Td>
                  <Table.Td>{key.environment}</Table.Td>
                  <Table.Td>{key.lastUsedAt ? when(key.lastUsedAt) : 'never'}</Table.Td>
                  <Table.Td>
                    {key.revokedAt ? (
                      <Badge color="gray.8">revoked</Badge>
                    ) : writable ? (
                      <Button size="xs" color="red.9" variant="outline" onClick={() => revoke.mutate(key.id)} aria-label={`Revoke ${key.prefix}…${key.last4}`}>
                        Revoke
                      </Button>
                    ) : (
                      'active'
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Scroll>
      </Paper>
      {detail.data.members && detail.data.members.length > 0 ? (
        <Paper withBorder p="md" mt="md">
          <Title order={2} size="h4" mb="sm">
            Console users
          </Title>
          <Table aria-label="Console users of the organization">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Email</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th>Email verified</Table.Th>
                <Table.Th>Since</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {detail.data.members.map((member) => (
                <Table.Tr key={member.id}>
                  <Table.Td>{member.email}</Table.Td>
                  <Table.Td>{member.role}</Table.Td>
                  <Table.Td>{member.emailVerified ? 'yes' : 'no'}</Table.Td>
                  <Table.Td>{when(member.createdAt)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Paper>
      ) : null}
      <Modal opened={issued !== undefined} onClose={() => setIssued(undefined)} title="The new key" size="lg">
        {issued ? (
          <Stack>
            <Alert color="yellow">Shown this once: hand it to the organization now.</Alert>
            <CodeBlock label="The new key">{issued.key}</CodeBlock>
            <CopyButton value={issued.key} label="Copy the key" />
          </Stack>
        ) : null}
      </Modal>
    </>
  );
}

/** The prices form's filled fields, as numbers. */
function pricesOf(prices: Record<string, number | string>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(prices)
      .filter(([, value]) => value !== '')
      .map(([scope, value]) => [scope, Number(value)]),
  );
}

/** This month in Lagos (UTC+1), as YYYY-MM. */
function thisMonth(): string {
  return new Date(Date.now() + 3_600_000).toISOString().slice(0, 7);
}

/** One wallet's top-ups with their receipts, and its month's statement: what its finance members download, for any operator (auditors too). */
function TopUpsAndStatements({ organizationId }: { organizationId: string }) {
  const [environment, setEnvironment] = useState<Environment>('live');
  const [month, setMonth] = useState(thisMonth);
  const topUps = useOrganizationTopUps(organizationId, environment);
  const base = `/console/api/operator/organizations/${encodeURIComponent(organizationId)}`;
  return (
    <Section title="Top-ups and statements">
      <Group align="end" wrap="wrap" mb="sm">
        <Select label="Wallet shown" data={['live', 'test']} value={environment} onChange={(value) => setEnvironment(value ?? 'live')} allowDeselect={false} w={120} />
        <TextInput label="Statement month" type="month" value={month} onChange={(event) => setMonth(event.currentTarget.value)} w={200} />
        <Button component="a" variant="outline" href={`${base}/wallets/${environment}/statement?month=${encodeURIComponent(month)}`} download>
          Download statement (PDF)
        </Button>
      </Group>
      <Failure error={topUps.error} />
      {topUps.data === undefined ? null : topUps.data.rows.length === 0 ? (
        <Text size="sm" c="dimmed">
          No top-ups of the {environment} wallet.
        </Text>
      ) : (
        <Scroll minWidth={560}>
          <Table striped aria-label="Top-ups">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Reference</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th ta="right">Credited</Table.Th>
                <Table.Th>Receipt</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {topUps.data.rows.map((row) => (
                <Table.Tr key={row.reference}>
                  <Table.Td>{when(row.createdAt)}</Table.Td>
                  <Table.Td ff="monospace">{row.reference}</Table.Td>
                  <Table.Td>{row.status}</Table.Td>
                  <Table.Td ta="right">{row.creditedKobo === null ? '—' : naira(row.creditedKobo)}</Table.Td>
                  <Table.Td>
                    {row.status === 'credited' ? (
                      <Anchor href={`${base}/topups/${encodeURIComponent(row.reference)}/receipt.pdf`} download aria-label={`Receipt of ${row.reference}`}>
                        PDF
                      </Anchor>
                    ) : (
                      '—'
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Scroll>
      )}
    </Section>
  );
}
