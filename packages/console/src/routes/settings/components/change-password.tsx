import { Alert, Button, Card, Group, PasswordInput, Stack, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { client } from '../../../api/client';
import { FormErrors, useApiForm } from '../../../lib/forms';

interface PasswordValues {
  current_password: string;
  new_password: string;
}

/** The signed-in person's own password; the new one's length is the service's rule, shown under the field. */
export function ChangePassword() {
  const { t } = useTranslation();
  const change = useMutation({ mutationFn: (body: PasswordValues) => client.console.changePassword({ body }) });
  const form = useApiForm<PasswordValues>('changeConsolePassword', { defaultValues: { current_password: '', new_password: '' } });
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('password.title')}
      </Title>
      <form
        noValidate
        onSubmit={form.submit(async (values) => {
          await change.mutateAsync(values);
          form.reset();
        })}
      >
        <Stack>
          <PasswordInput label={t('password.current')} autoComplete="current-password" {...form.field('current_password')} />
          <PasswordInput label={t('password.new')} autoComplete="new-password" {...form.field('new_password')} />
          <FormErrors form={form} />
          {change.isSuccess && !form.formState.isDirty && (
            <Alert color="green" role="status">
              {t('password.changed')}
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting}>
              {t('password.submit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
