import { useEffect } from 'react';
import { Alert, Button, Card, Group, Radio, Stack, Text, TextInput, Title } from '@mantine/core';
import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { usePointsSettings, useUpdatePointsSettings } from '../../../hooks/api/points-settings';
import { useTenant } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { registerStrings } from '../../../lib/area';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { useFormat, ZoneNote } from '../../../lib/format';
import { pointValueStrings } from './strings';
import { pointValueStringsDe } from './strings.de';

registerStrings(pointValueStrings, pointValueStringsDe);

const POLICIES = ['fifo', 'lifo', 'none'] as const;
type Policy = (typeof POLICIES)[number];

interface SettingsValues {
  expiry_policy: Policy;
  default_ttl_days: number | undefined;
  reminder_days: string;
  currency_name: string;
  point_value: number | undefined;
}

/** "60, 30, 7" to [60, 30, 7]; a part that is not a whole number is sent as it is and the server names it. */
function parseDays(text: string): number[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : (part as unknown as number)));
}

/**
 * The tenant's expiry policy, the lifetime of newly granted points, the expiry
 * reminders (points.expiring.v1), the points' name and the point value (money
 * per point, in the tenant's currency). The point value is shown only to who
 * may change it; the overview shows its effect to every reader.
 */
export function PointsSettings() {
  const { t } = useTranslation();
  const f = useFormat();
  const settings = usePointsSettings();
  const tenant = useTenant();
  const update = useUpdatePointsSettings();
  const canWrite = useCan('programs:write');
  const currency = tenant.data?.currency ?? '';
  const form = useApiForm<SettingsValues>('updatePointsSettings', {
    defaultValues: { expiry_policy: 'fifo', default_ttl_days: 365, reminder_days: '', currency_name: '', point_value: undefined },
  });
  const { reset } = form;

  useEffect(() => {
    const s = settings.data;
    if (!s) return;
    reset({ expiry_policy: s.expiry_policy, default_ttl_days: s.default_ttl_days, reminder_days: s.reminder_days.join(', '), currency_name: s.currency_name, point_value: s.point_value ?? undefined });
  }, [settings.data, reset]);

  if (settings.isPending) return <Loading />;
  const policy = form.watch('expiry_policy');
  const saved = settings.data?.point_value ?? null;
  return (
    <Stack>
      <PageHeader title={t('pointsSettings.title')} />
      <ErrorAlert error={settings.error} />
      {settings.data && (
        <Card withBorder maw={720}>
          <form
            noValidate
            onSubmit={form.submit((values) =>
              update.mutateAsync({
                expiry_policy: values.expiry_policy,
                ...(values.expiry_policy === 'none' ? {} : { default_ttl_days: values.default_ttl_days }),
                reminder_days: parseDays(values.reminder_days),
                currency_name: values.currency_name.trim(),
                ...(canWrite ? { point_value: values.point_value ?? null } : {}),
              }),
            )}
          >
            <Stack>
              <Controller
                control={form.control}
                name="expiry_policy"
                render={({ field }) => (
                  <Radio.Group label={t('pointsSettings.policy')} description={t('pointsSettings.policyHelp')} value={field.value} onChange={(value) => field.onChange(value as Policy)} error={form.errorOf('expiry_policy')}>
                    <Stack gap="xs" mt="xs">
                      {POLICIES.map((value) => (
                        <Radio key={value} value={value} label={t(`pointsSettings.policies.${value}`)} disabled={!canWrite} />
                      ))}
                    </Stack>
                  </Radio.Group>
                )}
              />
              <TextInput label={t('pointsSettings.ttl')} {...form.field('default_ttl_days', { number: true })} readOnly={!canWrite} disabled={policy === 'none'} maw={240} />
              <div>
                <Title order={2} size="h4">
                  {t('pointsSettings.reminders')}
                </Title>
                <Text size="sm" c="dimmed" mb="xs">
                  {t('pointsSettings.remindersHelp')}
                </Text>
                <TextInput label={t('pointsSettings.reminderDays')} {...form.field('reminder_days')} readOnly={!canWrite} maw={320} />
              </div>
              <TextInput label={t('pointsSettings.currency')} {...form.field('currency_name')} readOnly={!canWrite} maw={320} />
              {canWrite && (
                <div>
                  <Title order={2} size="h4">
                    {t('pointValue.title')}
                  </Title>
                  <Text size="sm" c="dimmed" mb="xs">
                    {t('pointValue.explain')}
                  </Text>
                  <TextInput
                    label={t('pointValue.label', { currency })}
                    {...form.field('point_value', { number: true })}
                    step="any"
                    maw={320}
                  />
                  <Text size="xs" c="dimmed" mt={4}>
                    {t('pointValue.example', { currency })}
                  </Text>
                  <Text size="sm" mt="xs" data-testid="point-value-now">
                    {saved === null ? t('pointValue.none') : t('pointValue.current', { value: f.money(saved, currency), thousand: f.money(saved * 1000, currency) })}
                  </Text>
                </div>
              )}
              {settings.data.updated_at && (
                <>
                  <Text size="sm" c="dimmed">
                    {t('pointsSettings.updatedAt', { at: f.dateTime(settings.data.updated_at) })}
                  </Text>
                  <ZoneNote />
                </>
              )}
              <FormErrors form={form} />
              {update.isSuccess && !form.refusal && (
                <Alert color="teal" role="status">
                  {t('pointsSettings.saved')}
                </Alert>
              )}
              {canWrite && (
                <Group>
                  <Button type="submit" loading={form.formState.isSubmitting}>
                    {t('pointsSettings.save')}
                  </Button>
                </Group>
              )}
            </Stack>
          </form>
        </Card>
      )}
    </Stack>
  );
}
