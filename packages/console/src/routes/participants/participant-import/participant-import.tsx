import { Anchor, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { PageHeader } from '../../../components/page-header';
import { useFormat } from '../../../lib/format';
import { FileImport } from '../common/file-import';

/** Import participants from a CSV: a dry run first, then the import (participants:write). */
export function ParticipantImport() {
  const { t } = useTranslation();
  const f = useFormat();
  return (
    <Stack>
      <Anchor component={Link} to="/participants" size="sm">
        ← {t('files.back')}
      </Anchor>
      <PageHeader title={t('files.import.title')} />
      <Text>{t('files.import.explain')}</Text>
      <FileImport
        kind="participants"
        runLabel={(dry) => t('files.import.run', { count: dry.rows_valid, formatted: f.number(dry.rows_valid) })}
        confirmTitle={t('files.import.confirmTitle')}
        confirmMessage={(dry) => t('files.import.confirm', { count: dry.rows_valid, formatted: f.number(dry.rows_valid) })}
      />
    </Stack>
  );
}
