import { useMemo } from 'react';
import { Alert, Button, Card, Group, Select, Stack, TextInput, Title } from '@mantine/core';
import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useUpdateTenant } from '../../../hooks/api/settings';
import { FormErrors, useApiForm } from '../../../lib/forms';

interface TenantSettings {
  timezone: string;
  currency: string;
  locale: string;
}

/** The values the browser knows; the server decides (a zone PostgreSQL knows, ISO 4217, BCP 47) and its refusal lands on the field. */
function choices(kind: 'timeZone' | 'currency', current: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf(kind) : [];
  return known.includes(current) ? known : [current, ...known];
}

/** The tenant's time zone, currency and locale, for those holding settings:write; only what changed is sent. */
export function TenantSettingsForm({ tenant }: { tenant: TenantSettings }) {
  const { t } = useTranslation();
  const update = useUpdateTenant();
  const form = useApiForm<TenantSettings>('updateTenant', { defaultValues: { timezone: tenant.timezone, currency: tenant.currency, locale: tenant.locale } });
  const zones = useMemo(() => choices('timeZone', tenant.timezone), [tenant.timezone]);
  const currencies = useMemo(() => choices('currency', tenant.currency), [tenant.currency]);
  const changed = form.formState.isDirty;
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('tenantSettings.title')}
      </Title>
      <form
        noValidate
        onSubmit={form.submit(async (values) => {
          const saved = await update.mutateAsync({
            ...(values.timezone !== tenant.timezone ? { timezone: values.timezone } : {}),
            ...(values.currency !== tenant.currency ? { currency: values.currency } : {}),
            ...(values.locale !== tenant.locale ? { locale: values.locale.trim() } : {}),
          });
          // The server's canonical forms (EUR, fr-FR) replace what was typed.
          form.reset({ timezone: saved.timezone, currency: saved.currency, locale: saved.locale });
        })}
      >
        <Stack>
          <Controller
            control={form.control}
            name="timezone"
            render={({ field }) => (
              <Select
                label={t('tenantSettings.timezone')}
                description={t('tenantSettings.timezoneHelp')}
                data={zones}
                value={field.value}
                onChange={(value) => value && field.onChange(value)}
                error={form.errorOf('timezone')}
                searchable
                allowDeselect={false}
                limit={50}
              />
            )}
          />
          <Controller
            control={form.control}
            name="currency"
            render={({ field }) => (
              <Select
                label={t('tenantSettings.currency')}
                data={currencies}
                value={field.value}
                onChange={(value) => value && field.onChange(value)}
                error={form.errorOf('currency')}
                searchable
                allowDeselect={false}
                limit={50}
              />
            )}
          />
          <TextInput label={t('tenantSettings.locale')} {...form.field('locale', { required: true })} description={t('tenantSettings.localeHelp')} />
          <FormErrors form={form} />
          {update.isSuccess && !changed && (
            <Alert color="green" variant="light" role="status">
              {t('tenantSettings.saved')}
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting} disabled={!changed}>
              {t('tenantSettings.save')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
