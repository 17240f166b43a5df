import { Card, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { Contest, ContestLeaderboard } from '../../../../hooks/api/contests';
import type { Review } from '../../../../hooks/api/fraud';
import { ScrollTable } from '../../../../components/loading';

/** Entry statuses that say where a winner's prize stands. */
const FULFILMENT: Record<string, string> = {
  winner: 'pendingVerification',
  under_review: 'onHold',
  paid: 'issued',
  unfunded: 'unfunded',
  disqualified: 'disqualified',
};

interface Line {
  rank: number | null;
  participant: string;
  prize: string;
  state: string;
}

/**
 * Who won what and where each prize stands, as far as the API tells it: the
 * final leaderboard's entry statuses, and (for a role that reads the fraud
 * queue) the winners disqualified after review, who leave the ranking.
 */
export function PrizeFulfilment({ contest, board, disqualified }: { contest: Contest; board: ContestLeaderboard; disqualified: Review[] }) {
  const { t } = useTranslation();
  const prizeOf = (rank: number | null) => {
    const tier = rank === null ? undefined : contest.prize_structure.find((p) => rank >= p.rank_from && rank <= p.rank_to);
    return tier ? `${tier.reward.name ?? t(`contests.rewardTypes.${tier.reward.type}`)} (${tier.reward.value})` : '—';
  };
  const lines: Line[] = [
    ...board.rows.filter((row) => FULFILMENT[row.status]).map((row) => ({ rank: row.rank, participant: row.display_name ?? row.participant_id, prize: prizeOf(row.rank), state: FULFILMENT[row.status] })),
    ...disqualified.map((review) => ({ rank: review.final_rank, participant: review.participant_id, prize: prizeOf(review.final_rank), state: 'disqualified' })),
  ];
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        {t('contests.fulfilment')}
      </Title>
      {contest.status !== 'completed' ? (
        <Text>{t('contests.fulfilmentLater')}</Text>
      ) : lines.length === 0 ? (
        <Text>{t('contests.noWinners')}</Text>
      ) : (
        <ScrollTable minWidth={560}>
          <Table striped data-testid="prize-fulfilment">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('contests.rank')}</Table.Th>
                <Table.Th>{t('contests.participant')}</Table.Th>
                <Table.Th>{t('contests.prize')}</Table.Th>
                <Table.Th>{t('contests.prizeState')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {lines.map((line, index) => (
                <Table.Tr key={index}>
                  <Table.Td>{line.rank ?? '—'}</Table.Td>
                  <Table.Td>{line.participant}</Table.Td>
                  <Table.Td>{line.prize}</Table.Td>
                  <Table.Td>{t(`contests.fulfilmentStates.${line.state}`)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
    </Card>
  );
}
