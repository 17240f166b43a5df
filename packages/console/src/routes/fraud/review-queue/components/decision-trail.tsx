import { List, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useEntryTrail } from '../../../../hooks/api/fraud';
import { ErrorAlert } from '../../../../components/error-alert';
import { Loading } from '../../../../components/loading';
import { useActorName } from '../../../competitions/common/actor';
import { useFormat } from '../../../../lib/format';
import type { QueueItem } from '../queue-item';

/**
 * Who decided an item, when and why, as the API records it; for a contest
 * entry also every move of the entry's status (held, approved, disqualified …).
 */
export function DecisionTrail({ item }: { item: QueueItem }) {
  const { t } = useTranslation();
  const { dateTime: formatTime } = useFormat();
  const entry = useEntryTrail(item.contestId ?? '', item.participantId, item.kind === 'contest_entry');
  // The API names the decider by console user id; the reviewer's own decisions read as theirs.
  const who = useActorName();
  return (
    <div data-testid="decision-trail">
      <List size="sm">
        <List.Item>{t('fraud.trail.held', { at: formatTime(item.createdAt), reasons: item.reasons.map((r) => t(`fraud.signals.${r}`, { defaultValue: r })).join(', ') || '—' })}</List.Item>
        {item.decidedAt && (
          <List.Item>
            {t('fraud.trail.decided', { decision: t(`fraud.statuses.${item.status}`), by: who(item.decidedBy), at: formatTime(item.decidedAt), reason: item.reason ?? '—' })}
          </List.Item>
        )}
        {!item.decidedAt && <List.Item>{t('fraud.trail.undecided')}</List.Item>}
      </List>
      {item.kind === 'contest_entry' && (
        <>
          <Text size="sm" fw={600} mt="xs">
            {t('fraud.trail.entryHistory')}
          </Text>
          {entry.isPending && <Loading />}
          <ErrorAlert error={entry.error} />
          {entry.data && (
            <List size="sm">
              {entry.data.status_history.map((move, index) => (
                <List.Item key={index}>
                  {t('fraud.trail.move', { from: move.from_status ?? '—', to: move.to_status, by: who(move.actor), at: formatTime(move.changed_at), reason: move.reason })}
                </List.Item>
              ))}
            </List>
          )}
        </>
      )}
    </div>
  );
}
