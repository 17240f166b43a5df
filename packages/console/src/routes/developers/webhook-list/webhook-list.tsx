import { useState } from 'react';
import { Alert, Anchor, Badge, Button, Card, Code, Group, Loader, MultiSelect, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useCreateDestination, useDestinations, useEventCatalog } from '../../../hooks/api/webhooks';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';

function CreateDestination() {
  const { t } = useTranslation();
  const create = useCreateDestination();
  const catalog = useEventCatalog();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('webhooks.create')}
      </Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate({ name, url, events }, { onSuccess: () => { setName(''); setUrl(''); setEvents([]); } });
        }}
      >
        <Stack>
          <TextInput label={t('webhooks.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
          <TextInput label={t('webhooks.url')} type="url" placeholder="https://" value={url} onChange={(e) => setUrl(e.currentTarget.value)} required />
          <MultiSelect label={t('webhooks.events')} data={(catalog.data?.events ?? []).map((e) => e.name)} value={events} onChange={setEvents} searchable />
          <ErrorAlert error={create.error} />
          {create.data && (
            <Alert color="green" role="status" title={t('webhooks.created')}>
              {t('webhooks.secretOnce')} <Code>{create.data.secret}</Code>
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={create.isPending}>
              {t('webhooks.createSubmit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}

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
                <Table.Th>{t('webhooks.state')}</Table.Th>
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
                    <Badge color={d.active ? 'teal.9' : 'gray.7'} variant="filled">
                      {d.active ? t('webhooks.active') : t('webhooks.inactive')}
                    </Badge>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={destinations.data?.next_cursor} />
      <RoleGuard permission="developers:write">
        <CreateDestination />
      </RoleGuard>
    </Stack>
  );
}
