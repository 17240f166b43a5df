import { Anchor, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useLeaderboards } from '../../../hooks/api/leaderboards';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';
import { LeaderboardCreate } from './components/leaderboard-create';

export function LeaderboardList() {
  const { t } = useTranslation();
  const boards = useLeaderboards();
  const f = useFormat();
  const rows = (boards.data?.leaderboards ?? []).filter((board) => board.status === 'active');
  return (
    <Stack>
      <PageHeader title={t('leaderboards.title')} />
      <ZoneNote />
      <ErrorAlert error={boards.error} />
      {boards.isPending && <Loading />}
      {boards.data && rows.length === 0 && <Text>{t('leaderboards.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={640}>
          <Table striped data-testid="leaderboards">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('leaderboards.name')}</Table.Th>
                <Table.Th>{t('leaderboards.code')}</Table.Th>
                <Table.Th>{t('leaderboards.metric')}</Table.Th>
                <Table.Th>{t('leaderboards.refreshEvery')}</Table.Th>
                <Table.Th>{t('leaderboards.lastRefresh')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((board) => (
                <Table.Tr key={board.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/competitions/leaderboards/${board.leaderboard_code}`}>
                      {board.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{board.leaderboard_code}</Table.Td>
                  <Table.Td>{t(`leaderboards.metrics.${board.metric}`, { period: board.period ? t(`leaderboards.periods.${board.period}`) : '' })}</Table.Td>
                  <Table.Td>{t('leaderboards.seconds', { count: board.refresh_seconds })}</Table.Td>
                  <Table.Td>{f.dateTime(board.last_refreshed_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <RoleGuard permission="programs:write">
        <LeaderboardCreate />
      </RoleGuard>
    </Stack>
  );
}
