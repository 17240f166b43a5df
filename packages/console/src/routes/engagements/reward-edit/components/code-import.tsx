import { useState } from 'react';
import { Alert, Button, Card, FileInput, List, Progress, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { LoyaltyError } from '@loyalty/sdk';
import { errorDetail } from '../../../../api/client';
import { ErrorAlert } from '../../../../components/error-alert';
import { useUploadCodes } from '../../../../hooks/api/rewards';
import { chunks, parseCodes, type CodeRow } from '../../common/csv';

/** Codes per request; the API takes up to 1,000, fewer keep the progress moving and a refused request small. */
const CODES_PER_REQUEST = 200;

interface RowError {
  line: number;
  code: string;
  detail: string;
}

interface Outcome {
  added: number;
  duplicates: number;
  errors: RowError[];
}

/** The row of a chunk the server's validation names (`body.codes.3 must match …`), if it names one. */
function refusedIndex(error: unknown): number | null {
  if (!(error instanceof LoyaltyError) || error.status !== 400) return null;
  const match = /body\.codes\.(\d+)\b/.exec(error.detail);
  return match ? Number(match[1]) : null;
}

/**
 * Codes from a CSV file chosen here, read in the browser and sent in chunks.
 * The server's schema decides what a code may be: when it refuses a chunk for
 * one row, that row is reported with the server's words and the rest of the
 * chunk is sent again.
 */
export function CodeImport({ rewardId }: { rewardId: string }) {
  const { t } = useTranslation();
  const { upload, done } = useUploadCodes(rewardId);
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState(0);
  const [total, setTotal] = useState(0);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [failure, setFailure] = useState<unknown>(null);

  const sendChunk = async (rows: CodeRow[], result: Outcome) => {
    let pending = rows;
    // Each retry drops one refused row, so this ends after at most rows.length requests.
    while (pending.length > 0) {
      try {
        const answer = await upload(pending.map((r) => r.code));
        result.added += answer.added;
        result.duplicates += answer.duplicates;
        return;
      } catch (error) {
        const index = refusedIndex(error);
        if (index === null || index >= pending.length) throw error;
        result.errors.push({ ...pending[index], detail: errorDetail(error) });
        pending = pending.filter((_row, i) => i !== index);
      }
    }
  };

  const run = async () => {
    if (!file) return;
    setBusy(true);
    setFailure(null);
    setOutcome(null);
    const rows = parseCodes(await file.text());
    const result: Outcome = { added: 0, duplicates: 0, errors: [] };
    setTotal(rows.length);
    setSent(0);
    try {
      for (const chunk of chunks(rows, CODES_PER_REQUEST)) {
        await sendChunk(chunk, result);
        setSent((n) => n + chunk.length);
      }
    } catch (error) {
      setFailure(error);
    } finally {
      setOutcome(result);
      setBusy(false);
      done();
    }
  };

  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('rewards.codes.title')}
      </Title>
      <Stack gap="sm">
        <Text size="sm">{t('rewards.codes.explain')}</Text>
        <FileInput label={t('rewards.codes.file')} accept=".csv,text/csv,text/plain" value={file} onChange={setFile} clearable clearButtonProps={{ 'aria-label': t('common.clear') }} disabled={busy} />
        <div>
          <Button onClick={run} disabled={!file} loading={busy}>
            {t('rewards.codes.import')}
          </Button>
        </div>
        {total > 0 && (
          <Progress.Root>
            <Progress.Section value={(sent / total) * 100} aria-label={t('rewards.codes.progress', { sent, total })} />
          </Progress.Root>
        )}
        {total > 0 && (
          <Text size="sm" aria-live="polite">
            {t('rewards.codes.progress', { sent, total })}
          </Text>
        )}
        <ErrorAlert error={failure} />
        {outcome && !busy && (
          <Alert color={outcome.errors.length ? 'red' : 'green'} variant="light" title={t('rewards.codes.done')} data-testid="import-result" role="status">
            <Text size="sm">{t('rewards.codes.summary', { added: outcome.added, duplicates: outcome.duplicates, refused: outcome.errors.length })}</Text>
            {outcome.errors.length > 0 && (
              <List size="sm" mt="xs" data-testid="import-errors">
                {outcome.errors.map((row) => (
                  <List.Item key={`${row.line}-${row.code}`}>{t('rewards.codes.rowError', { line: row.line, code: row.code, detail: row.detail })}</List.Item>
                ))}
              </List>
            )}
          </Alert>
        )}
      </Stack>
    </Card>
  );
}
