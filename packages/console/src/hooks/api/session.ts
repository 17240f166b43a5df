import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { client, isUnauthenticated, setCsrfToken } from '../../api/client';
import type { ConsoleUser, Permission } from '../../lib/permissions';

/** `GET/POST/DELETE /console/session`: who is signed in, and signing in and out. */
export interface ConsoleSession {
  user: ConsoleUser;
  tenant?: { id: string; slug: string; name: string; environment: string };
  /** What the user may do, as the server enforces it. */
  permissions: Permission[];
  csrf_token: string | null;
  expires_at: string;
}

export const sessionKey = ['console-session'] as const;
/** True once a session this page held has ended (a 401 on any call): the sign-in form then says so. */
export const sessionEndedKey = ['console-session-ended'] as const;

/**
 * Called for a 401 anywhere: the session is gone. The flag is set before the
 * session is cleared, so the sign-in form renders with it from its first frame.
 */
export function endSession(queryClient: QueryClient): void {
  if (queryClient.getQueryData(sessionKey)) queryClient.setQueryData(sessionEndedKey, true);
  remember(null);
  queryClient.setQueryData(sessionKey, null);
}

/** Forgets every cached answer but the session itself (whose query the app is watching). */
function forgetOtherQueries(queryClient: QueryClient): void {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== sessionKey[0] && query.queryKey[0] !== sessionEndedKey[0] });
}

function remember(session: ConsoleSession | null): ConsoleSession | null {
  setCsrfToken(session?.csrf_token ?? undefined);
  return session;
}

/** Whether the sign-in form should say the session ended; cleared by the next sign-in or sign-out. */
export function useSessionEnded(): boolean {
  const ended = useQuery({ queryKey: sessionEndedKey, queryFn: () => false, staleTime: Infinity, gcTime: Infinity });
  return ended.data === true;
}

export function useSession() {
  const queryClient = useQueryClient();
  return useQuery({
    queryKey: sessionKey,
    queryFn: async () => {
      try {
        return remember((await client.console.getSession()) as ConsoleSession);
      } catch (error) {
        // The session's own re-check (it goes stale after a minute) can be the first call to meet the ended session:
        // a page that held one says so as well as a screen's refused call would.
        if (isUnauthenticated(error)) {
          if (queryClient.getQueryData(sessionKey)) queryClient.setQueryData(sessionEndedKey, true);
          return remember(null);
        }
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
    mutationFn: async (body: { email: string; password: string }) => remember((await client.console.createSession({ body })) as ConsoleSession),
    onSuccess: (session) => {
      // Whatever another person's session had cached is not this one's to see.
      forgetOtherQueries(queryClient);
      queryClient.setQueryData(sessionEndedKey, false);
      queryClient.setQueryData(sessionKey, session);
    },
  });
}

export function useSignOut() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async () => {
      await client.console.deleteSession();
    },
    onSettled: () => {
      remember(null);
      forgetOtherQueries(queryClient);
      queryClient.setQueryData(sessionEndedKey, false);
      queryClient.setQueryData(sessionKey, null);
    },
  });
}
