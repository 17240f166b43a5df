import { Card, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { ContestLeaderboard as Board } from '../../../../hooks/api/contests';
import { ScrollTable } from '../../../../components/loading';
import { useFormat } from '../../../../lib/format';

export function ContestLeaderboard({ board }: { board: Board }) {
  const { t } = useTranslation();
  const f = useFormat();
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        {t('contests.leaderboard')}
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        {t(board.window === 'final' ? 'contests.windowFinal' : 'contests.windowActive', { count: board.total_entries, at: f.dateTime(board.as_of) })}
      </Text>
      {board.rows.length === 0 ? (
        <Text>{t('contests.noEntries')}</Text>
      ) : (
        <ScrollTable minWidth={560}>
          <Table striped data-testid="contest-leaderboard">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('contests.rank')}</Table.Th>
                <Table.Th>{t('contests.participant')}</Table.Th>
                <Table.Th>{t('contests.score')}</Table.Th>
                <Table.Th>{t('contests.entryStatus')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {board.rows.map((row) => (
                <Table.Tr key={row.entry_id}>
                  <Table.Td>{row.rank}</Table.Td>
                  <Table.Td>
                    {row.display_name ?? row.participant_id}
                    {row.display_name && (
                      <Text span size="xs" c="dimmed">
                        {' '}
                        ({row.participant_id})
                      </Text>
                    )}
                  </Table.Td>
                  <Table.Td>{f.number(row.score)}</Table.Td>
                  <Table.Td>{t(`contests.entryStatuses.${row.status}`)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
    </Card>
  );
}
