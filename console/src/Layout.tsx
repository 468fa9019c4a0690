import { Anchor, AppShell, Badge, Burger, Button, Group, NavLink, SegmentedControl, Text, Title, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { sessionRequests } from './features/account/api';
import { mayOpen, useEnvironment, useForgetSession, type Session } from './session';

const INTEGRATOR_PAGES = [
  { page: 'overview', href: '/', label: 'Overview' },
  { page: 'playground', href: '/playground', label: 'Playground' },
  { page: 'verifications', href: '/verifications', label: 'Verifications' },
  { page: 'flows', href: '/flows', label: 'Flows' },
  { page: 'flows', href: '/sessions', label: 'Sessions' },
  { page: 'keys', href: '/keys', label: 'API keys' },
  { page: 'webhooks', href: '/webhooks', label: 'Webhooks' },
  { page: 'wallet', href: '/wallet', label: 'Wallet' },
  { page: 'payments-audit', href: '/payments-audit', label: 'Payments audit' },
  { page: 'data-requests', href: '/data-requests', label: 'Data requests' },
  { page: 'team', href: '/team', label: 'Team' },
  { page: 'settings', href: '/settings', label: 'Settings' },
  { page: 'security', href: '/security', label: 'Security' },
] as const;

const OPERATOR_PAGES = [
  { href: '/operator', label: 'Organizations' },
  { href: '/operator/queue', label: 'Approval queue' },
  { href: '/operator/sessions', label: 'Sessions in review' },
  { href: '/operator/projections', label: 'Projections' },
  { href: '/operator/audit', label: 'Wallet audit' },
  { href: '/operator/payments', label: 'Payments' },
  { href: '/operator/data-requests', label: 'Data requests' },
  { href: '/operator/security', label: 'Account' },
] as const;

function isCurrent(location: string, href: string, root: string): boolean {
  return href === root ? location === root : location === href || location.startsWith(`${href}/`);
}

export function Shell({ session, children }: { session: Session; children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  const [location, navigate] = useLocation();
  const { environment, setEnvironment } = useEnvironment();
  const forget = useForgetSession();
  const operator = session.user?.kind === 'operator';

  const signOut = async () => {
    try {
      await sessionRequests.signOut();
    } finally {
      await forget();
      navigate(operator ? '/operator/login' : '/login');
    }
  };

  const links = operator ? OPERATOR_PAGES.map((item) => ({ ...item, visible: true })) : INTEGRATOR_PAGES.map((item) => ({ ...item, visible: mayOpen(session, item.page) }));

  return (
    <AppShell header={{ height: 60 }} navbar={{ width: 230, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          {/* The name takes what the controls leave and ends in an ellipsis: an organization's name can be long. */}
          <Group gap="sm" wrap="nowrap" style={{ flex: 1, minWidth: 0 }}>
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Open the menu" />
            <Text fw={700} component="span" truncate="end" title={operator ? undefined : session.organization?.name}>
              {operator ? 'Operators' : (session.organization?.name ?? 'Console')}
            </Text>
            {operator ? (
              <Badge color="grape" variant="outline">
                {session.user?.role}
              </Badge>
            ) : null}
          </Group>
          <Group gap="sm" wrap="nowrap" style={{ flexShrink: 0 }}>
            {!operator ? (
              <SegmentedControl
                aria-label="Environment"
                size="xs"
                value={environment}
                onChange={(value) => setEnvironment(value)}
                data={[
                  { value: 'test', label: 'Test' },
                  { value: 'live', label: 'Live' },
                ]}
                color={environment === 'live' ? '#8a5a00' : 'indigo'}
              />
            ) : null}
            {session.devMailbox ? (
              <Anchor component={Link} href="/dev/mailbox" size="xs" visibleFrom="sm">
                Mailbox
              </Anchor>
            ) : null}
            <Button variant="subtle" size="xs" onClick={() => void signOut()}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Pages">
        <VisuallyHidden>
          <Title order={2}>Pages</Title>
        </VisuallyHidden>
        {links
          .filter((item) => item.visible)
          .map((item) => (
            <NavLink
              key={item.href}
              component={Link}
              href={item.href}
              label={item.label}
              active={isCurrent(location, item.href, operator ? '/operator' : '/')}
              aria-current={isCurrent(location, item.href, operator ? '/operator' : '/') ? 'page' : undefined}
              variant="filled"
              onClick={close}
            />
          ))}
        <Text size="xs" c="dimmed" mt="auto" p="xs">
          {session.user?.email} · {session.user?.role}
        </Text>
      </AppShell.Navbar>
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
  );
}

/** A centred card for the signed-out pages. */
export function Plain({ children }: { children: ReactNode }) {
  return <main style={{ maxWidth: 440, margin: '0 auto', padding: '48px 16px' }}>{children}</main>;
}
