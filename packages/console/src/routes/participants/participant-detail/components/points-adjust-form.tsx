import { useState } from 'react';
import { Alert, Button, Card, Group, Modal, Radio, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller } from 'react-hook-form';
import { useAdjustPoints } from '../../../../hooks/api/participants';
import { FormErrors, useApiForm } from '../../../../lib/forms';
import { useFormat } from '../../../../lib/format';

interface AdjustValues {
  direction: 'grant' | 'deduct';
  amount: number | undefined;
  reason: string;
  memo: string;
}

const DEFAULTS: AdjustValues = { direction: 'grant', amount: undefined, reason: '', memo: '' };

/**
 * A manual grant or deduction with a reason. A deduction is chosen explicitly;
 * the amount is a whole number of points as typed, never clamped (−3 is
 * refused on the field with the service's bound, not turned into 1); the
 * limits are the service's own (the grant's schema), shown under each field.
 * The change is confirmed in a dialog before it is sent.
 */
export function PointsAdjustForm({ participantId, currency }: { participantId: string; currency: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const adjust = useAdjustPoints();
  const form = useApiForm<AdjustValues>('grantPoints', { defaultValues: DEFAULTS });
  const [pending, setPending] = useState<AdjustValues | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const direction = form.watch('direction');
  const send = form.submit(async (values) => {
    setDone(null);
    const result = await adjust.mutateAsync({
      direction: values.direction,
      participant_id: participantId,
      amount: values.amount!,
      reason: values.reason.trim(),
      memo: values.memo.trim() || undefined,
    });
    setDone(t('adjust.done', { available: f.number(result.available), currency }));
    form.reset(DEFAULTS);
  });
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('adjust.title')}
      </Title>
      <form noValidate onSubmit={form.handleSubmit((values) => setPending(values))} aria-label={t('adjust.title')}>
        <Stack>
          <Controller
            control={form.control}
            name="direction"
            render={({ field }) => (
              <Radio.Group label={t('adjust.direction')} value={field.value} onChange={(value) => field.onChange(value)} required>
                <Group mt={4}>
                  <Radio value="grant" label={t('adjust.grant')} />
                  <Radio value="deduct" label={t('adjust.deduct')} />
                </Group>
              </Radio.Group>
            )}
          />
          <TextInput label={t('adjust.amount', { currency })} {...form.field('amount', { number: true, required: true })} />
          <TextInput label={t('adjust.reason')} {...form.field('reason', { required: true })} />
          <TextInput label={t('adjust.memoLabel')} {...form.field('memo')} />
          {done && (
            <Alert color="green" role="status">
              {done}
            </Alert>
          )}
          <FormErrors form={form} />
          <Group>
            <Button type="submit" color={direction === 'deduct' ? 'red.9' : undefined} loading={form.formState.isSubmitting}>
              {direction === 'deduct' ? t('adjust.submitDeduct') : t('adjust.submitGrant')}
            </Button>
          </Group>
        </Stack>
      </form>
      <Modal opened={pending !== null} onClose={() => setPending(null)} title={t('adjust.confirmTitle')} centered closeButtonProps={{ 'aria-label': t('common.close') }}>
        <Stack>
          <Text>
            {pending &&
              t(pending.direction === 'grant' ? 'adjust.confirmGrant' : 'adjust.confirmDeduct', {
                amount: f.number(pending.amount ?? 0),
                currency,
                participant: participantId,
                reason: pending.reason.trim(),
              })}
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setPending(null)}>
              {t('common.cancel')}
            </Button>
            <Button
              color={pending?.direction === 'deduct' ? 'red.9' : undefined}
              onClick={() => {
                setPending(null);
                void send();
              }}
            >
              {t('common.confirm')}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Card>
  );
}
