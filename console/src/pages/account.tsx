import { Alert, Anchor, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { errorText } from '../api';
import { Loading } from '../components/common';
import { SignedOutCard } from '../components/signed-out-card';
import { sessionRequests, useInvitation } from '../features/account/api';
import { useSetSession } from '../session';

function useToken(): string {
  return new URLSearchParams(useSearch()).get('token') ?? '';
}

function VerifyEmail() {
  const token = useToken();
  const setSession = useSetSession();
  const [state, setState] = useState<{ done?: boolean; error?: string }>({});
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    sessionRequests
      .verifyEmail(token)
      .then((session) => {
        setSession(session);
        setState({ done: true });
      })
      .catch((error: unknown) => setState({ error: errorText(error) }));
  }, [token, setSession]);
  return (
    <SignedOutCard title="Email verification">
      {state.done ? (
        <Alert color="green" role="status">
          Your email address is verified.{' '}
          <Anchor component={Link} href="/">
            Go to the console
          </Anchor>
        </Alert>
      ) : state.error ? (
        <Alert color="red" role="alert">
          {state.error}
        </Alert>
      ) : (
        <Loading label="Verifying" />
      )}
    </SignedOutCard>
  );
}

function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      await sessionRequests.forgotPassword(email);
      setSent(true);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <SignedOutCard title="Reset your password">
      {sent ? (
        <Alert color="green" role="status">
          If an account uses {email}, a link to set a new password is on its way.
        </Alert>
      ) : (
        <form onSubmit={(event) => void submit(event)}>
          <Stack>
            {error ? (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            ) : null}
            <TextInput label="Email" type="email" autoComplete="email" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} />
            <Button type="submit">Send the link</Button>
          </Stack>
        </form>
      )}
      <Anchor component={Link} href="/login" size="sm">
        Back to sign-in
      </Anchor>
    </SignedOutCard>
  );
}

function ResetPassword() {
  const token = useToken();
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      await sessionRequests.resetPassword({ token, password });
      setDone(true);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <SignedOutCard title="Choose a new password">
      {done ? (
        <Alert color="green" role="status">
          Your password is changed and every session signed out.{' '}
          <Anchor component={Link} href="/login">
            Sign in
          </Anchor>
        </Alert>
      ) : (
        <form onSubmit={(event) => void submit(event)}>
          <Stack>
            {error ? (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            ) : null}
            <PasswordInput label="New password" autoComplete="new-password" required value={password} onChange={(event) => setPassword(event.currentTarget.value)} />
            <Button type="submit">Set the password</Button>
          </Stack>
        </form>
      )}
    </SignedOutCard>
  );
}

function AcceptInvitation() {
  const token = useToken();
  const setSession = useSetSession();
  const [, navigate] = useLocation();
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const invitation = useInvitation(token);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      const session = await sessionRequests.acceptInvitation({ token, password });
      setSession(session);
      navigate(session.user?.kind === 'operator' ? '/operator/login' : '/');
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  if (invitation.isPending) return <Loading />;
  if (invitation.error) {
    return (
      <SignedOutCard title="Invitation">
        <Alert color="red" role="alert">
          This invitation is unknown, used or expired.
        </Alert>
      </SignedOutCard>
    );
  }
  return (
    <SignedOutCard title="Join your team">
      <Text>
        {invitation.data.email} is invited as <b>{invitation.data.role}</b>
        {invitation.data.organizationName ? ` of ${invitation.data.organizationName}` : ' of the operators'}. Choose a password to accept.
      </Text>
      <form onSubmit={(event) => void submit(event)}>
        <Stack>
          {error ? (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          ) : null}
          <PasswordInput label="Password" autoComplete="new-password" required value={password} onChange={(event) => setPassword(event.currentTarget.value)} />
          <Button type="submit">Accept the invitation</Button>
        </Stack>
      </form>
    </SignedOutCard>
  );
}

/** The pages reached from the links in the console's emails, and the forgotten-password form. */
export default function AccountPages() {
  const [location] = useLocation();
  if (location === '/verify-email') return <VerifyEmail />;
  if (location === '/reset-password') return <ResetPassword />;
  if (location === '/accept-invitation') return <AcceptInvitation />;
  return <ForgotPassword />;
}
