import { Alert } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { errorDetail } from '../api/client';

/** A failed call, in the API's own words (its `detail`). */
export function ErrorAlert({ error, title }: { error: unknown; title?: string }) {
  const { t } = useTranslation();
  if (!error) return null;
  return (
    <Alert color="red" variant="light" role="alert" title={title ?? t('common.error')} data-testid="api-error">
      {errorDetail(error)}
    </Alert>
  );
}
