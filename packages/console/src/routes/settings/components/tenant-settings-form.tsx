import { useMemo, useState } from 'react';
import { Alert, Button, Card, Group, Select, Stack, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useUpdateTenant } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';

interface TenantSettings {
  timezone: string;
  currency: string;
  locale: string;
}

/** The values the browser knows; the server decides (a zone PostgreSQL knows, ISO 4217, BCP 47) and its refusal is shown as it says it. */
function choices(kind: 'timeZone' | 'currency', current: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf(kind) : [];
  return known.includes(current) ? known : [current, ...known];
}

/** The tenant's time zone, currency and locale, for those holding settings:write. */
export function TenantSettingsForm({ tenant }: { tenant: TenantSettings }) {
  const { t } = useTranslation();
  const update = useUpdateTenant();
  const [timezone, setTimezone] = useState(tenant.timezone);
  const [currency, setCurrency] = useState(tenant.currency);
  const [locale, setLocale] = useState(tenant.locale);
  const zones = useMemo(() => choices('timeZone', tenant.timezone), [tenant.timezone]);
  const currencies = useMemo(() => choices('currency', tenant.currency), [tenant.currency]);
  const changed = timezone !== tenant.timezone || currency !== tenant.currency || locale !== tenant.locale;
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('tenantSettings.title')}
      </Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          update.mutate(
            {
              ...(timezone !== tenant.timezone ? { timezone } : {}),
              ...(currency !== tenant.currency ? { currency } : {}),
              ...(locale !== tenant.locale ? { locale } : {}),
            },
            {
              // The server's canonical forms (EUR, fr-FR) replace what was typed.
              onSuccess: (saved) => {
                setTimezone(saved.timezone);
                setCurrency(saved.currency);
                setLocale(saved.locale);
              },
            },
          );
        }}
      >
        <Stack>
          <Select label={t('tenantSettings.timezone')} description={t('tenantSettings.timezoneHelp')} data={zones} value={timezone} onChange={(value) => value && setTimezone(value)} searchable allowDeselect={false} limit={50} />
          <Select label={t('tenantSettings.currency')} data={currencies} value={currency} onChange={(value) => value && setCurrency(value)} searchable allowDeselect={false} limit={50} />
          <TextInput label={t('tenantSettings.locale')} description={t('tenantSettings.localeHelp')} value={locale} onChange={(e) => setLocale(e.currentTarget.value)} required />
          <ErrorAlert error={update.error} />
          {update.isSuccess && !changed && (
            <Alert color="green" variant="light" role="status">
              {t('tenantSettings.saved')}
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={update.isPending} disabled={!changed}>
              {t('tenantSettings.save')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
