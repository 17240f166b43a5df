import { useState } from 'react';
import { Anchor, Button, Card, Group, Loader, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useExport, useStartExport } from '../../../hooks/api/files';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { useFormat, ZoneNote } from '../../../lib/format';

type Kind = 'participants' | 'ledger';

/** One export: started here, followed until its file is written, then offered for download (masked unless the service wrote it unmasked). */
function ExportCard({ kind }: { kind: Kind }) {
  const { t } = useTranslation();
  const f = useFormat();
  const [exportId, setExportId] = useState<string | undefined>(undefined);
  const start = useStartExport();
  const progress = useExport(exportId);
  const file = progress.data;
  return (
    <Card withBorder>
      <Stack gap="sm">
        <Title order={2} size="h4">
          {t(`files.export.titles.${kind}`)}
        </Title>
        <Group>
          <Button variant="default" loading={start.isPending} onClick={() => start.mutate(kind, { onSuccess: (started) => setExportId(started.export_id) })}>
            {t(`files.export.${kind}`)}
          </Button>
          {file && file.status !== 'completed' && (
            <Group gap="xs" role="status">
              <Loader size="xs" />
              <Text size="sm">{t('files.export.writing', { rows: f.number(file.rows_written) })}</Text>
            </Group>
          )}
          {file?.status === 'completed' && file.file_url && (
            <Anchor href={file.file_url} download data-testid={`download-${kind}`}>
              {t('files.export.download', { kind: t(`files.export.kinds.${kind}`), rows: f.number(file.rows_written), at: f.dateTime(file.finished_at) })}
            </Anchor>
          )}
        </Group>
        {file?.masked === true && <Text size="sm">{t('files.export.masked')}</Text>}
        {file?.masked === false && <Text size="sm">{t('files.export.unmasked')}</Text>}
        <ErrorAlert error={start.error ?? progress.error} />
      </Stack>
    </Card>
  );
}

/** Participants and the ledger as CSV files (participants:read); the service decides what is masked. */
export function ParticipantExport() {
  const { t } = useTranslation();
  return (
    <Stack>
      <Anchor component={Link} to="/participants" size="sm">
        ← {t('files.back')}
      </Anchor>
      <PageHeader title={t('files.export.title')} />
      <Text>{t('files.export.explain')}</Text>
      <ZoneNote />
      <ExportCard kind="participants" />
      <ExportCard kind="ledger" />
    </Stack>
  );
}
