import { Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useChallengeAction, type Challenge, type ChallengeAction } from '../../../hooks/api/challenges';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard, useCan } from '../../../components/permission';
import { PublicationControls } from '../../../components/publication-controls';

/** Which moves each status allows (the server refuses the others with a 409). */
const ACTIONS: Record<Challenge['status'], ChallengeAction[]> = {
  draft: ['publish', 'archive'],
  scheduled: ['end', 'archive'],
  active: ['end', 'archive'],
  ended: ['archive'],
  archived: [],
};

/**
 * A challenge's lifecycle controls for a publisher; for a drafts-only
 * marketer the review request of the publishing flow.
 */
export function ChallengePublication({ challenge }: { challenge: Challenge }) {
  const { t } = useTranslation();
  const act = useChallengeAction();
  // Without the publishing permission a draft goes to a publisher through a review request.
  if (!useCan('programs:publish')) {
    return (
      <RoleGuard permission="programs:write">
        <PublicationControls kind="challenge" id={challenge.id} status={challenge.status} name={challenge.name} />
      </RoleGuard>
    );
  }
  return (
    <RoleGuard permission="programs:publish">
      <Group>
        {ACTIONS[challenge.status].map((action) => (
          <ConfirmButton
            key={action}
            label={t(`challenges.actions.${action}`)}
            title={t(`challenges.actions.${action}Title`)}
            message={t(`challenges.actions.${action}Confirm`, { name: challenge.name })}
            confirmLabel={t(`challenges.actions.${action}`)}
            destructive={action !== 'publish'}
            variant={action === 'publish' ? 'filled' : 'outline'}
            onConfirm={() => act.mutateAsync({ id: challenge.id, action })}
          />
        ))}
      </Group>
    </RoleGuard>
  );
}
