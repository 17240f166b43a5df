import { Card, Text, Timeline, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { Contest } from '../../../../hooks/api/contests';
import { useFormat } from '../../../../lib/format';

const ORDER: Contest['status'][] = ['draft', 'scheduled', 'active', 'scoring', 'completed'];

/**
 * The contest's lifecycle: each status with the time it was reached, or the
 * time it is due (the server moves the contest at starts_at and ends_at). The
 * current status is drawn apart from the ones reached before it (a ring
 * inside its bullet, its title in bold) and named by `aria-current`.
 */
export function LifecycleTimeline({ contest }: { contest: Contest }) {
  const { t } = useTranslation();
  const { dateTime: formatTime } = useFormat();
  const reached: Record<Contest['status'], string | null> = {
    draft: contest.created_at,
    scheduled: contest.published_at,
    active: contest.activated_at,
    scoring: contest.scoring_started_at,
    completed: contest.completed_at,
  };
  const due: Partial<Record<Contest['status'], string>> = { active: contest.starts_at, scoring: contest.ends_at };
  const current = ORDER.indexOf(contest.status);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('contests.timeline')}
      </Title>
      <Timeline active={current} bulletSize={18} lineWidth={2} data-testid="contest-timeline" color="blue.9">
        {ORDER.map((status, index) => {
          const at = reached[status];
          const planned = due[status];
          const isCurrent = index === current;
          return (
            <Timeline.Item
              key={status}
              title={<Text fw={isCurrent ? 700 : 500}>{t(`competitions.status.${status}`)}</Text>}
              bullet={isCurrent ? <span className="timeline-current" data-testid="timeline-current" /> : undefined}
              aria-current={isCurrent ? 'step' : undefined}
            >
              <Text size="sm">
                {at ? t('contests.reachedAt', { at: formatTime(at) }) : planned ? t('contests.dueAt', { at: formatTime(planned) }) : t('contests.notYet')}
              </Text>
              {status === 'completed' && contest.verification_ends_at && (
                <Text size="sm">{t('contests.verificationEnds', { at: formatTime(contest.verification_ends_at) })}</Text>
              )}
              {status === 'completed' && contest.prizes_issued_at && <Text size="sm">{t('contests.prizesIssued', { at: formatTime(contest.prizes_issued_at) })}</Text>}
            </Timeline.Item>
          );
        })}
      </Timeline>
    </Card>
  );
}
