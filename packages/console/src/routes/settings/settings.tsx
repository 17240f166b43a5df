import { useState } from 'react';
import { Alert, Button, Card, Code, Group, Loader, Progress, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { PasswordInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { client } from '../../api/client';
import { useConsoleUsers, useInviteUser, useRemoveUser, useTenant, useUpdateUser, useUsage } from '../../hooks/api/settings';
import { ErrorAlert } from '../../components/error-alert';
import { PageHeader } from '../../components/page-header';
import { ConfirmButton } from '../../components/confirm-button';
import { RoleGuard, useCurrentUser } from '../../components/permission';
import { ROLES, type Role } from '../../lib/permissions';
import { Loading, ScrollTable } from '../../components/loading';
import { TenantSettingsForm } from './components/tenant-settings-form';
import { FourEyesSwitch } from './components/four-eyes-switch';

function UsageRow({ label, used, quota }: { label: string; used: number; quota: number | null }) {
  const { t } = useTranslation();
  return (
    <div>
      <Group justify="space-between">
        <Text size="sm">{label}</Text>
        <Text size="sm">{quota === null ? t('settings.unlimited', { used }) : `${used.toLocaleString()} / ${quota.toLocaleString()}`}</Text>
      </Group>
      {quota !== null && (
        <Progress.Root>
          <Progress.Section value={Math.min(100, (used / Math.max(quota, 1)) * 100)} aria-label={label} color={used >= quota ? 'red.9' : 'blue.8'} />
        </Progress.Root>
      )}
    </div>
  );
}

function ConsoleUsers() {
  const { t } = useTranslation();
  const { user: me } = useCurrentUser();
  const users = useConsoleUsers();
  const invite = useInviteUser();
  const update = useUpdateUser();
  const remove = useRemoveUser();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('marketer');
  const roles = ROLES.map((r) => ({ value: r, label: t(`roles.${r}`) }));
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('users.title')}
      </Title>
      <ErrorAlert error={users.error ?? update.error} />
      {users.data && (
        <ScrollTable minWidth={500}>
          <Table striped data-testid="console-users">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('users.email')}</Table.Th>
                <Table.Th>{t('users.role')}</Table.Th>
                <Table.Th>{t('common.actions')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {users.data.map((u) => (
                <Table.Tr key={u.id}>
                  <Table.Td>
                    {u.email}
                    {u.status && u.status !== 'active' ? ` (${u.status})` : ''}
                  </Table.Td>
                  <Table.Td>
                    <Select
                      aria-label={t('users.roleOf', { email: u.email })}
                      data={roles}
                      value={u.role}
                      allowDeselect={false}
                      disabled={u.id === me.id}
                      onChange={(value) => value && update.mutate({ id: u.id, role: value as Role })}
                      w={160}
                    />
                  </Table.Td>
                  <Table.Td>
                    {u.id !== me.id && (
                      <ConfirmButton
                        size="compact-sm"
                        variant="outline"
                        label={t('users.remove')}
                        aria-label={t('users.removeNamed', { email: u.email })}
                        title={t('users.removeTitle')}
                        message={t('users.removeConfirm', { email: u.email })}
                        confirmLabel={t('users.remove')}
                        onConfirm={() => remove.mutateAsync(u.id)}
                      />
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          invite.mutate({ email, role }, { onSuccess: () => setEmail('') });
        }}
      >
        <Group align="flex-end" mt="md" wrap="wrap">
          <TextInput label={t('users.inviteEmail')} type="email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} required />
          <Select label={t('users.role')} data={roles} value={role} onChange={(value) => setRole((value ?? 'marketer') as Role)} allowDeselect={false} />
          <Button type="submit" loading={invite.isPending}>
            {t('users.invite')}
          </Button>
        </Group>
        <ErrorAlert error={invite.error} />
        {invite.data && (
          <Alert color="green" role="status" mt="sm" title={t('users.invited')}>
            {t('users.inviteLink')} <Code>{invite.data.invite_url}</Code>
          </Alert>
        )}
      </form>
    </Card>
  );
}

function ChangePassword() {
  const { t } = useTranslation();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const change = useMutation({ mutationFn: () => client.console.changePassword({ body: { current_password: current, new_password: next } }) });
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('password.title')}
      </Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          change.mutate(undefined, { onSuccess: () => { setCurrent(''); setNext(''); } });
        }}
      >
        <Stack>
          <PasswordInput label={t('password.current')} value={current} onChange={(e) => setCurrent(e.currentTarget.value)} autoComplete="current-password" required />
          <PasswordInput label={t('password.new')} value={next} onChange={(e) => setNext(e.currentTarget.value)} autoComplete="new-password" required />
          <ErrorAlert error={change.error} />
          {change.isSuccess && <Alert color="green" role="status">{t('password.changed')}</Alert>}
          <Group>
            <Button type="submit" loading={change.isPending}>
              {t('password.submit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}

export function Settings() {
  const { t } = useTranslation();
  const tenant = useTenant();
  const usage = useUsage();
  return (
    <Stack>
      <PageHeader title={t('settings.title')} />
      <ErrorAlert error={tenant.error ?? usage.error} />
      {(tenant.isPending || usage.isPending) && <Loading />}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {tenant.data && (
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('settings.tenant')}
            </Title>
            <Table>
              <Table.Tbody>
                {([
                  ['settings.name', tenant.data.name],
                  ['settings.slug', tenant.data.slug],
                  ['settings.plan', tenant.data.plan],
                  ['settings.environment', tenant.data.environment ?? '—'],
                  ['settings.timezone', tenant.data.timezone],
                  ['tenantSettings.currency', tenant.data.currency],
                  ['tenantSettings.locale', tenant.data.locale],
                  ['settings.tenantId', tenant.data.tenant_id],
                ] as const).map(([label, value]) => (
                  <Table.Tr key={label}>
                    <Table.Th scope="row">{t(label)}</Table.Th>
                    <Table.Td>{value}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Card>
        )}
        {usage.data && (
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('settings.usage')}
            </Title>
            <Stack>
              <UsageRow label={t('settings.participantsThisMonth')} used={usage.data.participants_this_month.used} quota={usage.data.participants_this_month.quota} />
              <UsageRow label={t('settings.eventsToday')} used={usage.data.events_today.used} quota={usage.data.events_today.quota} />
              <UsageRow label={t('settings.apiKeys')} used={usage.data.api_keys.used} quota={usage.data.api_keys.quota} />
              <UsageRow label={t('settings.engagements')} used={usage.data.concurrent_engagements.used} quota={usage.data.concurrent_engagements.quota} />
            </Stack>
          </Card>
        )}
      </SimpleGrid>
      {tenant.data && (
        <RoleGuard permission="settings:write">
          <TenantSettingsForm tenant={tenant.data} />
          <FourEyesSwitch requireFourEyes={tenant.data.require_four_eyes} />
        </RoleGuard>
      )}
      <RoleGuard permission="access:manage">
        <ConsoleUsers />
      </RoleGuard>
      <ChangePassword />
    </Stack>
  );
}
