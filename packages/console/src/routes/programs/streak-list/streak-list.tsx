import { useState } from 'react';
import { Button, Card, Group, NumberInput, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useCreateStreak, useDeleteStreak, useStreaks, useUpdateStreak } from '../../../hooks/api/streaks';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { EditDialog } from '../common/edit-dialog';

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
  const [code, setCode] = useState('');
  const [name, setName] = useState('');
  const [period, setPeriod] = useState<Streak['period']>('daily');
  const [eventName, setEventName] = useState('');
  const [grace, setGrace] = useState<number | string>(0);
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
            onSubmit={(event) => {
              event.preventDefault();
              create.mutate(
                { code, name, period, event_name: eventName.trim() || undefined, grace_periods: grace === '' ? undefined : Number(grace) },
                {
                  onSuccess: () => {
                    setCode('');
                    setName('');
                    setEventName('');
                    setGrace(0);
                  },
                },
              );
            }}
          >
            <Group align="flex-end" wrap="wrap">
              <TextInput label={t('streaks.code')} value={code} onChange={(e) => setCode(e.currentTarget.value)} required />
              <TextInput label={t('streaks.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
              <Select
                label={t('streaks.period')}
                data={(['daily', 'weekly'] as const).map((value) => ({ value, label: t(`streaks.periods.${value}`) }))}
                value={period}
                onChange={(value) => setPeriod((value ?? 'daily') as Streak['period'])}
                allowDeselect={false}
                w={140}
              />
              <TextInput label={t('streaks.eventName')} placeholder={t('streaks.noEvent')} value={eventName} onChange={(e) => setEventName(e.currentTarget.value)} />
              <NumberInput label={t('streaks.grace')} min={0} max={7} allowDecimal={false} value={grace} onChange={setGrace} w={140} />
              <Button type="submit" loading={create.isPending}>
                {t('streaks.createSubmit')}
              </Button>
            </Group>
            <Text size="sm" c="dimmed" mt="xs">
              {t('streaks.eventNameHelp')} {t('streaks.graceHelp')}
            </Text>
            <ErrorAlert error={create.error} />
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}

function StreakEdit({ streak }: { streak: Streak }) {
  const { t } = useTranslation();
  const update = useUpdateStreak();
  const [name, setName] = useState(streak.name);
  const [eventName, setEventName] = useState(streak.event_name ?? '');
  const [grace, setGrace] = useState<number | string>(streak.grace_periods);
  return (
    <EditDialog
      size="compact-sm"
      label={t('streaks.edit')}
      aria-label={t('streaks.editNamed', { name: streak.name })}
      title={t('streaks.editTitle', { name: streak.name })}
      submitLabel={t('streaks.save')}
      onOpen={() => {
        setName(streak.name);
        setEventName(streak.event_name ?? '');
        setGrace(streak.grace_periods);
      }}
      onSubmit={() => update.mutateAsync({ code: streak.code, body: { name, event_name: eventName.trim() || null, grace_periods: Number(grace) } })}
    >
      <TextInput label={t('streaks.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required data-autofocus />
      <TextInput label={t('streaks.eventName')} description={t('streaks.eventNameHelp')} value={eventName} onChange={(e) => setEventName(e.currentTarget.value)} />
      <NumberInput label={t('streaks.grace')} description={t('streaks.graceHelp')} min={0} max={7} allowDecimal={false} value={grace} onChange={setGrace} />
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
