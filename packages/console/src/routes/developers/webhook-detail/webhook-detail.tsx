import { useState } from 'react';
import { Alert, Anchor, Badge, Button, Card, Code, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useDeleteDestination, useDeliveries, useDestination, useReplayDelivery, type DeliveryStatus, type Destination } from '../../../hooks/api/webhooks';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard, useCan } from '../../../components/permission';
import { ConfirmButton } from '../../../components/confirm-button';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';
import { HealthCard } from '../common/destination-health';
import { BulkReplay } from './components/bulk-replay';
import { DestinationEdit } from './components/destination-edit';
import { TestEvent } from './components/test-event';

const STATUSES = ['PENDING', 'DELIVERING', 'RETRYING', 'SUCCEEDED', 'EXHAUSTED', 'CANCELLED'] as const;
const STATUS_COLORS: Record<string, string> = { SUCCEEDED: 'teal.9', EXHAUSTED: 'red.9', RETRYING: 'indigo.9', CANCELLED: 'gray.7' };

function Deliveries({ destinationId }: { destinationId: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const [status, setStatus] = useState<DeliveryStatus | undefined>(undefined);
  const [eventName, setEventName] = useState('');
  const deliveries = useDeliveries(destinationId, { status, event: eventName, cursor: pages.cursor });
  const replay = useReplayDelivery(destinationId);
  const canReplay = useCan('developers:write');
  const rows = deliveries.data?.deliveries ?? [];
  return (
    <Card withBorder>
      <Text fw={700} component="h2" size="lg" mb="sm">
        {t('deliveries.title')}
      </Text>
      <Group mb="sm" align="flex-end">
        <Select
          label={t('deliveries.status')}
          clearable
          data={STATUSES.map((s) => ({ value: s, label: s }))}
          value={status ?? null}
          onChange={(value) => {
            pages.reset();
            setStatus((value ?? undefined) as DeliveryStatus | undefined);
          }}
        />
        <TextInput label={t('deliveries.event')} value={eventName} onChange={(e) => { pages.reset(); setEventName(e.currentTarget.value); }} />
      </Group>
      <ErrorAlert error={deliveries.error ?? replay.error} />
      {replay.isSuccess && <Alert color="green" role="status">{t('deliveries.replayed')}</Alert>}
      {deliveries.data && rows.length === 0 && <Text>{t('deliveries.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={700}>
          <Table striped data-testid="deliveries">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('deliveries.when')}</Table.Th>
                <Table.Th>{t('deliveries.event')}</Table.Th>
                <Table.Th>{t('deliveries.status')}</Table.Th>
                <Table.Th>{t('deliveries.attempts')}</Table.Th>
                <Table.Th>{t('deliveries.response')}</Table.Th>
                {canReplay && <Table.Th>{t('deliveries.actions')}</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((d) => (
                <Table.Tr key={d.log_id}>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>{f.dateTime(d.created_at)}</Table.Td>
                  <Table.Td>{d.event}</Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>
                    <Badge color={STATUS_COLORS[d.status] ?? 'blue.9'} variant="filled" miw="max-content">
                      {d.status}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    {d.attempts} / {d.max_attempts}
                  </Table.Td>
                  <Table.Td>{d.last_response_status ?? d.last_error ?? '—'}</Table.Td>
                  {canReplay && (
                    <Table.Td>
                      <Button size="compact-sm" variant="default" loading={replay.isPending && replay.variables === d.log_id} onClick={() => replay.mutate(d.log_id)}>
                        {t('deliveries.replay')}
                      </Button>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={deliveries.data?.next_cursor} />
    </Card>
  );
}

/** What the destination is set to, for everyone who may see it. */
function Settings({ destination }: { destination: Destination }) {
  const { t } = useTranslation();
  const rows: Array<[string, React.ReactNode]> = [
    [t('webhooks.url'), <Code key="url">{destination.url}</Code>],
    [t('webhooks.events'), destination.events.join(', ')],
    [t('webhookForm.description'), destination.description ?? t('webhookForm.none')],
    [t('webhookForm.enabled'), destination.active ? t('webhookForm.yes') : t('webhookForm.no')],
    [t('webhookForm.localReceiver'), destination.allow_private_network ? t('webhookForm.yes') : t('webhookForm.no')],
    [t('webhooks.retries'), destination.retry_count],
    [t('webhooks.timeout'), `${destination.timeout_seconds} s`],
  ];
  return (
    <Card withBorder data-testid="destination-settings">
      <Title order={2} size="h4" mb="sm">
        {t('webhookForm.settings')}
      </Title>
      <Table>
        <Table.Tbody>
          {rows.map(([label, value]) => (
            <Table.Tr key={label}>
              <Table.Th scope="row" w={200}>
                {label}
              </Table.Th>
              <Table.Td style={{ wordBreak: 'break-word' }}>{value}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}

export function WebhookDetail() {
  const { t } = useTranslation();
  const id = useParams().destinationId!;
  const navigate = useNavigate();
  const destination = useDestination(id);
  const remove = useDeleteDestination();
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const d = destination.data;
  return (
    <Stack>
      <Anchor component={Link} to="/developers/webhooks" size="sm">
        ← {t('webhooks.title')}
      </Anchor>
      <PageHeader title={d?.name ?? t('webhooks.destination')}>
        <RoleGuard permission="developers:write">
          {d && !editing && (
            <Button
              variant="default"
              onClick={() => {
                setSaved(false);
                setEditing(true);
              }}
            >
              {t('webhookForm.edit')}
            </Button>
          )}
          <ConfirmButton
            label={t('webhooks.delete')}
            title={t('webhooks.deleteTitle')}
            message={t('webhooks.deleteConfirm', { name: d?.name ?? id })}
            confirmLabel={t('webhooks.delete')}
            onConfirm={async () => {
              await remove.mutateAsync(id);
              navigate('/developers/webhooks');
            }}
          />
        </RoleGuard>
      </PageHeader>
      <ZoneNote />
      <ErrorAlert error={destination.error} />
      {destination.isPending && <Loading />}
      {saved && (
        <Alert color="green" variant="light" role="status">
          {t('webhookForm.saved')}
        </Alert>
      )}
      {d && <HealthCard health={d.health} />}
      {d &&
        (editing ? (
          <DestinationEdit
            destination={d}
            onDone={(changed) => {
              setEditing(false);
              setSaved(changed);
            }}
          />
        ) : (
          <Settings destination={d} />
        ))}
      {d && (
        <RoleGuard permission="developers:write">
          <TestEvent destinationId={id} disabled={!d.active} />
        </RoleGuard>
      )}
      <RoleGuard permission="developers:write">
        <BulkReplay destinationId={id} />
      </RoleGuard>
      <Deliveries destinationId={id} />
    </Stack>
  );
}
