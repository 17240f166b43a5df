import { Anchor, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useDestinations } from '../../../hooks/api/webhooks';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { HealthBadge } from '../common/destination-health';
import { DestinationCreate } from './components/destination-create';

export function WebhookList() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const destinations = useDestinations(pages.cursor);
  const rows = destinations.data?.destinations ?? [];
  return (
    <Stack>
      <PageHeader title={t('webhooks.title')} />
      <ErrorAlert error={destinations.error} />
      {destinations.isPending && <Loading />}
      {destinations.data && rows.length === 0 && <Text>{t('webhooks.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={600}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('webhooks.name')}</Table.Th>
                <Table.Th>{t('webhooks.url')}</Table.Th>
                <Table.Th>{t('webhooks.events')}</Table.Th>
                <Table.Th>{t('webhookHealth.column')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((d) => (
                <Table.Tr key={d.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/developers/webhooks/${d.id}`}>
                      {d.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{d.url}</Table.Td>
                  <Table.Td>{d.events.length === 0 ? t('webhooks.allEvents') : d.events.join(', ')}</Table.Td>
                  <Table.Td>
                    <HealthBadge health={d.health} />
                    {d.health.last_error && d.health.status !== 'healthy' && (
                      <Text size="xs" mt={4} maw={320} lineClamp={2} style={{ wordBreak: 'break-word' }}>
                        {t('webhookHealth.lastErrorShort', { error: d.health.last_error })}
                      </Text>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={destinations.data?.next_cursor} />
      <RoleGuard permission="developers:write">
        <DestinationCreate />
      </RoleGuard>
    </Stack>
  );
}
