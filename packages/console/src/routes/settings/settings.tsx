import { Card, Group, Progress, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useTenant, useUsage } from '../../hooks/api/settings';
import { ErrorAlert } from '../../components/error-alert';
import { PageHeader } from '../../components/page-header';
import { RoleGuard } from '../../components/permission';
import { useFormat } from '../../lib/format';
import { Loading } from '../../components/loading';
import { TenantSettingsForm } from './components/tenant-settings-form';
import { FourEyesSwitch } from './components/four-eyes-switch';
import { ConsoleUsers } from './components/console-users';
import { ChangePassword } from './components/change-password';

function UsageRow({ label, used, quota }: { label: string; used: number; quota: number | null }) {
  const { t } = useTranslation();
  const f = useFormat();
  return (
    <div>
      <Group justify="space-between">
        <Text size="sm">{label}</Text>
        <Text size="sm">{quota === null ? t('settings.unlimited', { used: f.number(used) }) : `${f.number(used)} / ${f.number(quota)}`}</Text>
      </Group>
      {quota !== null && (
        <Progress.Root>
          <Progress.Section value={Math.min(100, (used / Math.max(quota, 1)) * 100)} aria-label={label} color={used >= quota ? 'red.9' : 'blue.8'} />
        </Progress.Root>
      )}
    </div>
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
