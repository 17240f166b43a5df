import { Button, Card, Group, Select, Stack, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, useWatch } from 'react-hook-form';
import { useSaveLeaderboard, type LeaderboardInput } from '../../../../hooks/api/leaderboards';
import { FormErrors, useApiForm } from '../../../../lib/forms';

type Metric = LeaderboardInput['metric'];
type Period = 'weekly' | 'monthly';

interface LeaderboardValues {
  leaderboard_code: string;
  name: string;
  metric: Metric;
  period: Period;
  refresh_seconds: number | undefined;
}

const DEFAULTS: LeaderboardValues = { leaderboard_code: '', name: '', metric: 'lifetime_points', period: 'weekly', refresh_seconds: 30 };

/** A new progression leaderboard: its code's allowed characters and the refresh's bounds come from the service's schema. */
export function LeaderboardCreate() {
  const { t } = useTranslation();
  const create = useSaveLeaderboard(undefined);
  const form = useApiForm<LeaderboardValues>('createLeaderboard', { defaultValues: DEFAULTS });
  const metric = useWatch({ control: form.control, name: 'metric' });
  const submit = form.submit(async (values) => {
    await create.mutateAsync({
      leaderboard_code: values.leaderboard_code.trim(),
      name: values.name.trim(),
      metric: values.metric,
      ...(values.metric === 'period_points' ? { period: values.period } : {}),
      ...(values.refresh_seconds === undefined ? {} : { refresh_seconds: values.refresh_seconds }),
    } as LeaderboardInput);
    form.reset(DEFAULTS);
  });
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('leaderboards.create')}
      </Title>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Group align="flex-start" wrap="wrap">
            <TextInput label={t('leaderboards.code')} {...form.field('leaderboard_code')} description={t('leaderboards.codeHelp')} />
            <TextInput label={t('leaderboards.name')} {...form.field('name')} />
            <Controller
              control={form.control}
              name="metric"
              render={({ field }) => (
                <Select
                  ref={field.ref}
                  label={t('leaderboards.metric')}
                  data={(['lifetime_points', 'period_points'] as const).map((value) => ({ value, label: t(`leaderboards.metricNames.${value}`) }))}
                  value={field.value}
                  onChange={(value) => value && field.onChange(value)}
                  allowDeselect={false}
                />
              )}
            />
            {metric === 'period_points' && (
              <Controller
                control={form.control}
                name="period"
                render={({ field }) => (
                  <Select
                    ref={field.ref}
                    label={t('leaderboards.period')}
                    data={(['weekly', 'monthly'] as const).map((value) => ({ value, label: t(`leaderboards.periods.${value}`) }))}
                    value={field.value}
                    onChange={(value) => value && field.onChange(value)}
                    allowDeselect={false}
                  />
                )}
              />
            )}
            <TextInput label={t('leaderboards.refreshSeconds')} {...form.field('refresh_seconds', { number: true })} />
          </Group>
          <FormErrors form={form} />
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting}>
              {t('leaderboards.createSubmit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
