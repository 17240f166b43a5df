import { useId, type ReactNode } from 'react';
import { Alert } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useCan, useCurrentUser } from '../../../../components/permission';

/**
 * Whether the signed-in role may decide held items. A role that reads them
 * without `fraud:decide` (the analyst) sees the decision buttons disabled,
 * each described by one note saying why (`disabledReasonId`, `note`).
 */
export function useDecisionLock(): { canDecide: boolean; disabledReasonId: string | undefined; note: ReactNode } {
  const { t } = useTranslation();
  const canDecide = useCan('fraud:decide');
  const { user } = useCurrentUser();
  const id = useId();
  if (canDecide) return { canDecide, disabledReasonId: undefined, note: null };
  return {
    canDecide,
    disabledReasonId: id,
    note: (
      <Alert color="gray" variant="light" id={id} data-testid="read-only-note">
        {t('fraud.readOnly', { role: t(`roles.${user.role}`) })}
      </Alert>
    ),
  };
}
