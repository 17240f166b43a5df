import { useState } from 'react';
import { Anchor, Button, Card, Group, NumberInput, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useLeaderboards, useSaveLeaderboard } from '../../../hooks/api/leaderboards';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { formatTime } from '../common/dates';

type Metric = 'lifetime_points' | 'period_points';

export function LeaderboardList() {
  const { t } = useTranslation();
  const boards = useLeaderboards();
  const create = useSaveLeaderboard(undefined);
  const [code, setCode] = useState('');
  const [name, setName] = useState('');
  const [metric, setMetric] = useState<Metric>('lifetime_points');
  const [period, setPeriod] = useState<'weekly' | 'monthly'>('weekly');
  const [refresh, setRefresh] = useState<number | string>(30);
  const rows = (boards.data?.leaderboards ?? []).filter((board) => board.status === 'active');
  return (
    <Stack>
      <PageHeader title={t('leaderboards.title')} />
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
                  <Table.Td>{formatTime(board.last_refreshed_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <RoleGuard permission="programs:write">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('leaderboards.create')}
          </Title>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              create.mutate(
                { leaderboard_code: code.trim(), name: name.trim(), metric, ...(metric === 'period_points' ? { period } : {}), refresh_seconds: Number(refresh) },
                { onSuccess: () => { setCode(''); setName(''); } },
              );
            }}
          >
            <Group align="flex-end" wrap="wrap">
              <TextInput label={t('leaderboards.code')} description={t('leaderboards.codeHelp')} value={code} onChange={(e) => setCode(e.currentTarget.value)} required />
              <TextInput label={t('leaderboards.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
              <Select
                label={t('leaderboards.metric')}
                data={(['lifetime_points', 'period_points'] as const).map((value) => ({ value, label: t(`leaderboards.metricNames.${value}`) }))}
                value={metric}
                onChange={(value) => value && setMetric(value as Metric)}
                allowDeselect={false}
              />
              {metric === 'period_points' && (
                <Select
                  label={t('leaderboards.period')}
                  data={(['weekly', 'monthly'] as const).map((value) => ({ value, label: t(`leaderboards.periods.${value}`) }))}
                  value={period}
                  onChange={(value) => value && setPeriod(value as 'weekly' | 'monthly')}
                  allowDeselect={false}
                />
              )}
              <NumberInput label={t('leaderboards.refreshSeconds')} min={1} max={3600} allowDecimal={false} value={refresh} onChange={setRefresh} required />
              <Button type="submit" loading={create.isPending}>
                {t('leaderboards.createSubmit')}
              </Button>
            </Group>
            <ErrorAlert error={create.error} />
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}
