import { Alert, Center, Group, Loader, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { errorText } from '../api';

export function PageTitle({ children, actions }: { children: ReactNode; actions?: ReactNode }) {
  return (
    <Group justify="space-between" mb="md" wrap="wrap">
      <Title order={1} size="h2">
        {children}
      </Title>
      {actions}
    </Group>
  );
}

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <Center p="xl">
      <Loader role="status" aria-label={label} />
    </Center>
  );
}

export function Failure({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <Alert color="red" title="Something went wrong" role="alert" mb="md">
      {errorText(error)}
    </Alert>
  );
}
