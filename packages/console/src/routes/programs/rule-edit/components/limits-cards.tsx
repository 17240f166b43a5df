import { Card, Checkbox, NumberInput, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { CAP_PERIODS, type RuleDraft } from '../../common/rule-draft';

interface CardProps {
  draft: RuleDraft;
  set: (patch: Partial<RuleDraft>) => void;
  readOnly: boolean;
}

/** Caps per participant (per day, per ISO week, lifetime; times and points) and the rule's total budget. */
export function LimitsCard({ draft, set, readOnly }: CardProps) {
  const { t } = useTranslation();
  const setCap = (period: (typeof CAP_PERIODS)[number], field: 'times' | 'points', value: number | string) =>
    set({ caps: { ...draft.caps, [period]: { ...draft.caps[period], [field]: value } } });
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb={4}>
        {t('rules.sections.limits')}
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        {t('rules.capsHelp')}
      </Text>
      <SimpleGrid cols={{ base: 2, sm: 3 }}>
        {CAP_PERIODS.map((period) => (
          <Stack key={period} gap="xs">
            <NumberInput
              label={t('rules.capTimes', { period: t(`rules.capPeriods.${period}`) })}
              min={1}
              allowDecimal={false}
              value={draft.caps[period].times}
              onChange={(value) => setCap(period, 'times', value)}
              readOnly={readOnly}
            />
            <NumberInput
              label={t('rules.capPoints', { period: t(`rules.capPeriods.${period}`) })}
              min={1}
              allowDecimal={false}
              value={draft.caps[period].points}
              onChange={(value) => setCap(period, 'points', value)}
              readOnly={readOnly}
            />
          </Stack>
        ))}
      </SimpleGrid>
      <NumberInput
        mt="md"
        label={t('rules.budgetPoints')}
        description={t('rules.budgetHelp')}
        min={1}
        allowDecimal={false}
        thousandSeparator=","
        value={draft.budget_points}
        onChange={(value) => set({ budget_points: value })}
        readOnly={readOnly}
        maw={320}
      />
    </Card>
  );
}

/** When the rule may apply (its window, in the browser's time zone), and its order among the rules. */
export function WindowCard({ draft, set, readOnly }: CardProps) {
  const { t } = useTranslation();
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('rules.sections.window')}
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <TextInput type="datetime-local" label={t('rules.startsAt')} description={t('rules.windowHelp')} value={draft.starts_at} onChange={(e) => set({ starts_at: e.currentTarget.value })} readOnly={readOnly} />
        <TextInput type="datetime-local" label={t('rules.endsAt')} description={t('rules.windowHelp')} value={draft.ends_at} onChange={(e) => set({ ends_at: e.currentTarget.value })} readOnly={readOnly} />
        <NumberInput label={t('rules.priority')} description={t('rules.priorityHelp')} min={-1000} max={1000} allowDecimal={false} value={draft.priority} onChange={(value) => set({ priority: value })} readOnly={readOnly} />
      </SimpleGrid>
      <Checkbox mt="md" label={t('rules.stopProcessing')} checked={draft.stop_processing} onChange={(e) => set({ stop_processing: e.currentTarget.checked })} disabled={readOnly} />
    </Card>
  );
}
