import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { client, isUnauthenticated, setCsrfToken } from '../../api/client';
import type { ConsoleUser, Permission } from '../../lib/permissions';

/** `GET/POST/DELETE /console/session`: who is signed in, and signing in and out. */
export interface ConsoleSession {
  user: ConsoleUser;
  tenant?: { id: string; slug: string; name: string; environment: string };
  /** What the user may do, as the server enforces it. */
  permissions?: Permission[];
  csrf_token: string | null;
  expires_at: string;
}

export const sessionKey = ['console-session'] as const;

/** Forgets every cached answer but the session itself (whose query the app is watching). */
function forgetOtherQueries(queryClient: QueryClient): void {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== sessionKey[0] });
}

function remember(session: ConsoleSession | null): ConsoleSession | null {
  setCsrfToken(session?.csrf_token ?? undefined);
  return session;
}

export function useSession() {
  return useQuery({
    queryKey: sessionKey,
    queryFn: async () => {
      try {
        return remember((await client.getConsoleSession()) as ConsoleSession);
      } catch (error) {
        if (isUnauthenticated(error)) return remember(null);
        throw error;
      }
    },
    staleTime: 60_000,
    retry: false,
  });
}

export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: { email: string; password: string }) => remember((await client.createConsoleSession({ body })) as ConsoleSession),
    onSuccess: (session) => {
      // Whatever another person's session had cached is not this one's to see.
      forgetOtherQueries(queryClient);
      queryClient.setQueryData(sessionKey, session);
    },
  });
}

export function useSignOut() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async () => {
      await client.deleteConsoleSession();
    },
    onSettled: () => {
      remember(null);
      forgetOtherQueries(queryClient);
      queryClient.setQueryData(sessionKey, null);
    },
  });
}
