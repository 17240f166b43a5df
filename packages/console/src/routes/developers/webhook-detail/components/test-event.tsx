import { Badge, Button, Card, Code, Group, Select, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, type UseControllerProps } from 'react-hook-form';
import { useEventCatalog, useSendTestEvent, type Delivery } from '../../../../hooks/api/webhooks';
import { FormErrors, registerRules, useApiForm } from '../../../../lib/forms';
import { useFormat } from '../../../../lib/format';

interface TestValues {
  event: string;
}

/** What the one attempt of a test delivery came to: outcome, HTTP status, latency and the start of the answer. */
function TestResult({ delivery }: { delivery: Delivery }) {
  const { t } = useTranslation();
  const f = useFormat();
  const attempt = delivery.attempt_log[delivery.attempt_log.length - 1];
  const succeeded = delivery.status === 'SUCCEEDED';
  return (
    <Stack gap="xs" role="status" aria-live="polite" data-testid="test-result">
      <Text fw={700}>
        {t('webhookTest.result')}{' '}
        <Badge color={succeeded ? 'teal.9' : 'red.9'} variant="filled">
          {succeeded ? t('webhookTest.succeeded') : t('webhookTest.failed')}
        </Badge>
      </Text>
      <SimpleGrid cols={{ base: 2, sm: 3 }} spacing="sm">
        <div>
          <Text size="xs" c="dimmed">
            {t('webhookTest.httpStatus')}
          </Text>
          <Text size="sm">{attempt?.response_status ?? t('webhookTest.noAnswer')}</Text>
        </div>
        <div>
          <Text size="xs" c="dimmed">
            {t('webhookTest.latency')}
          </Text>
          <Text size="sm">{attempt ? t('webhookTest.latencyValue', { ms: f.number(attempt.duration_ms) }) : '—'}</Text>
        </div>
        <div>
          <Text size="xs" c="dimmed">
            {t('deliveries.event')}
          </Text>
          <Text size="sm">{delivery.event}</Text>
        </div>
      </SimpleGrid>
      {attempt?.error && (
        <div>
          <Text size="xs" c="dimmed">
            {t('webhookTest.error')}
          </Text>
          <Text size="sm" style={{ wordBreak: 'break-word' }}>
            {attempt.error}
          </Text>
        </div>
      )}
      {attempt && attempt.response_status !== null && (
        <div>
          <Text size="xs" c="dimmed">
            {t('webhookTest.response')}
          </Text>
          <Code block data-testid="test-response" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
            {attempt.response_body || t('webhookTest.empty')}
          </Code>
        </div>
      )}
    </Stack>
  );
}

/** Sends a sample of any catalogue event to the destination (signed, marked as a test) and shows what the receiver answered. */
export function TestEvent({ destinationId, disabled }: { destinationId: string; disabled: boolean }) {
  const { t } = useTranslation();
  const catalog = useEventCatalog();
  const send = useSendTestEvent(destinationId);
  const form = useApiForm<TestValues>('sendWebhookTestEvent', { defaultValues: { event: 'points.awarded.v1' } });
  // Recording the name with the form lets a refusal naming /event land on the picker.
  form.field('event', { required: true });
  const names = (catalog.data?.events ?? []).map((event) => ({ value: event.name, label: event.name }));
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        {t('webhookTest.title')}
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        {t('webhookTest.intro')}
      </Text>
      <form noValidate onSubmit={form.submit((values) => send.mutateAsync({ event: values.event }))}>
        <Stack>
          <Group align="flex-end" wrap="wrap">
            <Controller
              control={form.control}
              name="event"
              rules={registerRules(undefined, { required: true }) as UseControllerProps<TestValues, 'event'>['rules']}
              render={({ field }) => (
                <Select
                  ref={field.ref}
                  label={t('webhookTest.event')}
                  data={names}
                  value={field.value || null}
                  onChange={(value) => field.onChange(value ?? '')}
                  onBlur={field.onBlur}
                  searchable
                  allowDeselect={false}
                  required
                  error={form.errorOf('event')}
                  miw={280}
                />
              )}
            />
            <Button type="submit" loading={form.formState.isSubmitting} disabled={disabled}>
              {t('webhookTest.send')}
            </Button>
          </Group>
          {disabled && (
            <Text size="sm" c="dimmed">
              {t('webhookHealth.explain.disabled')}
            </Text>
          )}
          <FormErrors form={form} />
          {send.data && !form.formState.isSubmitting && <TestResult delivery={send.data} />}
        </Stack>
      </form>
    </Card>
  );
}
