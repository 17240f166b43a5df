import { useMemo } from 'react';
import { Center, Loader } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { createBrowserRouter, Navigate, RouterProvider } from 'react-router';
import { useSession, useSessionEnded } from './hooks/api/session';
import { permissionsOf, type Permission } from './lib/permissions';
import { ConsoleShell } from './components/app-shell';
import { UserContext, RoleGuard, useCurrentUser } from './components/permission';
import { ErrorAlert } from './components/error-alert';
import { SignIn } from './routes/sign-in/sign-in';
import { AcceptInvitation } from './routes/accept-invitation/accept-invitation';
import { Overview } from './routes/overview/overview';
import { AREAS, NAVIGATION } from './areas';
import { NotFound } from './routes/not-found';

export const BASENAME = '/console';

/** A screen only the roles that may see it reach; others land on the first screen they may. */
function Guarded({ permission, children }: { permission: Permission; children: React.ReactNode }) {
  return (
    <RoleGuard permission={permission} fallback={<NotFound />}>
      {children}
    </RoleGuard>
  );
}

function Home() {
  const { permissions } = useCurrentUser();
  const first = NAVIGATION.find((item) => permissions.has(item.permission));
  if (first && first.to !== '/') return <Navigate to={first.to} replace />;
  return (
    <Guarded permission="analytics:read">
      <Overview />
    </Guarded>
  );
}

function SignedIn() {
  const router = useMemo(
    () =>
      createBrowserRouter(
        [
          {
            element: <ConsoleShell />,
            children: [
              { path: '/', element: <Home /> },
              ...AREAS.flatMap((area) =>
                area.routes.map((route) => ({ path: route.path, element: <Guarded permission={route.permission}>{route.element}</Guarded> })),
              ),
              { path: '*', element: <NotFound /> },
            ],
          },
        ],
        { basename: BASENAME },
      ),
    [],
  );
  return <RouterProvider router={router} />;
}

export function App() {
  const { t } = useTranslation();
  const session = useSession();
  const ended = useSessionEnded();
  const path = window.location.pathname.slice(BASENAME.length);
  const value = useMemo(() => (session.data ? { user: session.data.user, permissions: permissionsOf(session.data) } : null), [session.data]);
  if (path.startsWith('/accept-invite')) return <AcceptInvitation />;
  if (session.isPending) {
    return (
      <Center mih="100vh">
        <Loader role="status" aria-label={t('common.loading')} />
      </Center>
    );
  }
  if (session.isError) {
    return (
      <Center mih="100vh" p="md">
        <ErrorAlert error={session.error} />
      </Center>
    );
  }
  if (!value) return <SignIn expired={ended} />;
  return (
    <UserContext.Provider value={value}>
      <SignedIn />
    </UserContext.Provider>
  );
}
