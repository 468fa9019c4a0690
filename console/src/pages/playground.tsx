import { Alert, Anchor, Button, Grid, Group, Input, Paper, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { CodeBlock } from '../components/code';
import { useId, useMemo, useState, type ChangeEvent, type Dispatch, type FormEvent, type SetStateAction } from 'react';
import { Link } from 'wouter';
import { errorText, naira } from '../api';
import { CopyButton } from '../components/copy';
import { Failure, Loading, PageTitle, textField } from '../components/common';
import { StatusBadge } from '../components/status';
import { useEnvironment } from '../session';
import { useRunPlaygroundCheck, useScopes } from '../features/checks/api';
import { useKeys } from '../features/keys/api';
import type { ApiKey, ScopeField } from '../types';

/** Longest input value the curl command shows whole; a file's content is shown by its start. */
const MAX_SHOWN_VALUE = 120;

function curlOf(origin: string, scope: string, input: Record<string, string>, key: ApiKey | undefined, environment: string, shorten = false): string {
  const keyText = key ? `${key.prefix}…${key.last4}` : `service_${environment}_…`;
  const shown = shorten
    ? Object.fromEntries(
        Object.entries(input).map(([name, value]) => [name, value.length > MAX_SHOWN_VALUE ? `${value.slice(0, 60)}… (${value.length.toLocaleString('en')} characters)` : value]),
      )
    : input;
  return [`curl -s -X POST ${origin}/v1/${scope} \\`, `  -H 'X-Service-Key: ${keyText}' \\`, `  -H 'Content-Type: application/json' \\`, `  -d '${JSON.stringify(shown)}'`].join(
    '\n',
  );
}

/** A file's content as a data URL (`data:image/png;base64,…`), a form the API takes as it is. */
function dataUrlOf(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => (typeof reader.result === 'string' ? resolve(reader.result) : reject(new Error('unreadable')));
    reader.onerror = () => reject(reader.error ?? new Error('unreadable'));
    reader.readAsDataURL(file);
  });
}

/** An input that is a file's content (face_match's image): a file picker; without a file, the example is sent. */
function FileField({ field, mediaTypes, onChange }: { field: ScopeField; mediaTypes: string[]; onChange: (value: string) => void }) {
  const id = useId();
  const [error, setError] = useState<string | null>(null);
  const choose = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.currentTarget.files?.[0];
    setError(null);
    if (file === undefined) {
      onChange(field.example);
      return;
    }
    try {
      onChange(await dataUrlOf(file));
    } catch {
      setError(`${file.name} could not be read`);
      onChange(field.example);
    }
  };
  return (
    <Input.Wrapper
      label={field.name}
      labelProps={{ htmlFor: id }}
      description={`${field.description}. Without a file, the sandbox's example image is sent.`}
      required={field.required}
      error={error}
    >
      <input id={id} type="file" accept={mediaTypes.join(',')} onChange={(event) => void choose(event)} style={{ display: 'block', marginTop: 4 }} />
    </Input.Wrapper>
  );
}

