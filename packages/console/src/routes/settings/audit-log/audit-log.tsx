import { useState } from 'react';
import { Badge, Stack, Table, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useAuditLog } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { Loading, ScrollTable } from '../../../components/loading';

/** Every change made through the admin API, by a person or a key, filterable by resource. */
export function AuditLog() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const [resource, setResource] = useState('');
  const audit = useAuditLog({ resource_type: resource.trim(), cursor: pages.cursor });
  const rows = audit.data?.entries ?? [];
  return (
    <Stack>
      <PageHeader title={t('audit.title')} />
      <TextInput label={t('audit.resource')} description={t('audit.resourceHelp')} value={resource} onChange={(e) => { pages.reset(); setResource(e.currentTarget.value); }} maw={320} />
      <ErrorAlert error={audit.error} />
      {audit.isPending && <Loading />}
      {audit.data && rows.length === 0 && <Text>{t('audit.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={700}>
          <Table striped data-testid="audit-log">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('audit.when')}</Table.Th>
                <Table.Th>{t('audit.who')}</Table.Th>
                <Table.Th>{t('audit.action')}</Table.Th>
                <Table.Th>{t('audit.resource')}</Table.Th>
                <Table.Th>{t('audit.status')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((entry) => (
                <Table.Tr key={entry.id}>
                  <Table.Td>{new Date(entry.occurred_at).toLocaleString()}</Table.Td>
                  <Table.Td>{entry.actor_label ?? entry.actor_id}</Table.Td>
                  <Table.Td>
                    <Badge variant="outline" color="gray.8">
                      {entry.action}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    {entry.resource_type}
                    {entry.resource_id ? ` ${entry.resource_id}` : ''}
                  </Table.Td>
                  <Table.Td>{entry.status}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={audit.data?.next_cursor} />
    </Stack>
  );
}
