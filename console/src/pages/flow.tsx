import { Anchor, Button, Checkbox, ColorInput, Group, NumberInput, Paper, SimpleGrid, Stack, Switch, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useState } from 'react';
import { Link, useLocation, useParams } from 'wouter';
import { ApiError, errorText } from '../api';
import { Failure, Loading, PageTitle, textField } from '../components/common';
import { CopyButton } from '../components/copy';
import { when } from '../dates';
import { useCreateFlowLink, useFlow, useFlowLinks, useSaveFlow, type Flow, type FlowInput } from '../features/flows/api';
import { useEnvironment } from '../session';
import type { Schemas } from '../types';

type Kind = NonNullable<FlowInput['steps'][number]['kinds']>[number];
/** The numbers a person may give and the documents they may photograph, as the server's schemas name them. */
type IdentityKind = NonNullable<Schemas['VerificationSessionReview']['identityKind']>;
type DocumentKind = Schemas['VerificationSession']['documents'][number]['document'];
/** The form's label of each; a kind the server adds fails to compile here until it is labelled. */
const IDENTITY_LABELS: Record<IdentityKind, string> = {
  nin: 'NIN',
  vnin: 'Virtual NIN',
  bvn: 'BVN',
  pvc: "Voter's card (VIN)",
  passport: 'Passport',
  phone: 'Phone number',
};
const DOCUMENT_LABELS: Record<DocumentKind, string> = {
  passport: "Passport's data page",
  voters_card: "Voter's card",
  drivers_licence: "Driver's licence, front and back",
};
const choices = <K extends Kind>(labels: Record<K, string>) => (Object.entries(labels) as [K, string][]).map(([value, label]) => ({ value, label }));
const IDENTITY_KINDS = choices(IDENTITY_LABELS);
const DOCUMENT_KINDS = choices(DOCUMENT_LABELS);
/** The steps after the identity number, in the flow's own order. */
type Later = 'selfie' | 'documents';

interface Form {
  name: string;
  kinds: string[];
  selfie: boolean;
  liveness: boolean;
  documents: string[];
  later: Later[];
  threshold: number | string;
  margin: number | string;
  displayName: string;
  logoUrl: string;
  colour: string;
  origins: string;
  redirectUrl: string;
  lifetime: number | string;
}

const EMPTY: Form = {
  name: '',
  kinds: ['nin', 'bvn'],
  selfie: true,
  liveness: true,
  documents: [],
  later: ['selfie', 'documents'],
  threshold: 80,
  margin: 10,
  displayName: '',
  logoUrl: '',
  colour: '#1c7ed6',
  origins: '',
  redirectUrl: '',
  lifetime: 1800,
};

function formOf(flow: Flow): Form {
  const identity = flow.steps.find((step) => step.type === 'identity_number');
  return {
    name: flow.name,
    kinds: [...(identity?.kinds ?? [])],
    selfie: flow.steps.some((step) => step.type === 'selfie'),
    liveness: flow.decision?.liveness === 'required',
    documents: [...(flow.steps.find((step) => step.type === 'documents')?.kinds ?? [])],
    // A flow read back keeps its order of selfie and documents when the next version is published.
    later: [...flow.steps.map((step) => step.type).filter((type): type is Later => type === 'selfie' || type === 'documents'), ...(['selfie', 'documents'] as const)].filter(
      (type, index, all) => all.indexOf(type) === index,
    ),
    threshold: flow.decision?.faceMatchThreshold ?? 80,
    margin: flow.decision?.reviewMarginPoints ?? 10,
    displayName: flow.branding?.displayName ?? '',
    logoUrl: flow.branding?.logoUrl ?? '',
    colour: flow.branding?.colour ?? '#1c7ed6',
    origins: (flow.allowedOrigins ?? []).join('\n'),
    redirectUrl: flow.redirectUrl ?? '',
    lifetime: flow.sessionLifetimeSeconds ?? 1800,
  };
}

