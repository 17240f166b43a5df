import { useEffect, useState } from 'react';
import { Anchor, Button, Card, Group, NumberInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useDeleteLeaderboard, useLeaderboard, useRefreshLeaderboard, useSaveLeaderboard, useStandings } from '../../../hooks/api/leaderboards';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { formatTime } from '../common/dates';

export function LeaderboardDetail() {
  const { t } = useTranslation();
  const code = useParams().code!;
  const navigate = useNavigate();
  const board = useLeaderboard(code);
  const standings = useStandings(code);
  const save = useSaveLeaderboard(code);
  const remove = useDeleteLeaderboard();
  const refresh = useRefreshLeaderboard();
  const [name, setName] = useState('');
  const [refreshSeconds, setRefreshSeconds] = useState<number | string>(30);
  useEffect(() => {
    if (!board.data) return;
    setName(board.data.name);
    setRefreshSeconds(board.data.refresh_seconds);
  }, [board.data]);
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
      <ErrorAlert error={refresh.error} />
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          {t('leaderboards.standings')}
        </Title>
        <Text size="sm" c="dimmed" mb="sm">
          {t('leaderboards.asOf', { at: formatTime(standings.data?.updated_at), count: standings.data?.total_participants ?? 0 })}
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
                    <Table.Td>{row.score.toLocaleString()}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        )}
      </Card>
      <RoleGuard permission="programs:write">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('leaderboards.edit')}
          </Title>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              save.mutate({ leaderboard_code: code, name: name.trim(), metric: b.metric as 'lifetime_points', refresh_seconds: Number(refreshSeconds) });
            }}
          >
            <Group align="flex-end" wrap="wrap">
              <TextInput label={t('leaderboards.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
              <NumberInput label={t('leaderboards.refreshSeconds')} min={1} max={3600} allowDecimal={false} value={refreshSeconds} onChange={setRefreshSeconds} required />
              <Button type="submit" loading={save.isPending}>
                {t('leaderboards.save')}
              </Button>
              {save.isSuccess && <Text role="status">{t('leaderboards.saved')}</Text>}
            </Group>
            <ErrorAlert error={save.error} />
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}
