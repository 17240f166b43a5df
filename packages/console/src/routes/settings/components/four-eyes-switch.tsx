import { Card, Stack, Switch, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useUpdateTenant } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';

/**
 * Four-eyes publishing (`require_four_eyes`), for those holding settings:write.
 * The switch saves at once; the server's answer decides what it shows, and a
 * refusal is shown in the server's words.
 */
export function FourEyesSwitch({ requireFourEyes }: { requireFourEyes: boolean }) {
  const { t } = useTranslation();
  const update = useUpdateTenant();
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('fourEyes.title')}
      </Title>
      <Stack>
        <Text size="sm">{t('fourEyes.help')}</Text>
        <Switch
          label={t('fourEyes.label')}
          checked={requireFourEyes}
          disabled={update.isPending}
          onChange={(event) => update.mutate({ require_four_eyes: event.currentTarget.checked })}
        />
        <ErrorAlert error={update.error} />
      </Stack>
    </Card>
  );
}
