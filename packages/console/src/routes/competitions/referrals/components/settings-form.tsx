import { Button, Card, Checkbox, Group, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useFieldArray } from 'react-hook-form';
import { useSaveReferralSettings, type ReferralSettings } from '../../../../hooks/api/referrals';
import { useCan } from '../../../../components/permission';
import { FormErrors, useApiForm } from '../../../../lib/forms';
import { BadgePicker } from '../../common/pickers';

interface MilestoneValues {
  conversions: number | undefined;
  points: number | undefined;
  badge_code: string;
}
interface SettingsValues {
  velocity_per_hour: number | undefined;
  velocity_per_day: number | undefined;
  review_same_device: boolean;
  review_same_ip: boolean;
  milestones: MilestoneValues[];
}

function valuesOf(settings: ReferralSettings): SettingsValues {
  return {
    velocity_per_hour: settings.velocity_per_hour,
    velocity_per_day: settings.velocity_per_day,
    review_same_device: settings.review_same_device,
    review_same_ip: settings.review_same_ip,
    milestones: settings.milestones.map((m) => ({ conversions: m.conversions, points: m.points ?? undefined, badge_code: m.badge_code ?? '' })),
  };
}

const OPERATION = 'updateReferralSettings';

/** The referral fraud thresholds and the referrer milestones (a badge picked by its name). */
export function SettingsForm({ settings }: { settings: ReferralSettings }) {
  const { t } = useTranslation();
  const save = useSaveReferralSettings();
  const canWrite = useCan('programs:write');
  const form = useApiForm<SettingsValues>(OPERATION, { defaultValues: valuesOf(settings) });
  const milestones = useFieldArray({ control: form.control, name: 'milestones' });
  const submit = form.submit((values) =>
    save.mutateAsync({
      velocity_per_hour: values.velocity_per_hour,
      velocity_per_day: values.velocity_per_day,
      review_same_device: values.review_same_device,
      review_same_ip: values.review_same_ip,
      milestones: values.milestones.map((m) => ({
        conversions: m.conversions as number,
        ...(m.badge_code ? { badge_code: m.badge_code } : {}),
        ...(m.points !== undefined ? { points: m.points } : {}),
      })),
    }),
  );
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('referrals.settings')}
      </Title>
      <form onSubmit={submit} noValidate>
        <Stack>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label={t('referrals.perHour')} {...form.field('velocity_per_hour', { number: true })} disabled={!canWrite} />
            <TextInput label={t('referrals.perDay')} {...form.field('velocity_per_day', { number: true })} disabled={!canWrite} />
            <Checkbox label={t('referrals.sameDevice')} {...form.register('review_same_device')} disabled={!canWrite} />
            <Checkbox label={t('referrals.sameIp')} {...form.register('review_same_ip')} disabled={!canWrite} />
          </SimpleGrid>
          <Title order={3} size="h5">
            {t('referrals.milestones')}
          </Title>
          {milestones.fields.length === 0 && <Text c="dimmed">{t('referrals.noMilestones')}</Text>}
          {milestones.fields.map((milestone, index) => (
            <Group key={milestone.id} align="flex-start" wrap="wrap">
              <TextInput label={t('referrals.milestoneConversions', { n: index + 1 })} {...form.field(`milestones.${index}.conversions`, { number: true })} disabled={!canWrite} />
              <TextInput label={t('referrals.milestonePoints')} {...form.field(`milestones.${index}.points`, { number: true })} disabled={!canWrite} />
              <BadgePicker form={form} operation={OPERATION} name={`milestones.${index}.badge_code`} label={t('referrals.milestoneBadge')} disabled={!canWrite} />
              {canWrite && (
                <Button variant="outline" color="red.9" mt={24} onClick={() => milestones.remove(index)}>
                  {t('referrals.removeMilestone', { n: index + 1 })}
                </Button>
              )}
            </Group>
          ))}
          <FormErrors form={form} />
          {canWrite && (
            <Group>
              <Button variant="default" onClick={() => milestones.append({ conversions: 1, points: 100, badge_code: '' })}>
                {t('referrals.addMilestone')}
              </Button>
              <Button type="submit" loading={form.formState.isSubmitting}>
                {t('referrals.save')}
              </Button>
              {save.isSuccess && !form.refusal && <Text role="status">{t('referrals.saved')}</Text>}
            </Group>
          )}
        </Stack>
      </form>
    </Card>
  );
}
