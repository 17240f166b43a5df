import { Progress, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ScrollTable } from '../../../../components/loading';
import { useFormat } from '../../../../lib/format';

export interface ClaimedReward {
  claim_id?: string;
  reward_id?: string;
  name?: string;
  type?: string;
  code?: string | null;
  claimed_at?: string;
  expires_at?: string | null;
  status?: string;
}

/** Claimed rewards, newest first; the code as the API answers it (`***` without read:pii). */
export function RewardsTab({ rewards }: { rewards: ClaimedReward[] }) {
  const { t } = useTranslation();
  const f = useFormat();
  if (rewards.length === 0) return <Text>{t('participant.noRewards')}</Text>;
  return (
    <ScrollTable minWidth={560}>
      <Table striped data-testid="claimed-rewards">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('claimed.name')}</Table.Th>
            <Table.Th>{t('claimed.code')}</Table.Th>
            <Table.Th>{t('claimed.claimed')}</Table.Th>
            <Table.Th>{t('claimed.expires')}</Table.Th>
            <Table.Th>{t('claimed.status')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rewards.map((reward, i) => (
            <Table.Tr key={reward.claim_id ?? i}>
              <Table.Td>{reward.name ?? reward.reward_id}</Table.Td>
              <Table.Td>
                <Text span ff="monospace">
                  {reward.code ?? t('claimed.noCode')}
                </Text>
              </Table.Td>
              <Table.Td style={{ whiteSpace: 'nowrap' }}>{f.dateTime(reward.claimed_at)}</Table.Td>
              <Table.Td style={{ whiteSpace: 'nowrap' }}>{f.dateTime(reward.expires_at)}</Table.Td>
              <Table.Td>{reward.status ? t(`claimed.statuses.${reward.status}`) : '—'}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </ScrollTable>
  );
}

export interface ChallengeProgress {
  challenge_id?: string;
  name?: string;
  status?: string;
  overall_progress?: number;
  score?: number;
  milestones_reached?: string[];
  enrolled_at?: string;
}

/** The challenges the participant is enrolled in, with their progress. */
export function ChallengesTab({ challenges }: { challenges: ChallengeProgress[] }) {
  const { t } = useTranslation();
  const f = useFormat();
  if (challenges.length === 0) return <Text>{t('participant.noChallenges')}</Text>;
  return (
    <ScrollTable minWidth={560}>
      <Table striped data-testid="challenge-progress">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{t('progress.name')}</Table.Th>
            <Table.Th>{t('progress.progress')}</Table.Th>
            <Table.Th>{t('progress.score')}</Table.Th>
            <Table.Th>{t('progress.milestones')}</Table.Th>
            <Table.Th>{t('progress.enrolled')}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {challenges.map((challenge, i) => {
            const percent = Math.round((challenge.overall_progress ?? 0) * 100);
            return (
              <Table.Tr key={challenge.challenge_id ?? i}>
                <Table.Td>
                  {challenge.name ?? challenge.challenge_id}
                </Table.Td>
                <Table.Td miw={120}>
                  <Text size="sm">{percent}%</Text>
                  <Progress value={percent} size="sm" aria-label={`${challenge.name ?? challenge.challenge_id}: ${percent}%`} />
                </Table.Td>
                <Table.Td>{f.number(challenge.score ?? 0)}</Table.Td>
                <Table.Td>{challenge.milestones_reached?.length ? challenge.milestones_reached.join(', ') : '—'}</Table.Td>
                <Table.Td style={{ whiteSpace: 'nowrap' }}>{f.dateTime(challenge.enrolled_at)}</Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </ScrollTable>
  );
}