export default function PlaygroundPage() {
  const { environment } = useEnvironment();
  const scopes = useScopes();
  const keys = useKeys();
  const [picked, setScope] = useState<string | null>(null);
  // What the user typed, for the scope it was typed for: another scope starts from its own example.
  const [edited, setEdited] = useState<{ scope: string; values: Record<string, string> } | null>(null);
  const [keyId, setKeyId] = useState<string | null>(null);

  const active = useMemo(() => (scopes.data ?? []).filter((item) => item.active), [scopes.data]);
  const scope = picked ?? active[0]?.scope ?? null;
  const chosen = active.find((item) => item.scope === scope);
  const input = edited !== null && edited.scope === scope ? edited.values : { ...(chosen?.example ?? {}) };
  const setInput: Dispatch<SetStateAction<Record<string, string>>> = (update) => {
    if (scope !== null) setEdited({ scope, values: typeof update === 'function' ? update(input) : update });
  };
  const usableKeys = (keys.data ?? []).filter((key) => key.environment === environment && !key.revokedAt);
  const key = usableKeys.find((item) => item.id === keyId) ?? usableKeys[0];

  const run = useRunPlaygroundCheck();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    run.mutate({ scope: String(scope), environment, keyId: key?.id, input: Object.fromEntries(Object.entries(input).filter(([, value]) => value !== '')) });
  };

  if (scopes.isPending) return <Loading />;
  if (scopes.error) return <Failure error={scopes.error} />;
  const result = run.data;

  return (
    <>
      <PageTitle>Playground</PageTitle>
      <Text mb="md" c="dimmed">
        Run a check from a form. With the test environment it runs on the sandbox and is charged to the test wallet only.
      </Text>
      <Grid>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Paper withBorder p="md">
            <form onSubmit={submit}>
              <Stack>
                <Select
                  label="Scope"
                  data={active.map((item) => ({ value: item.scope, label: `${item.scope} · ${naira(item.priceKobo)}` }))}
                  value={scope}
                  onChange={(value) => {
                    setScope(value);
                    run.reset();
                  }}
                  allowDeselect={false}
                />
                {usableKeys.length > 1 ? (
                  <Select
                    label="Key"
                    data={usableKeys.map((item) => ({ value: item.id, label: `${item.name ?? 'unnamed'} (${item.prefix}…${item.last4})` }))}
                    value={key?.id ?? null}
                    onChange={setKeyId}
                    allowDeselect={false}
                  />
                ) : null}
                {chosen?.fields.map((field) =>
                  field.mediaTypes ? (
                    <FileField
                      key={`${chosen.scope}.${field.name}`}
                      field={field}
                      mediaTypes={field.mediaTypes}
                      onChange={(value) => setInput((current) => ({ ...current, [field.name]: value }))}
                    />
                  ) : (
                    <TextInput
                      key={`${chosen.scope}.${field.name}`}
                      label={field.name}
                      description={field.description}
                      required={field.required}
                      placeholder={field.example}
                      value={input[field.name] ?? ''}
                      onChange={textField(setInput, field.name)}
                    />
                  ),
                )}
                {usableKeys.length === 0 && !keys.isPending ? (
                  <Alert color="yellow">
                    No active {environment} key:{' '}
                    <Anchor component={Link} href="/keys">
                      create one
                    </Anchor>{' '}
                    to run checks.
                  </Alert>
                ) : null}
                <Group>
                  <Button type="submit" loading={run.isPending} disabled={!chosen}>
                    Run check
                  </Button>
                </Group>
              </Stack>
            </form>
          </Paper>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Stack>
            <Paper withBorder p="md">
              <Group justify="space-between" mb="xs">
                <Title order={2} size="h4">
                  The same with curl
                </Title>
                <CopyButton value={curlOf(window.location.origin, scope ?? '', input, key, environment)} label="Copy the curl command" />
              </Group>
              <CodeBlock label="The curl command">{curlOf(window.location.origin, scope ?? '', input, key, environment, true)}</CodeBlock>
              <Text size="xs" c="dimmed" mt="xs">
                The key is shown by its prefix and last characters only: put your whole key in its place.
                {Object.values(input).some((value) => value.length > MAX_SHOWN_VALUE) ? ' A long value (a file) is shown by its start; the copied command holds all of it.' : ''}
              </Text>
            </Paper>
            {run.error ? (
              <Alert color="red" role="alert" title="The check was refused">
                {errorText(run.error)}
              </Alert>
            ) : null}
            {result ? (
              <Paper withBorder p="md" aria-live="polite">
                <Group justify="space-between" mb="xs">
                  <Title order={2} size="h4">
                    Result
                  </Title>
                  <StatusBadge status={result.status} />
                </Group>
                <Text size="sm">
                  Reference{' '}
                  <Anchor component={Link} href={`/verifications/${result.reference}?environment=${environment}`} data-testid="result-reference">
                    {result.reference}
                  </Anchor>{' '}
                  · {naira(result.priceKobo)} {result.charged ? 'charged' : 'not charged'}
                </Text>
                <CodeBlock label="The result">{JSON.stringify(result.result, null, 2)}</CodeBlock>
              </Paper>
            ) : null}
          </Stack>
        </Grid.Col>
      </Grid>
    </>
  );
}
