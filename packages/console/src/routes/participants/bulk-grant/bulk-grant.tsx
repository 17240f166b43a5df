import { Anchor, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { PageHeader } from '../../../components/page-header';
import { useFormat } from '../../../lib/format';
import { FileImport } from '../common/file-import';

/**
 * Points to many participants from a CSV (participant_id, amount, reason):
 * the files API's point_grants import, with its dry run (the count, the points
 * in all, the refused rows) before anything is granted, behind a confirmation.
 */
export function BulkGrant() {
  const { t } = useTranslation();
  const f = useFormat();
  return (
    <Stack>
      <Anchor component={Link} to="/participants" size="sm">
        ← {t('files.back')}
      </Anchor>
      <PageHeader title={t('files.bulk.title')} />
      <Text>{t('files.bulk.explain')}</Text>
      <FileImport
        kind="point_grants"
        runLabel={(dry) => t('files.bulk.run', { points: f.number(dry.points_total ?? 0) })}
        confirmTitle={t('files.bulk.confirmTitle')}
        confirmMessage={(dry) => t('files.bulk.confirm', { points: f.number(dry.points_total ?? 0), participants: f.number(dry.participants), rows: f.number(dry.rows_valid) })}
      />
    </Stack>
  );
}
