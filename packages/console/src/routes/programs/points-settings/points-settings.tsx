import { useEffect, useState } from 'react';
import { Alert, Button, Card, Group, NumberInput, Radio, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { usePointsSettings, useUpdatePointsSettings } from '../../../hooks/api/points-settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';

const POLICIES = ['fifo', 'lifo', 'none'] as const;
type Policy = (typeof POLICIES)[number];

/** "60, 30, 7" to [60, 30, 7]; a part that is not a whole number is sent as it is and the server names it. */
function parseDays(text: string): number[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : (part as unknown as number)));
}

/** The tenant's expiry policy, the lifetime of newly granted points, the expiry reminders (points.expiring.v1) and the points' name. */
export function PointsSettings() {
  const { t } = useTranslation();
  const settings = usePointsSettings();
  const update = useUpdatePointsSettings();
  const canWrite = useCan('programs:write');
  const [policy, setPolicy] = useState<Policy>('fifo');
  const [ttl, setTtl] = useState<number | string>(365);
  const [reminders, setReminders] = useState('');
  const [currency, setCurrency] = useState('');

  useEffect(() => {
    const s = settings.data;
    if (!s) return;
    setPolicy(s.expiry_policy);
    setTtl(s.default_ttl_days);
    setReminders(s.reminder_days.join(', '));
    setCurrency(s.currency_name);
  }, [settings.data]);

  if (settings.isPending) return <Loading />;
  return (
    <Stack>
      <PageHeader title={t('pointsSettings.title')} />
      <ErrorAlert error={settings.error} />
      {settings.data && (
        <Card withBorder maw={720}>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              update.mutate({ expiry_policy: policy, default_ttl_days: Number(ttl), reminder_days: parseDays(reminders), currency_name: currency.trim() });
            }}
          >
            <Stack>
              <Radio.Group label={t('pointsSettings.policy')} description={t('pointsSettings.policyHelp')} value={policy} onChange={(value) => setPolicy(value as Policy)}>
                <Stack gap="xs" mt="xs">
                  {POLICIES.map((value) => (
                    <Radio key={value} value={value} label={t(`pointsSettings.policies.${value}`)} disabled={!canWrite} />
                  ))}
                </Stack>
              </Radio.Group>
              <NumberInput label={t('pointsSettings.ttl')} min={1} max={36_500} allowDecimal={false} value={ttl} onChange={setTtl} readOnly={!canWrite} disabled={policy === 'none'} maw={240} />
              <div>
                <Title order={2} size="h4">
                  {t('pointsSettings.reminders')}
                </Title>
                <Text size="sm" c="dimmed" mb="xs">
                  {t('pointsSettings.remindersHelp')}
                </Text>
                <TextInput label={t('pointsSettings.reminderDays')} value={reminders} onChange={(e) => setReminders(e.currentTarget.value)} readOnly={!canWrite} maw={320} />
              </div>
              <TextInput label={t('pointsSettings.currency')} value={currency} onChange={(e) => setCurrency(e.currentTarget.value)} readOnly={!canWrite} maw={320} />
              {settings.data.updated_at && (
                <Text size="sm" c="dimmed">
                  {t('pointsSettings.updatedAt', { at: new Date(settings.data.updated_at).toLocaleString() })}
                </Text>
              )}
              <ErrorAlert error={update.error} />
              {update.isSuccess && (
                <Alert color="teal" role="status">
                  {t('pointsSettings.saved')}
                </Alert>
              )}
              {canWrite && (
                <Group>
                  <Button type="submit" loading={update.isPending}>
                    {t('pointsSettings.save')}
                  </Button>
                </Group>
              )}
            </Stack>
          </form>
        </Card>
      )}
    </Stack>
  );
}
