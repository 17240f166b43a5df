import { useState } from 'react';
import { Button, Group, Modal, Stack, Text, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { FormErrors, useApiForm } from '../../../../lib/forms';

/** Where a decision's reason goes: the contest review's `reason`, or the referral conversion's `note`. */
export type DecisionTarget = { operation: 'decideFraudReview'; pointer: '/reason' } | { operation: 'approveReferralConversion' | 'rejectReferralConversion'; pointer: '/note' };

export const REVIEW_DECISION: DecisionTarget = { operation: 'decideFraudReview', pointer: '/reason' };
export const conversionDecision = (approve: boolean): DecisionTarget => ({ operation: approve ? 'approveReferralConversion' : 'rejectReferralConversion', pointer: '/note' });

/**
 * One decision on a held item (approve, or disqualify / reject), confirmed in
 * a dialog that asks why: the reason is what the decision trail shows later,
 * and its length is the service's rule, shown under the field before it is
 * broken. A role that may see the item but not decide gets the button
 * disabled, described by the reason (`disabledReasonId`).
 */
export function DecisionButton({
  approve,
  subject,
  target,
  onDecide,
  disabledReasonId,
}: {
  approve: boolean;
  subject: string;
  target: DecisionTarget;
  onDecide: (reason: string) => Promise<unknown>;
  /** The id of the text saying why this role may not decide; the button is disabled when given. */
  disabledReasonId?: string;
}) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const form = useApiForm<{ reason: string }>(target.operation, { defaultValues: { reason: '' } });
  const kind = approve ? 'approve' : 'disqualify';
  const close = () => {
    setOpen(false);
    form.reset();
    form.clearRefusal();
  };
  return (
    <>
      <Button
        size="compact-sm"
        variant={approve ? 'filled' : 'outline'}
        color={approve ? undefined : 'red.9'}
        aria-label={t(`fraud.${kind}Named`, { subject })}
        disabled={disabledReasonId !== undefined}
        aria-describedby={disabledReasonId}
        onClick={() => setOpen(true)}
      >
        {t(`fraud.${kind}`)}
      </Button>
      <Modal opened={open} onClose={close} title={t(`fraud.${kind}Title`)} centered closeButtonProps={{ 'aria-label': t('common.close') }}>
        <form
          noValidate
          onSubmit={form.submit(async ({ reason }) => {
            await onDecide(reason.trim());
            close();
          })}
        >
          <Stack>
            <Text>{t(`fraud.${kind}Confirm`, { subject })}</Text>
            <Textarea label={t('fraud.reason')} autosize minRows={2} {...form.field('reason', { required: true, pointer: target.pointer })} data-autofocus />
            <FormErrors form={form} />
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                {t('common.cancel')}
              </Button>
              <Button type="submit" color={approve ? undefined : 'red.9'} loading={form.formState.isSubmitting}>
                {t(`fraud.${kind}`)}
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  );
}
