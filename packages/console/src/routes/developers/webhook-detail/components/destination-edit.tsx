import { Button, Card, Group, Stack, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useUpdateDestination, type Destination } from '../../../../hooks/api/webhooks';
import { FormErrors, useApiForm } from '../../../../lib/forms';
import { changedFields, DestinationFields, type DestinationValues } from '../../common/destination-fields';

function valuesOf(destination: Destination): DestinationValues {
  return {
    name: destination.name,
    url: destination.url,
    events: destination.events,
    description: destination.description ?? '',
    active: destination.active,
    allow_private_network: destination.allow_private_network,
  };
}

/** The destination's URL, event filter, description and switches, sent by PATCH with only what changed; a refusal lands on its field. */
export function DestinationEdit({ destination, onDone }: { destination: Destination; onDone: (saved: boolean) => void }) {
  const { t } = useTranslation();
  const update = useUpdateDestination(destination.id);
  const form = useApiForm<DestinationValues>('updateWebhook', { defaultValues: valuesOf(destination) });
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('webhookForm.edit')}
      </Title>
      <form
        noValidate
        onSubmit={form.submit(async (values) => {
          const body = changedFields(values, form.formState.dirtyFields as Partial<Record<keyof DestinationValues, unknown>>);
          if (Object.keys(body).length > 0) await update.mutateAsync(body);
          onDone(Object.keys(body).length > 0);
        })}
      >
        <Stack>
          <DestinationFields form={form} withActive />
          <FormErrors form={form} />
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting}>
              {t('webhookForm.save')}
            </Button>
            <Button variant="default" onClick={() => onDone(false)}>
              {t('webhookForm.cancel')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