/** The request the API takes: consent, the identity number, then the selfie and the documents in the flow's order; the server checks the rest. */
function inputOf(form: Form): FlowInput {
  const steps: FlowInput['steps'] = [{ type: 'consent' }, { type: 'identity_number', kinds: form.kinds as Kind[] }];
  for (const step of form.later) {
    if (step === 'selfie' && form.selfie) steps.push({ type: 'selfie' });
    if (step === 'documents' && form.documents.length > 0) steps.push({ type: 'documents', kinds: form.documents as Kind[] });
  }
  const number = (value: number | string) => (typeof value === 'number' ? value : value.trim() === '' ? undefined : Number(value));
  return {
    name: form.name,
    steps,
    // Liveness is a rule of the selfie: a flow without one has it off.
    decision: { faceMatchThreshold: number(form.threshold), reviewMarginPoints: number(form.margin), liveness: form.selfie && form.liveness ? 'required' : 'off' },
    branding: { displayName: form.displayName.trim() === '' ? form.name : form.displayName, colour: form.colour, logoUrl: form.logoUrl.trim() === '' ? null : form.logoUrl.trim() },
    allowedOrigins: form.origins
      .split(/\s+/)
      .map((origin) => origin.trim())
      .filter((origin) => origin !== ''),
    redirectUrl: form.redirectUrl.trim() === '' ? null : form.redirectUrl.trim(),
    sessionLifetimeSeconds: number(form.lifetime),
  };
}

/** The server's field errors (`details.fields`) of the fields named `prefix` or under it, as one text beside that field. */
function fieldErrors(error: unknown): (...prefixes: string[]) => string | undefined {
  const fields = error instanceof ApiError ? ((error.details as { fields?: { field: string; message: string }[] } | undefined)?.fields ?? []) : [];
  return (...prefixes) => {
    const messages = fields.filter((field) => prefixes.some((prefix) => field.field === prefix || field.field.startsWith(`${prefix}.`) || field.field.startsWith(`${prefix}[`)));
    return messages.length === 0 ? undefined : messages.map((field) => `${field.field} ${field.message}`).join('; ');
  };
}

