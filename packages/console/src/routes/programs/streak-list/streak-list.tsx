import { Button, Card, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useCreateStreak, useDeleteStreak, useStreaks, useUpdateStreak } from '../../../hooks/api/streaks';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { EditDialog } from '../common/edit-dialog';
import { EventNamePicker } from '../common/pickers';
import { FormErrors, useApiForm } from '../../../lib/forms';

interface StreakValues {
  code: string;
  name: string;
  period: 'daily' | 'weekly';
  event_name: string;
  grace_periods: number | undefined;
}

interface Streak {
  code: string;
  name: string;
  period: 'daily' | 'weekly';
  event_name: string | null;
  grace_periods: number;
}

/** Streak definitions: what counts (an event, or earn rules that continue the streak), per day or ISO week, with grace periods. */
export function StreakList() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const streaks = useStreaks(pages.cursor);
  const create = useCreateStreak();
  const canWrite = useCan('programs:write');
  const form = useApiForm<StreakValues>('createStreak', { defaultValues: { code: '', name: '', period: 'daily', event_name: '', grace_periods: 0 } });
  const rows = (streaks.data?.streaks ?? []) as Streak[];
  return (
    <Stack>
      <PageHeader title={t('streaks.title')} />
      <ErrorAlert error={streaks.error} />
      {streaks.isPending && <Loading />}
      {streaks.data && rows.length === 0 && <Text>{t('streaks.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={700}>
          <Table striped data-testid="streaks">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('streaks.code')}</Table.Th>
                <Table.Th>{t('streaks.name')}</Table.Th>
                <Table.Th>{t('streaks.period')}</Table.Th>
                <Table.Th>{t('streaks.eventName')}</Table.Th>
                <Table.Th>{t('streaks.grace')}</Table.Th>
                {canWrite && <Table.Th>{t('common.actions')}</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((streak) => (
                <Table.Tr key={streak.code}>
                  <Table.Td>{streak.code}</Table.Td>
                  <Table.Td>{streak.name}</Table.Td>
                  <Table.Td>{t(`streaks.periods.${streak.period}`)}</Table.Td>
                  <Table.Td>{streak.event_name ?? t('streaks.noEvent')}</Table.Td>
                  <Table.Td>{streak.grace_periods}</Table.Td>
                  {canWrite && (
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        <StreakEdit streak={streak} />
                        <StreakDelete streak={streak} />
                      </Group>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={streaks.data?.next_cursor} />
      <RoleGuard permission="programs:write">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('streaks.create')}
          </Title>
          <form
            noValidate
            onSubmit={form.submit(async (values) => {
              await create.mutateAsync({ code: values.code, name: values.name, period: values.period, event_name: values.event_name.trim() || undefined, grace_periods: values.grace_periods });
              form.reset();
            })}
          >
            <Group align="flex-start" wrap="wrap">
              <TextInput label={t('streaks.code')} {...form.field('code')} />
              <TextInput label={t('streaks.name')} {...form.field('name')} />
              <Controller
                control={form.control}
                name="period"
                render={({ field }) => (
                  <Select
                    ref={field.ref}
                    label={t('streaks.period')}
                    data={(['daily', 'weekly'] as const).map((value) => ({ value, label: t(`streaks.periods.${value}`) }))}
                    value={field.value}
                    onChange={(value) => field.onChange(value ?? 'daily')}
                    allowDeselect={false}
                    w={140}
                  />
                )}
              />
              <EventNamePicker form={form} operation="createStreak" name="event_name" label={t('streaks.eventName')} />
              <TextInput label={t('streaks.grace')} {...form.field('grace_periods', { number: true })} w={160} />
              <Button type="submit" mt={24} loading={form.formState.isSubmitting}>
                {t('streaks.createSubmit')}
              </Button>
            </Group>
            <Text size="sm" c="dimmed" mt="xs">
              {t('streaks.eventNameHelp')} {t('streaks.graceHelp')}
            </Text>
            <FormErrors form={form} />
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}

function StreakEdit({ streak }: { streak: Streak }) {
  const { t } = useTranslation();
  const update = useUpdateStreak();
  const form = useApiForm<Pick<StreakValues, 'name' | 'event_name' | 'grace_periods'>>('updateStreak');
  return (
    <EditDialog
      size="compact-sm"
      label={t('streaks.edit')}
      aria-label={t('streaks.editNamed', { name: streak.name })}
      title={t('streaks.editTitle', { name: streak.name })}
      submitLabel={t('streaks.save')}
      form={form}
      values={() => ({ name: streak.name, event_name: streak.event_name ?? '', grace_periods: streak.grace_periods })}
      onSubmit={(values) => update.mutateAsync({ code: streak.code, body: { name: values.name, event_name: values.event_name.trim() || null, grace_periods: values.grace_periods } })}
    >
      <TextInput label={t('streaks.name')} {...form.field('name', { required: true })} data-autofocus />
      <EventNamePicker form={form} operation="updateStreak" name="event_name" label={t('streaks.eventName')} description={t('streaks.eventNameHelp')} />
      <TextInput label={t('streaks.grace')} {...form.field('grace_periods', { number: true })} />
    </EditDialog>
  );
}

function StreakDelete({ streak }: { streak: Streak }) {
  const { t } = useTranslation();
  const remove = useDeleteStreak();
  return (
    <ConfirmButton
      size="compact-sm"
      variant="outline"
      label={t('common.delete')}
      aria-label={t('streaks.deleteNamed', { name: streak.name })}
      title={t('streaks.deleteTitle')}
      message={t('streaks.deleteConfirm', { name: streak.name })}
      confirmLabel={t('common.delete')}
      onConfirm={() => remove.mutateAsync(streak.code)}
    />
  );
}
