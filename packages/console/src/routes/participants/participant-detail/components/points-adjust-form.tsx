import { useState } from 'react';
import { Alert, Card, Group, NumberInput, SegmentedControl, Stack, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useAdjustPoints } from '../../../../hooks/api/participants';
import { ConfirmButton } from '../../../../components/confirm-button';

/** A manual grant or deduction with a reason, confirmed before it is sent. */
export function PointsAdjustForm({ participantId, currency }: { participantId: string; currency: string }) {
  const { t } = useTranslation();
  const adjust = useAdjustPoints();
  const [direction, setDirection] = useState<'grant' | 'deduct'>('grant');
  const [amount, setAmount] = useState<number | string>('');
  const [reason, setReason] = useState('');
  const [memo, setMemo] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const valid = typeof amount === 'number' && amount > 0 && reason.trim() !== '';
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('adjust.title')}
      </Title>
      <Stack>
        <SegmentedControl
          aria-label={t('adjust.direction')}
          value={direction}
          onChange={(value) => setDirection(value as 'grant' | 'deduct')}
          data={[
            { value: 'grant', label: t('adjust.grant') },
            { value: 'deduct', label: t('adjust.deduct') },
          ]}
        />
        <NumberInput label={t('adjust.amount', { currency })} min={1} allowDecimal={false} value={amount} onChange={setAmount} required />
        <TextInput label={t('adjust.reason')} description={t('adjust.reasonHelp')} value={reason} onChange={(e) => setReason(e.currentTarget.value)} required maxLength={200} />
        <TextInput label={t('adjust.memo')} value={memo} onChange={(e) => setMemo(e.currentTarget.value)} maxLength={500} />
        {done && (
          <Alert color="green" role="status">
            {done}
          </Alert>
        )}
        <Group>
          <ConfirmButton
            label={direction === 'grant' ? t('adjust.grant') : t('adjust.deduct')}
            destructive={direction === 'deduct'}
            disabled={!valid}
            title={t('adjust.confirmTitle')}
            message={t(direction === 'grant' ? 'adjust.confirmGrant' : 'adjust.confirmDeduct', { amount: String(amount), currency, participant: participantId, reason })}
            confirmLabel={t('common.confirm')}
            onConfirm={async () => {
              setDone(null);
              const result = await adjust.mutateAsync({ direction, participant_id: participantId, amount: Number(amount), reason: reason.trim(), memo: memo.trim() || undefined });
              setDone(t('adjust.done', { available: result.available, currency }));
              setAmount('');
              setReason('');
              setMemo('');
            }}
          />
        </Group>
      </Stack>
    </Card>
  );
}
