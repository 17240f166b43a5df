import { Controller, type UseControllerProps } from 'react-hook-form';
import { Button, Card, Group, MultiSelect, Progress, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useBulkReplay, useReplayJob } from '../../../../hooks/api/webhooks';
import { ErrorAlert } from '../../../../components/error-alert';
import { useFormat } from '../../../../lib/format';
import { FormErrors, fieldRule, registerRules, useApiForm } from '../../../../lib/forms';

const REPLAYABLE = ['EXHAUSTED', 'CANCELLED', 'SUCCEEDED'] as const;
type Replayable = (typeof REPLAYABLE)[number];

interface ReplayValues {
  statuses: Replayable[];
  since: string;
}

/** Replays every event whose latest delivery ended in the chosen states, and follows the job to its end. */
export function BulkReplay({ destinationId }: { destinationId: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const form = useApiForm<ReplayValues>('replayWebhookDeliveries', { defaultValues: { statuses: ['EXHAUSTED'], since: '' } });
  // Recording the names with the form is what lets a refusal naming /statuses land on the picker.
  form.field('statuses', { required: true });
  const statusesRules = registerRules(fieldRule('replayWebhookDeliveries', 'statuses'), { required: true }) as UseControllerProps<ReplayValues, 'statuses'>['rules'];
  const start = useBulkReplay(destinationId);
  const job = useReplayJob(destinationId, start.data?.job_id);
  const current = job.data ?? start.data;
  const running = current !== undefined && (current.status === 'queued' || current.status === 'running');
  const percent = current && current.matched > 0 ? Math.round((current.replayed / current.matched) * 100) : current?.status === 'completed' ? 100 : 0;
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('replay.title')}
      </Title>
      <form noValidate onSubmit={form.submit((values) => start.mutateAsync({ statuses: values.statuses, since: f.fromZonedInput(values.since) || undefined }))}>
        <Stack>
          <Text size="sm" c="dimmed">
            {t('replay.intro')}
          </Text>
          <Group align="flex-start" wrap="wrap">
            <Controller
              control={form.control}
              name="statuses"
              rules={statusesRules}
              render={({ field }) => (
                <MultiSelect
                  ref={field.ref}
                  label={t('replay.statuses')}
                  data={REPLAYABLE.map((s) => ({ value: s, label: s }))}
                  value={field.value}
                  onChange={(value) => field.onChange(value as Replayable[])}
                  onBlur={field.onBlur}
                  error={form.errorOf('statuses')}
                  required
                  miw={260}
                />
              )}
            />
            <TextInput label={t('replay.since')} type="datetime-local" {...form.field('since')} />
            <Button type="submit" mt={24} loading={form.formState.isSubmitting || running}>
              {t('replay.start')}
            </Button>
          </Group>
          <FormErrors form={form} />
          <ErrorAlert error={job.error} />
          {current && (
            <Stack gap={4} role="status" aria-live="polite" data-testid="replay-progress">
              <Group justify="space-between">
                <Text size="sm">{t(`replay.state.${current.status}`)}</Text>
                <Text size="sm">{t('replay.counts', { replayed: current.replayed, matched: current.matched })}</Text>
              </Group>
              <Progress value={percent} aria-label={t('replay.progress')} color={current.status === 'failed' ? 'red.9' : 'blue.8'} animated={running} />
              {current.error && <Text size="sm" c="red.9">{current.error}</Text>}
            </Stack>
          )}
        </Stack>
      </form>
    </Card>
  );
}
