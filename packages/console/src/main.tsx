import '@mantine/core/styles.css';
import '@mantine/charts/styles.css';
import './console.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { setNonce } from 'get-nonce';
import { createTheme, MantineProvider, type CSSVariablesResolver } from '@mantine/core';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { isUnauthenticated, isForbidden } from './api/client';
import { endSession } from './hooks/api/session';
import { App } from './app';
import './i18n';

/**
 * The console's entry. The page's Content-Security-Policy allows `<style>`
 * elements only with the nonce the service put in `<meta name="style-nonce">`;
 * Mantine writes its CSS variables in one, with that nonce.
 */
const styleNonce = document.querySelector<HTMLMetaElement>('meta[name="style-nonce"]')?.content ?? '';
// Dialogs lock the page's scrolling with a `<style>` element of their own (react-remove-scroll), which takes its nonce from here.
setNonce(styleNonce);

const theme = createTheme({
  primaryColor: 'blue',
  // Shade 8 of the palette keeps white text on filled buttons above 4.5:1 (WCAG AA).
  primaryShade: 8,
  fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
});

/** Dimmed text in the default palette (gray 6) is below 4.5:1 on white; gray 7 is above. So is a field error's red (red 8 is 4.4:1; red 9 above 5). */
const resolver: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)', '--mantine-color-placeholder': 'var(--mantine-color-gray-7)', '--mantine-color-error': 'var(--mantine-color-red-9)' },
  dark: {},
});

/** A 401 on any call means the session ended: back to the sign-in page, which says so. */
function onError(error: unknown): void {
  if (!isUnauthenticated(error)) return;
  endSession(queryClient);
}

const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    queries: {
      staleTime: 15_000,
      // The SDK already retries what is worth retrying; a 4xx will not change by asking again.
      retry: (failures, error) => failures < 1 && !isUnauthenticated(error) && !isForbidden(error) && !(error instanceof Error && 'status' in error && Number((error as { status: number }).status) < 500),
      refetchOnWindowFocus: false,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="light" cssVariablesResolver={resolver} getStyleNonce={() => styleNonce}>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
