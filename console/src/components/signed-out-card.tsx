import { Paper, Stack, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** The card of a signed-out page (sign-in, sign-up, the pages the console's emails link to) under its title. */
export function SignedOutCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Paper withBorder p="lg" radius="md">
      <Stack>
        <Title order={1} size="h2">
          {title}
        </Title>
        {children}
      </Stack>
    </Paper>
  );
}
