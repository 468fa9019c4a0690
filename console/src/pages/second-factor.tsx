import { Alert, Anchor, Badge, Button, Group, Paper, PasswordInput, SimpleGrid, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { renderSVG } from 'uqr';
import { useLocation } from 'wouter';
import { errorText } from '../api';
import { when } from '../dates';
import { CodeBlock } from '../components/code';
import { Failure } from '../components/common';
import { SignedOutCard } from '../components/signed-out-card';
import { sessionRequests } from '../features/account/api';
import {
  usePasskeyChanges,
  usePasskeys,
  useSecondFactorStatus,
  useSecondFactorStep,
  useSetSecondFactorRequirement,
  useTotpChanges,
  type SecondFactorStatus as Status,
} from '../features/second-factor/api';
import { useForgetSession, useRefreshSession, useSession, useSetSession, type Session } from '../session';

const QR_CODE_PX = 200;
const qrCodeOf = (otpauthUrl: string): string => `data:image/svg+xml;charset=utf-8,${encodeURIComponent(renderSVG(otpauthUrl, { border: 2 }))}`;

/** The codes shown once, after the app is set up or the codes are renewed. */
function BackupCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <Alert color="yellow" title="Your backup codes" role="status">
      <Text size="sm" mb="xs">
        Each works once, when your authenticator app is not at hand. They are shown only now: keep them somewhere safe.
      </Text>
      <SimpleGrid cols={{ base: 1, xs: 2 }} spacing={4} data-testid="backup-codes">
        {codes.map((code) => (
          <Text key={code} ff="monospace" size="sm">
            {code}
          </Text>
        ))}
      </SimpleGrid>
      <Button mt="sm" size="xs" onClick={onDone}>
        I have saved them
      </Button>
    </Alert>
  );
}

function TotpPanel({ status, onChange }: { status: Status; onChange: () => Promise<void> }) {
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const { setup, confirm, disable, renew } = useTotpChanges({
    codesShown: (shown) => {
      setCode('');
      setCodes(shown);
    },
    turnedOff: async () => {
      setCode('');
      await onChange();
    },
  });
  const done = async () => {
    setCodes(null);
    setup.reset();
    await onChange();
  };
  const codeInput = (
    <TextInput
      label="Code from the app"
      inputMode="numeric"
      autoComplete="one-time-code"
      maxLength={6}
      required
      value={code}
      onChange={(event) => setCode(event.currentTarget.value.trim())}
      w={200}
    />
  );
  const error = setup.error ?? confirm.error ?? disable.error ?? renew.error;
  return (
    <Paper withBorder p="md" mb="md">
      <Title order={2} size="h4" mb="sm">
        Authenticator app {status.totp && codes === null ? <Badge color="#237032">on</Badge> : null}
      </Title>
      {error ? (
        <Text c="red.9" size="sm" role="alert">
          {errorText(error)}
        </Text>
      ) : null}
      {codes !== null ? (
        <BackupCodes codes={codes} onDone={() => void done()} />
      ) : status.totp ? (
        <form
          onSubmit={(event: FormEvent) => {
            event.preventDefault();
          }}
        >
          <Text size="sm" mb="xs">
            {status.backupCodesLeft} backup codes left. A current code of the app turns it off or gives new backup codes.
          </Text>
          <Group align="end">
            {codeInput}
            <Button variant="outline" onClick={() => renew.mutate(code)} loading={renew.isPending}>
              New backup codes
            </Button>
            <Button variant="outline" color="red.9" onClick={() => disable.mutate(code)} loading={disable.isPending}>
              Turn off
            </Button>
          </Group>
        </form>
      ) : setup.data ? (
        <form
          onSubmit={(event: FormEvent) => {
            event.preventDefault();
            confirm.mutate(code);
          }}
        >
          <Stack>
            <Text size="sm">Scan the code with an authenticator app, or enter the secret by hand, then type the code it shows.</Text>
            <img src={qrCodeOf(setup.data.otpauthUrl)} alt="QR code of the secret, for an authenticator app" width={QR_CODE_PX} height={QR_CODE_PX} data-testid="totp-qr" />
            <CodeBlock label="TOTP secret" testId="totp-secret">
              {setup.data.secret}
            </CodeBlock>
            {codeInput}
            <Button type="submit" loading={confirm.isPending} w="fit-content">
              Turn on
            </Button>
          </Stack>
        </form>
      ) : (
        <Button onClick={() => setup.mutate()} loading={setup.isPending}>
          Set up an authenticator app
        </Button>
      )}
    </Paper>
  );
}

