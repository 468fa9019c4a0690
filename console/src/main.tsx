import '@mantine/core/styles.css';
import { createTheme, MantineProvider } from '@mantine/core';
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
const theme = createTheme({ primaryColor: 'indigo', primaryShade: 8, defaultRadius: 'sm' });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="light">
      <QueryClientProvider client={queryClient}>
        <Router base="/console">
          <App />
        </Router>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
