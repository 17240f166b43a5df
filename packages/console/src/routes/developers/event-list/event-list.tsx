import { useState } from 'react';
import { Anchor, Card, Group, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useIngestedEvents, type EventStatus } from '../../../hooks/api/events';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { Loading, ScrollTable } from '../../../components/loading';
import { EVENT_STATUSES, EventStatusBadge } from '../common/event-status';
import { useFormat, ZoneNote } from '../../../lib/format';
import { outcomeSummary } from '../common/rule-results';

/** The reason column shows the start of a failure; the event's page shows all of it. */
const REASON_CHARS_MAX = 80;

export function EventList() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const [status, setStatus] = useState<EventStatus | undefined>(undefined);
  const [eventName, setEventName] = useState('');
  const [participant, setParticipant] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const events = useIngestedEvents({ status, event_name: eventName.trim(), participant_id: participant.trim(), from: f.fromZonedInput(from) || undefined, to: f.fromZonedInput(to) || undefined, cursor: pages.cursor });
  const rows = events.data?.events ?? [];
  const filter = <T,>(set: (value: T) => void) => (value: T) => {
    pages.reset();
    set(value);
  };
  return (
    <Stack>
      <PageHeader title={t('events.title')} />
      <Text c="dimmed" size="sm">
        {t('events.intro')}
      </Text>
      <Card withBorder>
        <Group align="flex-end" wrap="wrap">
          <Select
            label={t('events.status')}
            clearable
            data={EVENT_STATUSES.map((s) => ({ value: s, label: t(`events.statuses.${s}`) }))}
            value={status ?? null}
            onChange={(value) => filter(setStatus)((value ?? undefined) as EventStatus | undefined)}
          />
          <TextInput label={t('events.eventName')} value={eventName} onChange={(e) => filter(setEventName)(e.currentTarget.value)} />
          <TextInput label={t('events.participant')} value={participant} onChange={(e) => filter(setParticipant)(e.currentTarget.value)} />
          <TextInput label={t('events.from')} type="datetime-local" value={from} onChange={(e) => filter(setFrom)(e.currentTarget.value)} />
          <TextInput label={t('events.to')} type="datetime-local" value={to} onChange={(e) => filter(setTo)(e.currentTarget.value)} />
        </Group>
        <ZoneNote />
      </Card>
      <ErrorAlert error={events.error} />
      {events.isPending && <Loading />}
      {events.data && rows.length === 0 && <Text>{t('events.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={900}>
          <Table striped data-testid="ingested-events">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('events.when')}</Table.Th>
                <Table.Th>{t('events.eventName')}</Table.Th>
                <Table.Th>{t('events.participant')}</Table.Th>
                <Table.Th>{t('events.status')}</Table.Th>
                <Table.Th>{t('events.attempts')}</Table.Th>
                <Table.Th>{t('events.earned')}</Table.Th>
                <Table.Th>{t('events.reason')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((event) => (
                <Table.Tr key={event.event_id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/developers/ingested-events/${event.event_id}`} aria-label={t('events.open', { name: event.event_name, when: f.dateTime(event.timestamp) })}>
                      {f.dateTime(event.timestamp)}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{event.event_name}</Table.Td>
                  <Table.Td>{event.participant_id}</Table.Td>
                  <Table.Td>
                    <EventStatusBadge status={event.status} />
                  </Table.Td>
                  <Table.Td>{event.attempts}</Table.Td>
                  <Table.Td>{outcomeSummary(t, event.outcome)}</Table.Td>
                  <Table.Td>{event.last_error ? (event.last_error.length > REASON_CHARS_MAX ? `${event.last_error.slice(0, REASON_CHARS_MAX)}…` : event.last_error) : '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={events.data?.next_cursor} />
    </Stack>
  );
}
