import { useState } from 'react';
import { Badge, Stack, Table, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useEventCatalog } from '../../../hooks/api/webhooks';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Loading, ScrollTable } from '../../../components/loading';

/** The events the service sends (GET /.well-known/events.json), filterable by name. */
export function EventCatalog() {
  const { t } = useTranslation();
  const catalog = useEventCatalog();
  const [filter, setFilter] = useState('');
  const events = (catalog.data?.events ?? []).filter((e) => e.name.includes(filter.trim()));
  return (
    <Stack>
      <PageHeader title={t('catalog.title')} />
      <TextInput label={t('catalog.filter')} value={filter} onChange={(e) => setFilter(e.currentTarget.value)} maw={320} />
      <ErrorAlert error={catalog.error} />
      {catalog.isPending && <Loading />}
      {events.length > 0 && (
        <ScrollTable minWidth={600}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('catalog.name')}</Table.Th>
                <Table.Th>{t('catalog.status')}</Table.Th>
                <Table.Th>{t('catalog.description')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {events.map((e) => (
                <Table.Tr key={e.name}>
                  <Table.Td>{e.name}</Table.Td>
                  <Table.Td>
                    <Badge variant="outline" color="gray.8">
                      {e.status}
                    </Badge>
                  </Table.Td>
                  <Table.Td>{e.description}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
    </Stack>
  );
}