function Links({ flowId }: { flowId: string }) {
  const { environment } = useEnvironment();
  const links = useFlowLinks(environment, flowId);
  const create = useCreateFlowLink(environment, flowId);
  return (
    <Paper withBorder p="md" mt="md">
      <Group justify="space-between" mb="sm">
        <Title order={2} size="h4">
          Reusable links
        </Title>
        <Button variant="outline" loading={create.isPending} onClick={() => create.mutate()}>
          Create a link
        </Button>
      </Group>
      <Text size="sm" c="dimmed" mb="sm">
        Each visit starts a session of the flow&apos;s newest version, its checks run on your newest active {environment} key.
      </Text>
      <Failure error={create.error ?? links.error} />
      {links.data && links.data.length > 0 ? (
        <Table aria-label="Reusable links">
          <Table.Tbody>
            {links.data.map((link) => (
              <Table.Tr key={link.id}>
                <Table.Td style={{ wordBreak: 'break-all' }}>
                  <Text ff="monospace" size="sm" data-testid="flow-link">
                    {link.url}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {when(link.createdAt)}
                  </Text>
                </Table.Td>
                <Table.Td w={90}>
                  <CopyButton value={link.url} label={`Copy the link ${link.id}`} />
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : links.data ? (
        <Text c="dimmed">No links yet.</Text>
      ) : null}
    </Paper>
  );
}

/** A new flow (`/flows/new`) or a flow's next version (`/flows/:id`), with its reusable links. */
export default function FlowPage() {
  const params = useParams<{ id: string }>();
  const id = params.id === 'new' ? undefined : params.id;
  const { environment } = useEnvironment();
  const flow = useFlow(environment, id);
  if (id !== undefined && flow.isPending) return <Loading />;
  if (id !== undefined && flow.error) return <Failure error={flow.error} />;
  // A new version read back starts the form again from what the server now holds.
  return <FlowEditor key={`${id ?? 'new'}-${flow.data?.version ?? 0}`} id={id} flow={flow.data} />;
}

function FlowEditor({ id, flow }: { id: string | undefined; flow: Flow | undefined }) {
  const { environment } = useEnvironment();
  const [, navigate] = useLocation();
  const save = useSaveFlow(environment, id);
  const [form, setForm] = useState<Form>(() => (flow ? formOf(flow) : EMPTY));
  const errorOf = fieldErrors(save.error);
  const unplaced = save.error instanceof ApiError && save.error.code === 'validation_failed' ? null : save.error;

  return (
    <>
      <PageTitle
        actions={
          <Anchor component={Link} href="/flows">
            Back to the flows
          </Anchor>
        }
      >
        {flow ? `${flow.name} (version ${flow.version})` : 'New flow'}
      </PageTitle>
      <form
        aria-label={id === undefined ? 'New flow' : 'Next version'}
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate(inputOf(form), { onSuccess: (saved) => (id === undefined ? navigate(`/flows/${saved.id}`) : undefined) });
        }}
      >
        <Stack>
          <Paper withBorder p="md">
            <Title order={2} size="h4" mb="sm">
              Steps
            </Title>
            <Stack gap="sm">
              <TextInput label="Name" required value={form.name} onChange={textField(setForm, 'name')} error={errorOf('name')} maxLength={100} />
              <Checkbox label="Consent: the person agrees first" checked disabled readOnly />
              <Checkbox.Group
                label="Identity number: the kinds the person may use"
                value={form.kinds}
                onChange={(kinds) => setForm((current) => ({ ...current, kinds }))}
                error={errorOf('steps')}
              >
                <Group mt="xs">
                  {IDENTITY_KINDS.map((kind) => (
                    <Checkbox key={kind.value} value={kind.value} label={kind.label} />
                  ))}
                </Group>
              </Checkbox.Group>
              <Switch
                label="Selfie, matched with the record's portrait"
                checked={form.selfie}
                onChange={(event) => setForm((current) => ({ ...current, selfie: event.currentTarget.checked }))}
              />
              <Switch
                label="Liveness: without a head turn or a blink seen by the server, the session goes to review"
                checked={form.selfie && form.liveness}
                disabled={!form.selfie}
                onChange={(event) => setForm((current) => ({ ...current, liveness: event.currentTarget.checked }))}
                error={errorOf('decision.liveness')}
              />
              <Checkbox.Group
                label="Documents the person may photograph (none: no documents step)"
                value={form.documents}
                onChange={(documents) => setForm((current) => ({ ...current, documents }))}
              >
                <Group mt="xs">
                  {DOCUMENT_KINDS.map((kind) => (
                    <Checkbox key={kind.value} value={kind.value} label={kind.label} />
                  ))}
                </Group>
              </Checkbox.Group>
            </Stack>
          </Paper>
          <Paper withBorder p="md">
            <Title order={2} size="h4" mb="sm">
              Decision
            </Title>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <NumberInput
                label="Face match threshold"
                description="At or above it, approved"
                value={form.threshold}
                onChange={(threshold) => setForm((current) => ({ ...current, threshold }))}
                error={errorOf('decision.faceMatchThreshold')}
                decimalScale={1}
              />
              <NumberInput
                label="Review margin (points)"
                description="This far below the threshold, to review"
                value={form.margin}
                onChange={(margin) => setForm((current) => ({ ...current, margin }))}
                error={errorOf('decision.reviewMarginPoints')}
                decimalScale={1}
              />
            </SimpleGrid>
          </Paper>
          <Paper withBorder p="md">
            <Title order={2} size="h4" mb="sm">
              Page
            </Title>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput
                label="Display name"
                description="The flow's name when empty"
                value={form.displayName}
                onChange={textField(setForm, 'displayName')}
                error={errorOf('branding.displayName')}
              />
              <ColorInput
                label="Colour"
                format="hex"
                withEyeDropper={false}
                value={form.colour}
                onChange={(colour) => setForm((current) => ({ ...current, colour }))}
                error={errorOf('branding.colour')}
              />
              <TextInput label="Logo URL" placeholder="https://" value={form.logoUrl} onChange={textField(setForm, 'logoUrl')} error={errorOf('branding.logoUrl')} />
              <TextInput
                label="Redirect URL"
                description="Where the person goes when done"
                placeholder="https://"
                value={form.redirectUrl}
                onChange={textField(setForm, 'redirectUrl')}
                error={errorOf('redirectUrl')}
              />
              <Textarea
                label="Allowed origins"
                description="Sites that may frame the page, one per line"
                autosize
                minRows={2}
                value={form.origins}
                onChange={textField(setForm, 'origins')}
                error={errorOf('allowedOrigins')}
              />
              <NumberInput
                label="Session lifetime (seconds)"
                description="300 to 86,400"
                value={form.lifetime}
                onChange={(lifetime) => setForm((current) => ({ ...current, lifetime }))}
                error={errorOf('sessionLifetimeSeconds')}
                allowDecimal={false}
              />
            </SimpleGrid>
          </Paper>
          {save.error ? (
            <Text c="red.9" size="sm" role="alert">
              {unplaced ? errorText(unplaced) : 'The flow was not saved: see the fields marked.'}
            </Text>
          ) : null}
          <Group>
            <Button type="submit" loading={save.isPending}>
              {flow ? `Publish version ${flow.version + 1}` : 'Create the flow'}
            </Button>
          </Group>
        </Stack>
      </form>
      {id !== undefined ? <Links flowId={id} /> : null}
    </>
  );
}