function PasskeysPanel({ onChange }: { onChange: () => Promise<void> }) {
  const passkeys = usePasskeys();
  const [name, setName] = useState('');
  const [names, setNames] = useState<Record<string, string>>({});
  const { add, rename, remove } = usePasskeyChanges({ added: () => setName(''), changed: onChange });
  return (
    <Paper withBorder p="md" mb="md">
      <Title order={2} size="h4" mb="sm">
        Passkeys
      </Title>
      <Failure error={passkeys.error ?? rename.error ?? remove.error} />
      <Stack gap="sm" mb="md">
        {(passkeys.data ?? []).map((row) => (
          <Group key={row.id} align="end" data-testid="passkey-row" wrap="wrap">
            <TextInput label="Name" value={names[row.id] ?? row.name} onChange={(event) => setNames({ ...names, [row.id]: event.currentTarget.value })} w={200} />
            <Text size="xs" c="dimmed">
              added {when(row.createdAt)}
              {row.lastUsedAt ? `, last used ${when(row.lastUsedAt)}` : ''}
            </Text>
            <Button size="xs" variant="outline" onClick={() => rename.mutate({ id: row.id, name: names[row.id] ?? row.name })}>
              Rename
            </Button>
            <Button size="xs" variant="outline" color="red.9" onClick={() => remove.mutate(row.id)}>
              Remove
            </Button>
          </Group>
        ))}
      </Stack>
      <form
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          add.mutate(name.trim() || 'Passkey');
        }}
      >
        <Group align="end">
          <TextInput label="New passkey's name" placeholder="e.g. Work laptop" value={name} onChange={(event) => setName(event.currentTarget.value)} maxLength={60} w={200} />
          <Button type="submit" loading={add.isPending}>
            Add a passkey
          </Button>
        </Group>
        {add.error ? (
          <Text c="red.9" size="sm" role="alert">
            {errorText(add.error)}
          </Text>
        ) : null}
      </form>
    </Paper>
  );
}

/** The user's second factors: the authenticator app (with backup codes) and passkeys. */
export function SecondFactorPanel() {
  const refreshSession = useRefreshSession();
  const status = useSecondFactorStatus();
  if (status.error) return <Failure error={status.error} />;
  if (status.data === undefined) return null;
  const changed = async () => {
    await status.refetch();
    await refreshSession();
  };
  return (
    <>
      <TotpPanel status={status.data} onChange={changed} />
      <PasskeysPanel onChange={changed} />
    </>
  );
}

/** The owner's switch: every member needs a second factor to reach anything. */
export function RequirementPanel() {
  const status = useSecondFactorStatus();
  const change = useSetSecondFactorRequirement();
  return (
    <Paper withBorder p="md" mb="md">
      <Title order={2} size="h4" mb="sm">
        Organization
      </Title>
      <Switch
        label="Require a second factor of every member"
        description="Members without one can only set one up. They can read personal data: NINs, BVNs, addresses and portraits."
        checked={status.data?.required ?? false}
        disabled={status.data === undefined || change.isPending}
        onChange={(event) => change.mutate(event.currentTarget.checked)}
      />
      {change.error ? (
        <Text c="red.9" size="sm" role="alert">
          {errorText(change.error)}
        </Text>
      ) : null}
    </Paper>
  );
}

/** The sign-in step after the password: a code of the app, a backup code, or a passkey. */
export default function SecondFactorStepPage() {
  const { data: session } = useSession();
  const setSession = useSetSession();
  const forget = useForgetSession();
  const [, navigate] = useLocation();
  const [code, setCode] = useState('');
  const [backup, setBackup] = useState(false);
  const finish = (next: Session) => {
    setSession(next);
    navigate('/');
  };
  const { verify, passkey } = useSecondFactorStep(finish);
  const signOut = async () => {
    await sessionRequests.signOut();
    await forget();
    navigate('/login');
  };
  const error = verify.error ?? passkey.error;
  return (
    <SignedOutCard title="Second factor">
      <Text size="sm">Signed in as {session?.user?.email}. Finish with your second factor.</Text>
      {error ? (
        <Alert color="red" role="alert">
          {errorText(error)}
        </Alert>
      ) : null}
      {session?.user?.hasPasskey === true ? (
        <Button onClick={() => passkey.mutate()} loading={passkey.isPending}>
          Use a passkey
        </Button>
      ) : null}
      {session?.user?.totpEnabled === true ? (
        <form
          onSubmit={(event: FormEvent) => {
            event.preventDefault();
            verify.mutate(backup ? { backupCode: code } : { code });
          }}
        >
          <Stack>
            {backup ? (
              <PasswordInput label="Backup code" autoComplete="off" required value={code} onChange={(event) => setCode(event.currentTarget.value)} />
            ) : (
              <TextInput
                label="Authenticator code"
                inputMode="numeric"
                autoComplete="one-time-code"
                maxLength={6}
                required
                value={code}
                onChange={(event) => setCode(event.currentTarget.value.trim())}
              />
            )}
            <Button type="submit" variant="outline" loading={verify.isPending}>
              Verify
            </Button>
            <Anchor component="button" type="button" size="sm" onClick={() => setBackup(!backup)} w="fit-content">
              {backup ? 'Use the authenticator app' : 'Use a backup code'}
            </Anchor>
          </Stack>
        </form>
      ) : null}
      <Anchor component="button" type="button" size="sm" onClick={() => void signOut()} w="fit-content">
        Sign out
      </Anchor>
    </SignedOutCard>
  );
}
