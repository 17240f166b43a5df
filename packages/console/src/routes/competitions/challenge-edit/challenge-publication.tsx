import { Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useChallengeAction, type Challenge, type ChallengeAction } from '../../../hooks/api/challenges';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard } from '../../../components/permission';

/** Which moves each status allows (the server refuses the others with a 409). */
const ACTIONS: Record<Challenge['status'], ChallengeAction[]> = {
  draft: ['publish', 'archive'],
  scheduled: ['end', 'archive'],
  active: ['end', 'archive'],
  ended: ['archive'],
  archived: [],
};

/**
 * A challenge's lifecycle controls, kept in one component so that a
 * publishing flow with review can replace it without touching the form.
 */
export function ChallengePublication({ challenge }: { challenge: Challenge }) {
  const { t } = useTranslation();
  const act = useChallengeAction();
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
