import { Alert, Button, Stack, Text } from '@mantine/core';
import { Component, type ReactNode } from 'react';

/** How the browsers word a failed `import()` of a page's code (Chromium, Firefox, Safari). */
const CHUNK_FAILED = /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed/i;

interface State {
  readonly error: Error | null;
}

/**
 * Catches what a page throws while loading or rendering, so that the console shows a way out
 * instead of a blank page. The usual cause is a redeploy: the page's code has a hashed file name,
 * and the old one is gone from the server, so only a reload (which fetches the new names) helps.
 * Keyed by the location where it is used, so that going to another page tries again.
 */
export class PageErrorBoundary extends Component<{ children: ReactNode }, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (error === null) return this.props.children;
    const redeployed = CHUNK_FAILED.test(error.message);
    return (
      <Alert color={redeployed ? 'blue' : 'red'} title={redeployed ? 'The console was updated' : 'This page failed'} role="alert" mb="md">
        <Stack gap="sm" align="flex-start">
          <Text size="sm">
            {redeployed
              ? 'A newer version of the console is out, and this page could not be loaded from the old one. Reload the page to get the new version.'
              : `Something went wrong while showing this page (${error.message}). Reloading the page may help.`}
          </Text>
          <Button size="xs" onClick={() => window.location.reload()}>
            Reload the page
          </Button>
        </Stack>
      </Alert>
    );
  }
}
