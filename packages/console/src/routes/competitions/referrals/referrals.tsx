import { useState } from 'react';
import { Card, Group, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useConversions, useDecideConversion, useReferralSettings, type ConversionStatus } from '../../../hooks/api/referrals';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { StatusBadge } from '../common/status-badge';
import { useFormat, ZoneNote } from '../../../lib/format';
import { SettingsForm } from './components/settings-form';
import { conversionDecision, DecisionButton } from '../../fraud/review-queue/components/decision-button';
import { useDecisionLock } from '../../fraud/review-queue/components/decision-lock';

function Conversions() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const [status, setStatus] = useState<ConversionStatus | undefined>('pending_review');
  const conversions = useConversions({ status, cursor: pages.cursor });
  const decide = useDecideConversion();
  const lock = useDecisionLock();
  const f = useFormat();
  const rows = conversions.data?.conversions ?? [];
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('referrals.conversions')}
      </Title>
      <Stack>
        {lock.note}
        <ZoneNote />
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
                  <Table.Th>{t('common.actions')}</Table.Th>
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
                    <Table.Td>{f.dateTime(conversion.created_at)}</Table.Td>
                    <Table.Td>
                      {conversion.status === 'pending_review' && (
                        <Group gap="xs" wrap="nowrap">
                          {[true, false].map((approve) => (
                            <DecisionButton
                              key={String(approve)}
                              approve={approve}
                              subject={conversion.referrer_id}
                              target={conversionDecision(approve)}
                              onDecide={(note) => decide.mutateAsync({ id: conversion.conversion_id, decision: approve ? 'approve' : 'reject', note })}
                              disabledReasonId={lock.disabledReasonId}
                            />
                          ))}
                        </Group>
                      )}
                    </Table.Td>
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
