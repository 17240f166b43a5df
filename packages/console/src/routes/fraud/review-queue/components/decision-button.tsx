import { useState } from 'react';
import { Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ConfirmButton } from '../../../../components/confirm-button';

/** Reasons are kept with the decision in the trail; the API bounds them. */
const REASON_LENGTH_MAX = 500;

/**
 * One decision on a held item (approve, or disqualify / reject), confirmed in
 * a dialog that asks why: the reason is what the decision trail shows later.
 */
export function DecisionButton({
  approve,
  subject,
  onDecide,
}: {
  approve: boolean;
  subject: string;
  onDecide: (reason: string) => Promise<unknown>;
}) {
  const { t } = useTranslation();
  const [reason, setReason] = useState('');
  const kind = approve ? 'approve' : 'disqualify';
  return (
    <ConfirmButton
      size="compact-sm"
      variant={approve ? 'filled' : 'outline'}
      destructive={!approve}
      label={t(`fraud.${kind}`)}
      aria-label={t(`fraud.${kind}Named`, { subject })}
      title={t(`fraud.${kind}Title`)}
      message={t(`fraud.${kind}Confirm`, { subject })}
      confirmLabel={t(`fraud.${kind}`)}
      confirmDisabled={reason.trim() === ''}
      onConfirm={() => onDecide(reason.trim()).then(() => setReason(''))}
    >
      <Textarea label={t('fraud.reason')} value={reason} maxLength={REASON_LENGTH_MAX} onChange={(e) => setReason(e.currentTarget.value)} required data-autofocus />
    </ConfirmButton>
  );
}
