import { Alert, Anchor, Button, Code, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { CodeBlock } from '../../components/code';
import { useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { errorText } from '../../api';
import { needsOperatorCode, useBootstrapOperator, useOperatorSignIn, useOperatorTotpEnrolment } from '../../features/account/api';
import { isOperator, useSession, useSetSession } from '../../session';
import { renderSVG } from 'uqr';

function SignIn() {
  const setSession = useSetSession();
  const [, navigate] = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [totpCode, setTotpCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const login = useOperatorSignIn({
    signedIn: (session) => {
      setSession(session);
      if (session.user?.totpEnabled) navigate('/operator');
    },
    codeRequired: () => setNeedsCode(true),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate({ email, password, totpCode: needsCode ? totpCode : undefined });
  };
  const error = needsOperatorCode(login.error) ? undefined : login.error;
  return (
    <form onSubmit={submit}>
      <Stack>
        <Title order={1} size="h2">
          Operators&apos; sign-in
        </Title>
        {error ? (
          <Alert color="red" role="alert">
            {errorText(error)}
          </Alert>
        ) : null}
        <TextInput label="Email" type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} />
        <PasswordInput label="Password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.currentTarget.value)} />
        {needsCode ? (
          <TextInput
            label="Code from your authenticator app"
            inputMode="numeric"
            autoComplete="one-time-code"
            required
            value={totpCode}
            onChange={(event) => setTotpCode(event.currentTarget.value)}
          />
        ) : null}
        <Button type="submit" loading={login.isPending}>
          Sign in
        </Button>
      </Stack>
    </form>
  );
}

function Bootstrap() {
  const setSession = useSetSession();
  const [adminToken, setAdminToken] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const create = useBootstrapOperator(setSession);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ adminToken, email, password });
  };
  return (
    <form onSubmit={submit}>
      <Stack>
        <Title order={2} size="h4">
          First visit: create the first operator account
        </Title>
        <Text size="sm" c="dimmed">
          With the service&apos;s admin token (ADMIN_TOKEN, or on the embedded default the one kept in .data/admin-token). This works only while no operator account exists;
          afterwards operators are invited, or created with <Code>npm run admin -- operator create</Code>.
        </Text>
        {create.error ? (
          <Alert color="red" role="alert">
            {errorText(create.error)}
          </Alert>
        ) : null}
        <PasswordInput label="Admin token" required value={adminToken} onChange={(event) => setAdminToken(event.currentTarget.value)} />
        <TextInput label="Your email" type="email" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} />
        <PasswordInput label="Choose a password" autoComplete="new-password" required value={password} onChange={(event) => setPassword(event.currentTarget.value)} />
        <Button type="submit" variant="outline" loading={create.isPending}>
          Create the account
        </Button>
      </Stack>
    </form>
  );
}

const QR_CODE_PX = 200;

/** The otpauth URL as a QR code (an SVG drawn here by uqr: the secret never leaves the page for an image service). */
function qrCodeOf(otpauthUrl: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(renderSVG(otpauthUrl, { border: 2 }))}`;
}

function Enrol() {
  const setSession = useSetSession();
  const [, navigate] = useLocation();
  const [code, setCode] = useState('');
  const { setup, confirm } = useOperatorTotpEnrolment((session) => {
    setSession(session);
    navigate('/operator');
  });
  return (
    <Stack>
      <Title order={1} size="h2">
        Set up your second factor
      </Title>
      <Text size="sm">Operators sign in with a password and a code from an authenticator app (TOTP). Add this account to your app, then enter the code it shows.</Text>
      {!setup.data ? (
        <Button onClick={() => setup.mutate()} loading={setup.isPending} w="fit-content">
          Show the secret
        </Button>
      ) : (
        <>
          <Text size="sm">Scan this code with the app:</Text>
          <img src={qrCodeOf(setup.data.otpauthUrl)} alt="QR code of the secret, for an authenticator app" width={QR_CODE_PX} height={QR_CODE_PX} data-testid="totp-qr" />
          <Text size="sm">Or enter the secret in the app by hand:</Text>
          <CodeBlock label="TOTP secret" testId="totp-secret">
            {setup.data.secret}
          </CodeBlock>
          <Anchor href={setup.data.otpauthUrl} size="sm">
            Open in an authenticator app on this device
          </Anchor>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              confirm.mutate(code);
            }}
          >
            <Stack>
              <TextInput label="Code" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={(event) => setCode(event.currentTarget.value)} />
              <Button type="submit" loading={confirm.isPending} w="fit-content">
                Confirm
              </Button>
            </Stack>
          </form>
        </>
      )}
      {(setup.error ?? confirm.error) ? (
        <Alert color="red" role="alert">
          {errorText(setup.error ?? confirm.error)}
        </Alert>
      ) : null}
    </Stack>
  );
}

export default function OperatorLoginPage() {
  const { data: session } = useSession();
  const enrolling = isOperator(session) && session?.user?.totpEnabled !== true;
  return (
    <Stack>
      <Paper withBorder p="lg" radius="md">
        {enrolling ? <Enrol /> : <SignIn />}
      </Paper>
      {!enrolling ? (
        <Paper withBorder p="lg" radius="md">
          <Bootstrap />
        </Paper>
      ) : null}
    </Stack>
  );
}
