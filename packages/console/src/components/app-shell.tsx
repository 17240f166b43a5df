import { AppShell, Burger, Button, Group, NavLink, ScrollArea, Stack, Text, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useTranslation } from 'react-i18next';
import { NavLink as RouterLink, Outlet, useLocation } from 'react-router';
import { useSignOut } from '../hooks/api/session';
import { AREAS } from '../areas';
import { useCurrentUser } from './permission';
import { LanguageSwitch } from '../i18n/language-switch';
import { WaitingReviewsCount } from '../routes/reviews/waiting-count';

export function ConsoleShell() {
  const { t } = useTranslation();
  const { user, permissions } = useCurrentUser();
  const [opened, { toggle, close }] = useDisclosure(false);
  const signOut = useSignOut();
  const location = useLocation();
  const groups = AREAS.map((area) => ({ area, links: area.navigation.filter((item) => permissions.has(item.permission)) })).filter((group) => group.links.length > 0);
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
            <LanguageSwitch />
            <Button variant="default" size="xs" onClick={() => signOut.mutate()} loading={signOut.isPending}>
              {t('nav.signOut')}
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label={t('nav.label')} component="nav">
        <AppShell.Section grow component={ScrollArea}>
        <Stack gap={2}>
          {groups.map(({ area, links }) => (
            <Stack gap={2} key={area.key} role="group" aria-labelledby={area.heading ? `nav-${area.key}` : undefined}>
              {area.heading && (
                <Text id={`nav-${area.key}`} size="xs" fw={700} tt="uppercase" c="dimmed" px="sm" pt="sm">
                  {t(area.heading)}
                </Text>
              )}
              {links.map((item) => (
                <NavLink
                  key={item.to}
                  component={RouterLink}
                  to={item.to}
                  end={item.to === '/'}
                  label={t(item.label)}
                  rightSection={item.to === '/reviews' ? <WaitingReviewsCount /> : undefined}
                  active={item.to === '/' ? location.pathname === '/' : location.pathname.startsWith(item.to)}
                  variant="filled"
                  onClick={close}
                />
              ))}
            </Stack>
          ))}
        </Stack>
        </AppShell.Section>
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
