import { useState } from 'react';
import { Button, Card, Checkbox, Group, NumberInput, SimpleGrid, Stack, Table, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useCreateMultiplier, useDeleteMultiplier, useMultipliers } from '../../../hooks/api/points-settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { parseScalar } from '../common/rule-draft';
import { EventNamePicker } from '../common/pickers';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { useFormat, ZoneNote } from '../../../lib/format';

interface MultiplierValues {
  multiplier: number | undefined;
  event_type: string;
  attributes: string;
  participant_id: string;
  starts_at: string;
  ends_at: string;
}

interface Multiplier {
  id: string;
  multiplier: number;
  starts_at: string;
  ends_at: string;
  match: { event_type: string; attributes: Record<string, string | number | boolean> };
  participant_id: string | null;
}

/** `name=value` lines to the match's attributes; a line without `=` is sent as a name with an empty value, and the server says so. */
function parseAttributes(text: string): Record<string, string | number | boolean> | undefined {
  const entries = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const at = line.indexOf('=');
      const value = at < 0 ? '' : parseScalar(line.slice(at + 1));
      return [at < 0 ? line : line.slice(0, at).trim(), value === null ? 'null' : value] as const;
    });
  return entries.length ? Object.fromEntries(entries) : undefined;
}

export function MultiplierList() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const [activeNow, setActiveNow] = useState(false);
  /** The instant "active now" means, fixed when the box is ticked so the query key stays stable. */
  const [activeAt, setActiveAt] = useState<string | undefined>(undefined);
  const multipliers = useMultipliers({ active_at: activeNow ? activeAt : undefined, cursor: pages.cursor });
  const create = useCreateMultiplier();
  const remove = useDeleteMultiplier();
  const canWrite = useCan('programs:write');
  const f = useFormat();
  const form = useApiForm<MultiplierValues>('createMultiplier', { defaultValues: { multiplier: 2, event_type: '', attributes: '', participant_id: '', starts_at: '', ends_at: '' } });
  const rows = (multipliers.data?.multipliers ?? []) as Multiplier[];
  const when = f.dateTime;
  return (
    <Stack>
      <PageHeader title={t('multipliers.title')} />
      <Text size="sm">{t('multipliers.explain')}</Text>
      <ZoneNote />
      <Checkbox
        label={t('multipliers.activeNow')}
        checked={activeNow}
        onChange={(e) => {
          pages.reset();
          setActiveAt(new Date().toISOString());
          setActiveNow(e.currentTarget.checked);
        }}
      />
      <ErrorAlert error={multipliers.error} />
      {multipliers.isPending && <Loading />}
      {multipliers.data && rows.length === 0 && <Text>{t('multipliers.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={800}>
          <Table striped data-testid="multipliers">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('multipliers.multiplier')}</Table.Th>
                <Table.Th>{t('multipliers.eventType')}</Table.Th>
                <Table.Th>{t('multipliers.attributes')}</Table.Th>
                <Table.Th>{t('multipliers.participant')}</Table.Th>
                <Table.Th>{t('multipliers.window')}</Table.Th>
                {canWrite && <Table.Th>{t('common.actions')}</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((m) => (
                <Table.Tr key={m.id}>
                  <Table.Td fw={700}>×{m.multiplier}</Table.Td>
                  <Table.Td>{m.match.event_type}</Table.Td>
                  <Table.Td>
                    {Object.entries(m.match.attributes).length === 0
                      ? '—'
                      : Object.entries(m.match.attributes)
                          .map(([name, value]) => `${name} = ${String(value)}`)
                          .join(', ')}
                  </Table.Td>
                  <Table.Td>{m.participant_id ?? t('multipliers.everyone')}</Table.Td>
                  <Table.Td>
                    {when(m.starts_at)} – {when(m.ends_at)}
                  </Table.Td>
                  {canWrite && (
                    <Table.Td>
                      <ConfirmButton
                        size="compact-sm"
                        variant="outline"
                        label={t('common.delete')}
                        aria-label={t('multipliers.deleteNamed', { multiplier: m.multiplier, event: m.match.event_type })}
                        title={t('multipliers.deleteTitle')}
                        message={t('multipliers.deleteConfirm', { multiplier: m.multiplier, event: m.match.event_type })}
                        confirmLabel={t('common.delete')}
                        onConfirm={() => remove.mutateAsync(m.id)}
                      />
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={multipliers.data?.next_cursor} />
      <RoleGuard permission="programs:write">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('multipliers.create')}
          </Title>
          <form
            noValidate
            onSubmit={form.submit(async (values) => {
              await create.mutateAsync({
                multiplier: values.multiplier!,
                starts_at: f.fromZonedInput(values.starts_at),
                ends_at: f.fromZonedInput(values.ends_at),
                match: { event_type: values.event_type.trim(), attributes: parseAttributes(values.attributes) },
                participant_id: values.participant_id.trim() || undefined,
              });
              form.reset({ ...values, event_type: '', attributes: '', participant_id: '' });
            })}
          >
            <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }}>
              <TextInput label={t('multipliers.multiplier')} {...form.field('multiplier', { number: true })} />
              <EventNamePicker form={form} operation="createMultiplier" name="event_type" pointer="/match/event_type" label={t('multipliers.eventType')} required />
              <TextInput label={t('multipliers.participant')} description={t('multipliers.participantHelp')} {...form.field('participant_id')} />
              <TextInput type="datetime-local" label={t('multipliers.startsAt')} {...form.field('starts_at')} />
              <TextInput type="datetime-local" label={t('multipliers.endsAt')} {...form.field('ends_at')} />
              <Textarea label={t('multipliers.attributes')} placeholder="channel=app" {...form.field('attributes', { pointer: '/match/attributes' })} description={t('multipliers.attributesHelp')} autosize minRows={2} />
            </SimpleGrid>
            <FormErrors form={form} />
            <Group mt="md">
              <Button type="submit" loading={form.formState.isSubmitting}>
                {t('multipliers.createSubmit')}
              </Button>
            </Group>
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}
