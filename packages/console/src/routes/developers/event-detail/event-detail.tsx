import { Alert, Anchor, Button, Card, Code, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { useIngestedEvent, useRetryEvent } from '../../../hooks/api/events';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { RoleGuard } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { EventStatusBadge } from '../common/event-status';
import { useFormat, ZoneNote } from '../../../lib/format';
import { RuleResults } from '../common/rule-results';

function Json({ label, value }: { label: string; value: unknown }) {
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {label}
      </Title>
      <Code block>{JSON.stringify(value, null, 2)}</Code>
    </Card>
  );
}

export function EventDetail() {
  const { t } = useTranslation();
  const f = useFormat();
  const id = useParams().eventId!;
  const event = useIngestedEvent(id);
  const retry = useRetryEvent(id);
  const e = event.data;
  const failed = e?.status === 'failed' || e?.status === 'retrying';
  return (
    <Stack>
      <Anchor component={Link} to="/developers/ingested-events" size="sm">
        ← {t('events.title')}
      </Anchor>
      <PageHeader title={e ? t('events.detailTitle', { name: e.event_name }) : t('events.detail')}>
        {failed && (
          <RoleGuard permission="developers:write">
            <Button onClick={() => retry.mutate()} loading={retry.isPending} disabled={retry.isSuccess}>
              {t('events.retry')}
            </Button>
          </RoleGuard>
        )}
      </PageHeader>
      <ErrorAlert error={event.error ?? retry.error} />
      {retry.isSuccess && (
        <Alert color="green" variant="light" role="status">
          {t('events.retried')}
        </Alert>
      )}
      {event.isPending && <Loading />}
      {e && (
        <>
          {e.last_error && (
            <Card withBorder data-testid="event-failure" style={{ borderColor: 'var(--mantine-color-red-9)' }}>
              <Title order={2} size="h4" mb="xs" c="red.9">
                {e.status === 'processed' ? t('events.earlierFailure') : t('events.failureReason')}
              </Title>
              <Text size="sm" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
                {e.last_error}
              </Text>
            </Card>
          )}
          <Card withBorder>
            <Table>
              <Table.Tbody>
                {(
                  [
                    ['events.status', <EventStatusBadge key="status" status={e.status} />],
                    ['events.eventId', <Code key="id">{e.event_id}</Code>],
                    ['events.participant', e.participant_id],
                    ['events.when', f.dateTime(e.timestamp)],
                    ['events.received', f.dateTime(e.received_at)],
                    ['events.processedAt', f.dateTime(e.processed_at)],
                    ['events.attempts', e.attempts],
                    ['events.idempotencyKey', <Code key="key">{e.idempotency_key}</Code>],
                  ] as const
                ).map(([label, value]) => (
                  <Table.Tr key={label}>
                    <Table.Th scope="row" w={220}>
                      {t(label)}
                    </Table.Th>
                    <Table.Td>{value}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            <ZoneNote />
          </Card>
          {e.status !== 'failed' && (
            <Card withBorder data-testid="event-reasons">
              <Title order={2} size="h4" mb="xs">
                {t('events.why')}
              </Title>
              <RuleResults eventName={e.event_name} outcome={e.outcome} />
            </Card>
          )}
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <Json label={t('events.properties')} value={e.properties} />
            <Json label={t('events.outcome')} value={e.outcome} />
          </SimpleGrid>
        </>
      )}
    </Stack>
  );
}
