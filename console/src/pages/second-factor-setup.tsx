import { Anchor, Text } from '@mantine/core';
import { useLocation } from 'wouter';
import { sessionRequests } from '../features/account/api';
import { SignedOutCard } from '../components/signed-out-card';
import { useForgetSession } from '../session';
import { SecondFactorPanel } from './second-factor';

/** Where a member lands while the organization requires a second factor they have not set up. */
export default function SecondFactorSetupPage() {
  const forget = useForgetSession();
  const [, navigate] = useLocation();
  const signOut = async () => {
    await sessionRequests.signOut();
    await forget();
    navigate('/login');
  };
  return (
    <SignedOutCard title="Set up a second factor">
      <Text size="sm">Your organization requires a second factor before the console opens: an authenticator app or a passkey.</Text>
      <SecondFactorPanel />
      <Anchor component="button" type="button" size="sm" onClick={() => void signOut()} w="fit-content">
        Sign out
      </Anchor>
    </SignedOutCard>
  );
}
