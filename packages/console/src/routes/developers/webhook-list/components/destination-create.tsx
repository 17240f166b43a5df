import { useState } from 'react';
import { Alert, Button, Card, Code, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useCreateDestination } from '../../../../hooks/api/webhooks';
import { FormErrors, useApiForm } from '../../../../lib/forms';
import { DestinationFields, type DestinationValues } from '../../common/destination-fields';

const EMPTY: DestinationValues = { name: '', url: '', events: [], description: '', active: true, allow_private_network: false };

/** A new destination: its signing secret shown once, in this component's state only. */
export function DestinationCreate() {
  const { t } = useTranslation();
  const create = useCreateDestination();
  const form = useApiForm<DestinationValues>('createWebhook', { defaultValues: EMPTY });
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('webhooks.create')}
      </Title>
      <form
        noValidate
        onSubmit={form.submit(async (values) => {
          setSecret(null);
          const created = await create.mutateAsync({
            name: values.name,
            url: values.url.trim(),
            events: values.events,
            ...(values.description.trim() ? { description: values.description } : {}),
            ...(values.allow_private_network ? { allow_private_network: true } : {}),
          });
          setSecret(created.secret);
          form.reset(EMPTY);
        })}
      >
        <Stack>
          <TextInput label={t('webhooks.name')} {...form.field('name')} />
          <DestinationFields form={form} withActive={false} />
          {secret && (
            <Alert color="green" variant="light" role="status">
              <Text fw={700}>{t('webhooks.created')}</Text>
              <Text size="sm">
                {t('webhooks.secretOnce')} <Code>{secret}</Code>
              </Text>
            </Alert>
          )}
          <FormErrors form={form} />
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting}>
              {t('webhooks.createSubmit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
