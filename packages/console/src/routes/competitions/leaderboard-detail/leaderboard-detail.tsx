import { Anchor, Button, Card, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useDeleteLeaderboard, useLeaderboard, useRefreshLeaderboard, useStandings } from '../../../hooks/api/leaderboards';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';
import { LeaderboardSettings } from './components/leaderboard-settings';

export function LeaderboardDetail() {
  const { t } = useTranslation();
  const code = useParams().code!;
  const navigate = useNavigate();
  const board = useLeaderboard(code);
  const standings = useStandings(code);
  const remove = useDeleteLeaderboard();
  const refresh = useRefreshLeaderboard();
  const f = useFormat();
  if (board.isPending) return <Loading />;
  if (board.error) return <ErrorAlert error={board.error} />;
  const b = board.data;
  const rows = standings.data?.entries ?? [];
  return (
    <Stack>
      <Anchor component={Link} to="/competitions/leaderboards">
        {t('leaderboards.back')}
      </Anchor>
      <PageHeader title={b.name}>
        <RoleGuard permission="programs:write">
          <Button variant="default" loading={refresh.isPending} onClick={() => refresh.mutate(code)}>
            {t('leaderboards.refresh')}
          </Button>
          <ConfirmButton
            variant="outline"
            label={t('common.delete')}
            title={t('leaderboards.deleteTitle')}
            message={t('leaderboards.deleteConfirm', { name: b.name })}
            confirmLabel={t('common.delete')}
            onConfirm={() => remove.mutateAsync(code).then(() => navigate('/competitions/leaderboards'))}
          />
        </RoleGuard>
      </PageHeader>
      <ZoneNote />
      <ErrorAlert error={refresh.error} />
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          {t('leaderboards.standings')}
        </Title>
        <Text size="sm" c="dimmed" mb="sm">
          {t('leaderboards.asOf', { at: f.dateTime(standings.data?.updated_at), count: standings.data?.total_participants ?? 0 })}
        </Text>
        <ErrorAlert error={standings.error} />
        {standings.isPending && <Loading />}
        {standings.data && rows.length === 0 && <Text>{t('leaderboards.empty')}</Text>}
        {rows.length > 0 && (
          <ScrollTable minWidth={480}>
            <Table striped data-testid="standings">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('contests.rank')}</Table.Th>
                  <Table.Th>{t('contests.participant')}</Table.Th>
                  <Table.Th>{t('leaderboards.points')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((row) => (
                  <Table.Tr key={row.participant_id}>
                    <Table.Td>{row.rank}</Table.Td>
                    <Table.Td>{row.display_name ?? row.participant_id}</Table.Td>
                    <Table.Td>{f.number(row.score)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        )}
      </Card>
      <RoleGuard permission="programs:write">
        <LeaderboardSettings key={b.leaderboard_code} board={b} />
      </RoleGuard>
    </Stack>
  );
}
