import { useState } from 'react';
import { Alert, Button, Card, FileInput, Group, Loader, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useImport, useImportDryRun, useImportErrors, useStartImport, type ImportDryRun, type ImportKind } from '../../../hooks/api/files';
import { ErrorAlert } from '../../../components/error-alert';
import { ConfirmButton } from '../../../components/confirm-button';
import { ScrollTable } from '../../../components/loading';
import { useFormat } from '../../../lib/format';

/** The columns each kind takes, for the hint under the file field. */
const COLUMNS: Record<ImportKind, string> = {
  participants: 'participant_id, display_name, email, first_name, last_name, country_code, city, postal_code, …',
  point_grants: 'participant_id, amount, reason, memo, type',
};

function Stat({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <Card withBorder padding="xs">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="lg" data-testid={testId}>
        {value}
      </Text>
    </Card>
  );
}

function RefusedRows({ rows, truncated }: { rows: Array<{ row: number; field: string | null; detail: string }>; truncated?: boolean }) {
  const { t } = useTranslation();
  if (rows.length === 0) return null;
  return (
    <Stack gap="xs">
      <Title order={3} size="h5">
        {t('files.refusedRows')}
      </Title>
      <ScrollTable minWidth={480}>
        <Table striped data-testid="refused-rows">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('files.row')}</Table.Th>
              <Table.Th>{t('files.field')}</Table.Th>
              <Table.Th>{t('files.detail')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((error, i) => (
              <Table.Tr key={`${error.row}-${i}`}>
                <Table.Td>{error.row}</Table.Td>
                <Table.Td>{error.field ?? '—'}</Table.Td>
                <Table.Td>{error.detail}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollTable>
      {truncated && <Text size="sm">{t('files.moreRefused')}</Text>}
    </Stack>
  );
}

function DryRunSummary({ result }: { result: ImportDryRun }) {
  const { t } = useTranslation();
  const f = useFormat();
  return (
    <Stack gap="sm" data-testid="dry-run">
      <Title order={2} size="h4">
        {t('files.dryRunTitle')}
      </Title>
      <SimpleGrid cols={{ base: 2, sm: result.points_total === null ? 4 : 5 }} spacing="xs">
        <Stat label={t('files.rows')} value={f.number(result.rows_total)} />
        <Stat label={t('files.valid')} value={f.number(result.rows_valid)} testId="dry-run-valid" />
        <Stat label={t('files.refused')} value={f.number(result.rows_refused)} testId="dry-run-refused" />
        <Stat label={t('files.participants')} value={f.number(result.participants)} />
        {result.points_total !== null && <Stat label={t('files.pointsTotal')} value={f.number(result.points_total)} testId="dry-run-points" />}
      </SimpleGrid>
      <RefusedRows rows={result.errors} truncated={result.errors_truncated} />
    </Stack>
  );
}

/** The import's progress once it runs, and what it refused when it is done. */
function ImportProgress({ importId }: { importId: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const progress = useImport(importId);
  const job = progress.data;
  const completed = job?.status === 'completed';
  const errors = useImportErrors(importId, completed && (job?.rows_failed ?? 0) > 0);
  return (
    <Stack gap="sm">
      <ErrorAlert error={progress.error ?? errors.error} />
      {job && !completed && (
        <Group gap="xs" role="status">
          <Loader size="xs" />
          <Text size="sm">{t('files.running', { done: f.number(job.rows_done), total: f.number(job.rows_total) })}</Text>
        </Group>
      )}
      {job && completed && (
        <Alert color="green" role="status" data-testid="import-done">
          {t('files.done', { done: f.number(job.rows_done), failed: f.number(job.rows_failed) })}
        </Alert>
      )}
      {errors.data && <RefusedRows rows={errors.data.errors} />}
    </Stack>
  );
}

/**
 * A CSV import with its dry run: the file is checked first (what would be
 * applied, refused, the points in all) and nothing is written; the import runs
 * only after that, behind a confirmation.
 */
export function FileImport({ kind, runLabel, confirmTitle, confirmMessage }: { kind: ImportKind; runLabel: (dry: ImportDryRun) => string; confirmTitle: string; confirmMessage: (dry: ImportDryRun) => string }) {
  const { t } = useTranslation();
  const [file, setFile] = useState<File | null>(null);
  const [importId, setImportId] = useState<string | undefined>(undefined);
  const dryRun = useImportDryRun();
  const start = useStartImport();
  const result = dryRun.data;
  return (
    <Stack>
      <Card withBorder>
        <Stack>
          <FileInput
            label={t('files.csvFile')}
            description={t('files.csvHelp', { columns: COLUMNS[kind] })}
            accept=".csv,text/csv"
            value={file}
            onChange={(chosen) => {
              setFile(chosen);
              setImportId(undefined);
              dryRun.reset();
              start.reset();
            }}
            clearable
            clearButtonProps={{ 'aria-label': t('common.clear') }}
          />
          <Group>
            <Button variant="default" disabled={!file} loading={dryRun.isPending} onClick={() => file && dryRun.mutate({ kind, file })}>
              {t('files.dryRun')}
            </Button>
            {result && !importId && (
              <ConfirmButton
                label={runLabel(result)}
                destructive={false}
                disabled={result.rows_valid === 0}
                title={confirmTitle}
                message={confirmMessage(result)}
                confirmLabel={t('common.confirm')}
                onConfirm={async () => {
                  const started = await start.mutateAsync({ kind, file: file! });
                  setImportId(started.import_id);
                }}
              />
            )}
          </Group>
          <ErrorAlert error={dryRun.error} />
        </Stack>
      </Card>
      {result && (
        <Card withBorder>
          <DryRunSummary result={result} />
        </Card>
      )}
      {importId && (
        <Card withBorder>
          <ImportProgress importId={importId} />
        </Card>
      )}
    </Stack>
  );
}
