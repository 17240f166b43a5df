import { Card, Checkbox, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { ApiForm } from '../../../../lib/forms';
import { ZoneNote } from '../../../../lib/format';
import { CAP_PERIODS, type RuleDraft } from '../../common/rule-draft';

interface CardProps {
  form: ApiForm<RuleDraft>;
  readOnly: boolean;
}

/** Caps per participant (per day, per ISO week, lifetime; times and points) and the rule's total budget; the limits shown under each field. */
export function LimitsCard({ form, readOnly }: CardProps) {
  const { t } = useTranslation();
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
            <TextInput label={t('rules.capTimes', { period: t(`rules.capPeriods.${period}`) })} {...form.field(`caps.${period}.times`, { number: true })} readOnly={readOnly} />
            <TextInput label={t('rules.capPoints', { period: t(`rules.capPeriods.${period}`) })} {...form.field(`caps.${period}.points`, { number: true })} readOnly={readOnly} />
          </Stack>
        ))}
      </SimpleGrid>
      <TextInput mt="md" label={t('rules.budgetPoints')} {...form.field('budget_points', { number: true })} readOnly={readOnly} maw={320} />
      <Text size="xs" c="dimmed" mt={4}>
        {t('rules.budgetHelp')}
      </Text>
    </Card>
  );
}

/** When the rule may apply (its window, in the tenant's time zone, named), and its order among the rules. */
export function WindowCard({ form, readOnly }: CardProps) {
  const { t } = useTranslation();
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb={4}>
        {t('rules.sections.window')}
      </Title>
      <ZoneNote />
      <SimpleGrid cols={{ base: 1, sm: 2 }} mt="sm">
        <TextInput type="datetime-local" label={t('rules.startsAt')} {...form.field('starts_at')} description={t('rules.windowHelp')} readOnly={readOnly} />
        <TextInput type="datetime-local" label={t('rules.endsAt')} {...form.field('ends_at')} description={t('rules.windowHelp')} readOnly={readOnly} />
        <TextInput label={t('rules.priority')} {...form.field('priority', { number: true })} readOnly={readOnly} />
      </SimpleGrid>
      <Checkbox mt="md" label={t('rules.stopProcessing')} {...form.register('stop_processing')} disabled={readOnly} />
    </Card>
  );
}
