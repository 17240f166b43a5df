import { Button, Card, Group, Stack, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useSaveLeaderboard, type Leaderboard, type LeaderboardInput } from '../../../../hooks/api/leaderboards';
import { FormErrors, useApiForm } from '../../../../lib/forms';

interface SettingsValues {
  name: string;
  refresh_seconds: number | undefined;
}

/** A leaderboard's name and refresh interval (its code and metric stay). */
export function LeaderboardSettings({ board }: { board: Leaderboard }) {
  const { t } = useTranslation();
  const save = useSaveLeaderboard(board.leaderboard_code);
  const form = useApiForm<SettingsValues>('updateLeaderboard', { defaultValues: { name: board.name, refresh_seconds: board.refresh_seconds } });
  const submit = form.submit((values) =>
    save.mutateAsync({ leaderboard_code: board.leaderboard_code, name: values.name.trim(), metric: board.metric, refresh_seconds: values.refresh_seconds } as LeaderboardInput),
  );
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('leaderboards.edit')}
      </Title>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Group align="flex-start" wrap="wrap">
            <TextInput label={t('leaderboards.name')} {...form.field('name', { required: true })} />
            <TextInput label={t('leaderboards.refreshSeconds')} {...form.field('refresh_seconds', { number: true })} />
          </Group>
          <FormErrors form={form} />
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting}>
              {t('leaderboards.save')}
            </Button>
            {save.isSuccess && !form.refusal && <Text role="status">{t('leaderboards.saved')}</Text>}
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
