import { useState } from 'react';
import { Anchor, Button, Card, Group, Loader, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useResultsExport, useStartResultsExport, type Contest } from '../../../../hooks/api/contests';
import { ErrorAlert } from '../../../../components/error-alert';
import { useFormat } from '../../../../lib/format';

/**
 * The contest's results as CSV (rank, participant, display name, score, entry
 * status and times), through the files API's export: the file is written in
 * the background and offered for download once complete.
 */
export function ResultsExport({ contest }: { contest: Contest }) {
  const { t } = useTranslation();
  const f = useFormat();
  const [exportId, setExportId] = useState<string | undefined>(undefined);
  const start = useStartResultsExport(contest.id);
  const progress = useResultsExport(contest.id, exportId);
  const file = progress.data;
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        {t('contests.results.title')}
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        {t('contests.results.explain')}
      </Text>
      <Group>
        <Button variant="default" loading={start.isPending} onClick={() => start.mutate(undefined, { onSuccess: (started) => setExportId(started.export_id) })}>
          {t('contests.results.export')}
        </Button>
        {file && file.status !== 'completed' && (
          <Group gap="xs" role="status">
            <Loader size="xs" />
            <Text size="sm">{t('contests.results.writing', { rows: f.number(file.rows_written) })}</Text>
          </Group>
        )}
        {file?.status === 'completed' && file.file_url && (
          <Anchor href={file.file_url} download data-testid="results-download">
            {t('contests.results.download', { rows: f.number(file.rows_written), at: f.dateTime(file.finished_at) })}
          </Anchor>
        )}
      </Group>
      <ErrorAlert error={start.error ?? progress.error} />
    </Card>
  );
}
