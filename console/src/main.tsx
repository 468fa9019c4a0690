import '@mantine/core/styles.css';
import { Alert, Anchor, createTheme, Modal, MantineProvider, type CSSVariablesResolver } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Router } from 'wouter';
import { ApiError } from './api';
import { App } from './App';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A 401 or 403 will not change by asking again; anything else gets one more try.
      retry: (count, error) => !(error instanceof ApiError && error.status < 500) && count < 1,
      refetchOnWindowFocus: false,
      staleTime: 5_000,
    },
  },
});

// Darker than Mantine's default blue so that white text on it and it on white pass WCAG AA contrast.
const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: 8,
  defaultRadius: 'sm',
  // Links inside text are told apart by more than their colour.
  components: {
    Anchor: Anchor.extend({ defaultProps: { underline: 'always' } }),
    // An alert's title in the body's colour: the tinted titles fall short of 4.5:1 on their tinted backgrounds.
    Alert: Alert.extend({ styles: { title: { color: 'var(--mantine-color-text)' } } }),
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
  },
});

// Mantine's dimmed text (gray 6 on white) and a field's error text (red 6) fall short of the 4.5:1 contrast WCAG AA asks of small text; gray 7 and red 9 pass.
const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)', '--mantine-color-error': 'var(--mantine-color-red-9)' },
  dark: {},
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="light" cssVariablesResolver={cssVariablesResolver}>
      <QueryClientProvider client={queryClient}>
        <Router base="/console">
          <App />
        </Router>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
