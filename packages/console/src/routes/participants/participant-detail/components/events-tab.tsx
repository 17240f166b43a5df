import { Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useParticipantEvents } from '../../../../hooks/api/participants';
import { ErrorAlert } from '../../../../components/error-alert';
import { Pager, useCursorPages } from '../../../../components/pager';
import { ScrollTable } from '../../../../components/loading';
import { useFormat } from '../../../../lib/format';
import { EventStatusBadge } from '../../../developers/common/event-status';

/** The participant's events, newest first, with what processing did: the points earned and the rules that applied. */
export function EventsTab({ participantId }: { participantId: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const events = useParticipantEvents(participantId, pages.cursor);
  const rows = events.data?.events ?? [];
  return (
    <>
      <ErrorAlert error={events.error} />
      {events.data && rows.length === 0 && <Text>{t('participant.noEvents')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={600}>
          <Table striped data-testid="events">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('events.when')}</Table.Th>
                <Table.Th>{t('events.name')}</Table.Th>
                <Table.Th>{t('events.status')}</Table.Th>
                <Table.Th>{t('events.points')}</Table.Th>
                <Table.Th>{t('events.rules')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((event) => {
                const applied = (event.outcome?.rules ?? []).filter((rule) => rule.result === 'applied');
                return (
                  <Table.Tr key={event.event_id}>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{f.dateTime(event.timestamp)}</Table.Td>
                    <Table.Td>{event.event_name}</Table.Td>
                    <Table.Td>
                      <EventStatusBadge status={event.status} />
                    </Table.Td>
                    <Table.Td>{event.outcome ? f.number(event.outcome.points_awarded) : t('events.none')}</Table.Td>
                    <Table.Td>{applied.length > 0 ? applied.map((rule) => rule.rule_name).join(', ') : t('events.none')}</Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={events.data?.next_cursor} />
    </>
  );
}
