import { Alert, Center, Group, Loader, Title } from '@mantine/core';
import type { ChangeEvent, Dispatch, ReactNode, SetStateAction } from 'react';
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

type TextKey<Form> = { [Key in keyof Form]: Form[Key] extends string ? Key : never }[keyof Form];

/**
 * The change handler of a text input that holds one field of a form's state. The value is read at
 * once: React clears the event's `currentTarget` before a state updater runs.
 */
export function textField<Form>(set: Dispatch<SetStateAction<Form>>, field: TextKey<Form>) {
  return (event: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => {
    const value = event.currentTarget.value;
    set((current) => ({ ...current, [field]: value }));
  };
}
