import { useEffect, useState } from 'react';
import { Button, Card, Checkbox, Group, NumberInput, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useConversions, useDecideConversion, useReferralSettings, useSaveReferralSettings, type ConversionStatus, type ReferralSettings } from '../../../hooks/api/referrals';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { StatusBadge } from '../common/status-badge';
import { formatTime } from '../common/dates';
import { DecisionButton } from '../../fraud/review-queue/components/decision-button';

type Milestone = ReferralSettings['milestones'][number];

function SettingsForm({ settings }: { settings: ReferralSettings }) {
  const { t } = useTranslation();
  const save = useSaveReferralSettings();
  const canWrite = useCan('programs:write');
  const [draft, setDraft] = useState(settings);
  useEffect(() => setDraft(settings), [settings]);
  const setMilestone = (index: number, patch: Partial<Milestone>) => setDraft((d) => ({ ...d, milestones: d.milestones.map((m, i) => (i === index ? { ...m, ...patch } : m)) }));
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('referrals.settings')}
      </Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate({
            ...draft,
            milestones: draft.milestones.map((m) => ({ conversions: m.conversions, ...(m.badge_code ? { badge_code: m.badge_code } : {}), ...(m.points ? { points: m.points } : {}) })),
          });
        }}
      >
        <Stack>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <NumberInput label={t('referrals.perHour')} min={1} allowDecimal={false} value={draft.velocity_per_hour} onChange={(value) => setDraft({ ...draft, velocity_per_hour: Number(value) })} disabled={!canWrite} />
            <NumberInput label={t('referrals.perDay')} min={1} allowDecimal={false} value={draft.velocity_per_day} onChange={(value) => setDraft({ ...draft, velocity_per_day: Number(value) })} disabled={!canWrite} />
            <Checkbox label={t('referrals.sameDevice')} checked={draft.review_same_device} onChange={(e) => setDraft({ ...draft, review_same_device: e.currentTarget.checked })} disabled={!canWrite} />
            <Checkbox label={t('referrals.sameIp')} checked={draft.review_same_ip} onChange={(e) => setDraft({ ...draft, review_same_ip: e.currentTarget.checked })} disabled={!canWrite} />
          </SimpleGrid>
          <Title order={3} size="h5">
            {t('referrals.milestones')}
          </Title>
          {draft.milestones.length === 0 && <Text c="dimmed">{t('referrals.noMilestones')}</Text>}
          {draft.milestones.map((milestone, index) => (
            <Group key={index} align="flex-end" wrap="wrap">
              <NumberInput label={t('referrals.milestoneConversions', { n: index + 1 })} min={1} allowDecimal={false} value={milestone.conversions} onChange={(value) => setMilestone(index, { conversions: Number(value) })} disabled={!canWrite} />
              <NumberInput label={t('referrals.milestonePoints')} min={1} allowDecimal={false} value={milestone.points ?? ''} onChange={(value) => setMilestone(index, { points: value === '' ? undefined : Number(value) })} disabled={!canWrite} />
              <TextInput label={t('referrals.milestoneBadge')} value={milestone.badge_code ?? ''} onChange={(e) => setMilestone(index, { badge_code: e.currentTarget.value || undefined })} disabled={!canWrite} />
              {canWrite && (
                <Button variant="outline" color="red.9" onClick={() => setDraft({ ...draft, milestones: draft.milestones.filter((_, i) => i !== index) })}>
                  {t('referrals.removeMilestone', { n: index + 1 })}
                </Button>
              )}
            </Group>
          ))}
          {canWrite && (
            <Group>
              <Button variant="default" onClick={() => setDraft({ ...draft, milestones: [...draft.milestones, { conversions: 1, points: 100 }] })}>
                {t('referrals.addMilestone')}
              </Button>
              <Button type="submit" loading={save.isPending}>
                {t('referrals.save')}
              </Button>
              {save.isSuccess && <Text role="status">{t('referrals.saved')}</Text>}
            </Group>
          )}
          <ErrorAlert error={save.error} />
        </Stack>
      </form>
    </Card>
  );
}

function Conversions() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const [status, setStatus] = useState<ConversionStatus | undefined>('pending_review');
  const conversions = useConversions({ status, cursor: pages.cursor });
  const decide = useDecideConversion();
  const canDecide = useCan('fraud:decide');
  const rows = conversions.data?.conversions ?? [];
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('referrals.conversions')}
      </Title>
      <Stack>
        <Select
          w={240}
          label={t('competitions.statusLabel')}
          clearable
          data={(['pending_review', 'converted', 'rejected'] as const).map((value) => ({ value, label: t(`competitions.status.${value}`) }))}
          value={status ?? null}
          onChange={(value) => {
            pages.reset();
            setStatus((value ?? undefined) as ConversionStatus | undefined);
          }}
        />
        <ErrorAlert error={conversions.error} />
        {conversions.isPending && <Loading />}
        {conversions.data && rows.length === 0 && <Text>{t('referrals.noConversions')}</Text>}
        {rows.length > 0 && (
          <ScrollTable minWidth={760}>
            <Table striped data-testid="conversions">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('referrals.referrer')}</Table.Th>
                  <Table.Th>{t('referrals.referred')}</Table.Th>
                  <Table.Th>{t('referrals.signals')}</Table.Th>
                  <Table.Th>{t('competitions.statusLabel')}</Table.Th>
                  <Table.Th>{t('referrals.at')}</Table.Th>
                  {canDecide && <Table.Th>{t('common.actions')}</Table.Th>}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((conversion) => (
                  <Table.Tr key={conversion.conversion_id}>
                    <Table.Td>{conversion.referrer_id}</Table.Td>
                    <Table.Td>{conversion.referred_participant_id ?? conversion.referred_session_id}</Table.Td>
                    <Table.Td>{conversion.signals.map((s) => t(`fraud.signals.${s.signal}`, { defaultValue: s.signal })).join(', ') || '—'}</Table.Td>
                    <Table.Td>
                      <StatusBadge status={conversion.status} />
                    </Table.Td>
                    <Table.Td>{formatTime(conversion.created_at)}</Table.Td>
                    {canDecide && (
                      <Table.Td>
                        {conversion.status === 'pending_review' && (
                          <Group gap="xs" wrap="nowrap">
                            <DecisionButton approve subject={conversion.referrer_id} onDecide={(note) => decide.mutateAsync({ id: conversion.conversion_id, decision: 'approve', note })} />
                            <DecisionButton approve={false} subject={conversion.referrer_id} onDecide={(note) => decide.mutateAsync({ id: conversion.conversion_id, decision: 'reject', note })} />
                          </Group>
                        )}
                      </Table.Td>
                    )}
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        )}
        <Pager pages={pages} nextCursor={conversions.data?.next_cursor} />
      </Stack>
    </Card>
  );
}

export function Referrals() {
  const { t } = useTranslation();
  const settings = useReferralSettings();
  return (
    <Stack>
      <PageHeader title={t('referrals.title')} />
      <ErrorAlert error={settings.error} />
      {settings.isPending && <Loading />}
      {settings.data && <SettingsForm settings={settings.data} />}
      <RoleGuard permission="fraud:read">
        <Conversions />
      </RoleGuard>
    </Stack>
  );
}
