import { Alert, Anchor, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { errorText } from '../api';
import { SignedOutCard } from '../components/signed-out-card';
import { useSignIn as useSignInRequest, useSignUp } from '../features/account/api';
import { useSetSession } from '../session';

/** Signs in, keeps the session it answers and opens `then`. */
function useSignIn(then: string) {
  const setSession = useSetSession();
  const [, navigate] = useLocation();
  return useSignInRequest((session) => {
    setSession(session);
    navigate(then);
  });
}

export function LoginPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useSignIn('/');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate({ email, password });
  };
  const error = signIn.error ? errorText(signIn.error) : undefined;
  const busy = signIn.isPending;

  return (
    <SignedOutCard title="Sign in">
      <form onSubmit={submit}>
        <Stack>
          {error ? (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          ) : null}
          <TextInput label="Email" type="email" autoComplete="email" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} />
          <PasswordInput label="Password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.currentTarget.value)} />
          <Button type="submit" loading={busy}>
            Sign in
          </Button>
          <Text size="sm">
            No account yet?{' '}
            <Anchor component={Link} href="/signup">
              Sign up
            </Anchor>
            {' · '}
            <Anchor component={Link} href="/forgot-password">
              Forgot your password?
            </Anchor>
          </Text>
        </Stack>
      </form>
    </SignedOutCard>
  );
}

export function SignupPage() {
  const [organizationName, setOrganizationName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  // The answer is the same whether the address is new or has an account already (its holder is mailed): no session, a mail.
  const signUp = useSignUp();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    signUp.mutate({ organizationName, email, password });
  };
  const error = signUp.error ? errorText(signUp.error) : undefined;
  const busy = signUp.isPending;

  if (signUp.isSuccess)
    return (
      <SignedOutCard title="Check your mail">
        <Stack>
          <Text role="status">We sent a mail to {signUp.variables?.email}. Follow the link in it, then sign in with your password.</Text>
          <Text size="sm" c="dimmed">
            No mail within a few minutes? Look in your spam folder, or sign up again.
          </Text>
          <Button component={Link} href="/login">
            Sign in
          </Button>
        </Stack>
      </SignedOutCard>
    );

  return (
    <SignedOutCard title="Create your account">
      <form onSubmit={submit}>
        <Stack>
          <Text size="sm" c="dimmed">
            Your organization starts with sandbox credit: run test checks as soon as you are in.
          </Text>
          {error ? (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          ) : null}
          <TextInput label="Organization name" required value={organizationName} onChange={(event) => setOrganizationName(event.currentTarget.value)} />
          <TextInput label="Email" type="email" autoComplete="email" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} />
          <PasswordInput
            label="Password"
            description="At least 10 characters and hard to guess: a few unrelated words work well"
            autoComplete="new-password"
            required
            value={password}
            onChange={(event) => setPassword(event.currentTarget.value)}
          />
          <Button type="submit" loading={busy}>
            Sign up
          </Button>
          <Text size="sm">
            Already have an account?{' '}
            <Anchor component={Link} href="/login">
              Sign in
            </Anchor>
          </Text>
        </Stack>
      </form>
    </SignedOutCard>
  );
}
