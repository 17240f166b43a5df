import { AppShell, Burger, Button, Group, NavLink, Stack, Text, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useTranslation } from 'react-i18next';
import { NavLink as RouterLink, Outlet, useLocation } from 'react-router';
import { useSignOut } from '../hooks/api/session';
import type { Permission } from '../lib/permissions';
import { useCurrentUser } from './permission';

/** The navigation: only screens that are built, and only those the role may open. */
export const NAVIGATION: Array<{ to: string; label: string; permission: Permission }> = [
  { to: '/', label: 'nav.overview', permission: 'analytics:read' },
  { to: '/participants', label: 'nav.participants', permission: 'participants:read' },
  { to: '/programs/rules', label: 'nav.rules', permission: 'programs:read' },
  { to: '/programs/tiers', label: 'nav.tiers', permission: 'programs:read' },
  { to: '/programs/badges', label: 'nav.badges', permission: 'programs:read' },
  { to: '/developers/webhooks', label: 'nav.webhooks', permission: 'developers:read' },
  { to: '/developers/events', label: 'nav.eventCatalog', permission: 'developers:read' },
  { to: '/settings', label: 'nav.settings', permission: 'settings:read' },
  { to: '/audit-log', label: 'nav.auditLog', permission: 'audit:read' },
];

export function ConsoleShell() {
  const { t } = useTranslation();
  const { user, permissions } = useCurrentUser();
  const [opened, { toggle, close }] = useDisclosure(false);
  const signOut = useSignOut();
  const location = useLocation();
  const links = NAVIGATION.filter((item) => permissions.has(item.permission));
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label={t('nav.toggle')} />
            <Text fw={700} component="span">
              {t('app.name')}
            </Text>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <Text size="sm" visibleFrom="sm" data-testid="signed-in-as">
              {user.email} · {t(`roles.${user.role}`)}
            </Text>
            <Button variant="default" size="xs" onClick={() => signOut.mutate()} loading={signOut.isPending}>
              {t('nav.signOut')}
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label={t('nav.label')} component="nav">
        <Stack gap={2}>
          {links.map((item) => (
            <NavLink
              key={item.to}
              component={RouterLink}
              to={item.to}
              end={item.to === '/'}
              label={t(item.label)}
              active={item.to === '/' ? location.pathname === '/' : location.pathname.startsWith(item.to)}
              variant="filled"
              onClick={close}
            />
          ))}
        </Stack>
      </AppShell.Navbar>
      <AppShell.Main>
        <VisuallyHidden>
          <span aria-live="polite">{location.pathname}</span>
        </VisuallyHidden>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
