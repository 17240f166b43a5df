import { Anchor, Button, Card, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { useContest, useContestLeaderboard } from '../../../hooks/api/contests';
import { useReviews } from '../../../hooks/api/fraud';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { StatusBadge } from '../common/status-badge';
import { useFormat, ZoneNote } from '../../../lib/format';
import { ContestPublication } from './components/contest-publication';
import { LifecycleTimeline } from './components/lifecycle-timeline';
import { ContestLeaderboard } from './components/contest-leaderboard';
import { PrizeFulfilment } from './components/prize-fulfilment';
import { ResultsExport } from './components/results-export';

export function ContestDetail() {
  const { t } = useTranslation();
  const f = useFormat();
  const contestId = useParams().contestId!;
  const contest = useContest(contestId);
  const started = contest.data !== undefined && contest.data.status !== 'draft' && contest.data.status !== 'scheduled';
  const board = useContestLeaderboard(contestId, started);
  const readsFraud = useCan('fraud:read');
  const completed = contest.data?.status === 'completed';
  const disqualified = useReviews({ contest_id: contestId, status: 'disqualified' }, completed && readsFraud);
  if (contest.isPending) return <Loading />;
  if (contest.error) return <ErrorAlert error={contest.error} />;
  const c = contest.data;
  return (
    <Stack>
      <Anchor component={Link} to="/competitions/contests">
        {t('contests.back')}
      </Anchor>
      <PageHeader title={c.title}>
        <StatusBadge status={c.status} />
        {c.status !== 'completed' && (
          <RoleGuard permission="programs:write">
            <Button variant="default" component={Link} to={`/competitions/contests/${encodeURIComponent(c.id)}/edit`}>
              {t('contests.edit')}
            </Button>
          </RoleGuard>
        )}
        <ContestPublication contest={c} />
      </PageHeader>
      <ZoneNote />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <LifecycleTimeline contest={c} />
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('contests.definition')}
          </Title>
          <Stack gap={4}>
            <Text>{t('contests.scoringLine', { event: c.scoring.event_type, attribute: c.scoring.score_attribute, weight: c.scoring.weight })}</Text>
            <Text>{t('contests.windowLine', { from: f.dateTime(c.starts_at), to: f.dateTime(c.ends_at) })}</Text>
            <Text>{t('contests.liabilityLine', { allocated: f.number(c.liability_allocated), max: f.number(c.max_reward_liability) })}</Text>
            <Text>{t('contests.verificationLine', { hours: c.verification_window_hours })}</Text>
            <Text>{t('contests.entriesLine', { count: c.entry_count })}</Text>
            {c.prize_structure.map((p, index) => (
              <Text key={index} size="sm">
                {t('contests.prizeLine', { from: p.rank_from, to: p.rank_to, prize: p.reward.name ?? t(`contests.rewardTypes.${p.reward.type}`), value: p.reward.value })}
              </Text>
            ))}
          </Stack>
        </Card>
      </SimpleGrid>
      {!started && <Text c="dimmed">{t('contests.leaderboardLater')}</Text>}
      <ErrorAlert error={board.error} />
      {board.data && <ContestLeaderboard board={board.data} />}
      {board.data && <PrizeFulfilment contest={c} board={board.data} disqualified={disqualified.data?.reviews ?? []} />}
      {started && <ResultsExport contest={c} />}
    </Stack>
  );
}
