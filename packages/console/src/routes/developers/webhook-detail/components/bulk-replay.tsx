import { useState } from 'react';
import { Button, Card, Group, MultiSelect, Progress, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useBulkReplay, useReplayJob } from '../../../../hooks/api/webhooks';
import { ErrorAlert } from '../../../../components/error-alert';
import { useFormat } from '../../../../lib/format';

const REPLAYABLE = ['EXHAUSTED', 'CANCELLED', 'SUCCEEDED'] as const;
type Replayable = (typeof REPLAYABLE)[number];

/** Replays every event whose latest delivery ended in the chosen states, and follows the job to its end. */
export function BulkReplay({ destinationId }: { destinationId: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const [statuses, setStatuses] = useState<Replayable[]>(['EXHAUSTED']);
  const [since, setSince] = useState('');
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
      <form
        onSubmit={(event) => {
          event.preventDefault();
          start.mutate({ statuses, since: f.fromZonedInput(since) || undefined });
        }}
      >
        <Stack>
          <Text size="sm" c="dimmed">
            {t('replay.intro')}
          </Text>
          <Group align="flex-end" wrap="wrap">
            <MultiSelect
              label={t('replay.statuses')}
              data={REPLAYABLE.map((s) => ({ value: s, label: s }))}
              value={statuses}
              onChange={(value) => setStatuses(value as Replayable[])}
              required
              miw={260}
            />
            <TextInput label={t('replay.since')} type="datetime-local" value={since} onChange={(e) => setSince(e.currentTarget.value)} />
            <Button type="submit" loading={start.isPending || running} disabled={statuses.length === 0}>
              {t('replay.start')}
            </Button>
          </Group>
          <ErrorAlert error={start.error ?? job.error} />
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
