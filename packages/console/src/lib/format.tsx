import { useMemo } from 'react';
import { Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useTenant } from '../hooks/api/settings';
import { formatFor, type Format } from './zoned';

export type { Format } from './zoned';

/** The format of the signed-in tenant's zone and currency in the console's language. */
export function useFormat(): Format {
  const tenant = useTenant();
  const { i18n } = useTranslation();
  const timeZone = tenant.data?.timezone ?? 'UTC';
  const currency = tenant.data?.currency ?? 'USD';
  return useMemo(() => formatFor(timeZone, i18n.language, currency), [timeZone, i18n.language, currency]);
}

/** The line a screen with times shows once: "Times in Europe/Berlin (UTC+01:00)". */
export function ZoneNote() {
  const { t } = useTranslation();
  const { zoneLabel } = useFormat();
  return (
    <Text size="xs" c="dimmed" data-testid="zone-note">
      {t('common.timesIn', { zone: zoneLabel })}
    </Text>
  );
}
