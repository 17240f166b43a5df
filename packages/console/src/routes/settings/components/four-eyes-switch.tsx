import { Card, Stack, Switch, Text, Title } from '@mantine/core';
import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useUpdateTenant } from '../../../hooks/api/settings';
import { FormErrors, useApiForm } from '../../../lib/forms';

/**
 * Four-eyes publishing (`require_four_eyes`), for those holding settings:write.
 * The switch saves at once (a form of one field on lib/forms): the server's
 * answer decides what it shows, and a refusal lands on the switch.
 */
export function FourEyesSwitch({ requireFourEyes }: { requireFourEyes: boolean }) {
  const { t } = useTranslation();
  const update = useUpdateTenant();
  const form = useApiForm<{ require_four_eyes: boolean }>('updateTenant', { values: { require_four_eyes: requireFourEyes } });
  const save = form.submit(async (values) => {
    await update.mutateAsync({ require_four_eyes: values.require_four_eyes });
  });
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('fourEyes.title')}
      </Title>
      <form noValidate onSubmit={save}>
        <Stack>
          <Text size="sm">{t('fourEyes.help')}</Text>
          <Controller
            control={form.control}
            name="require_four_eyes"
            render={({ field }) => (
              <Switch
                label={t('fourEyes.label')}
                checked={field.value}
                disabled={form.formState.isSubmitting}
                error={form.errorOf('require_four_eyes')}
                onChange={(event) => {
                  field.onChange(event.currentTarget.checked);
                  void save();
                }}
              />
            )}
          />
          <FormErrors form={form} />
        </Stack>
      </form>
    </Card>
  );
}
