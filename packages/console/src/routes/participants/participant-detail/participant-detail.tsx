import { useState } from 'react';
import { Anchor, Badge, Card, Checkbox, Group, List, Loader, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useEraseParticipant, useLedger, useParticipantProfile, useParticipantState } from '../../../hooks/api/participants';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { ConfirmButton } from '../../../components/confirm-button';
import { PointsAdjustForm } from './components/points-adjust-form';
import { ProfileCard } from './components/profile-card';
import { Loading, ScrollTable } from '../../../components/loading';

type Named = { code?: string; name?: string; badge_code?: string; streak_code?: string; current?: number; current_count?: number; earned_at?: string; earned?: boolean };

function Ledger({ participantId }: { participantId: string }) {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const ledger = useLedger(participantId, pages.cursor);
  const entries = ledger.data?.entries ?? [];
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('participant.ledger')}
      </Title>
      <ErrorAlert error={ledger.error} />
      {ledger.data && entries.length === 0 && <Text>{t('participant.noLedger')}</Text>}
      {entries.length > 0 && (
        <ScrollTable minWidth={560}>
          <Table striped data-testid="ledger">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('ledger.when')}</Table.Th>
                <Table.Th>{t('ledger.type')}</Table.Th>
                <Table.Th>{t('ledger.amount')}</Table.Th>
                <Table.Th>{t('ledger.reason')}</Table.Th>
                <Table.Th>{t('ledger.balance')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {entries.map((entry) => (
                <Table.Tr key={entry.id}>
                  <Table.Td>{new Date(entry.created_at).toLocaleString()}</Table.Td>
                  <Table.Td>{entry.type}</Table.Td>
                  <Table.Td>{entry.amount > 0 ? `+${entry.amount}` : entry.amount}</Table.Td>
                  <Table.Td>{entry.reason}</Table.Td>
                  <Table.Td>{entry.available_after}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={ledger.data?.next_cursor} />
    </Card>
  );
}

function EraseParticipant({ participantId }: { participantId: string }) {
  const { t } = useTranslation();
  const erase = useEraseParticipant();
  const navigate = useNavigate();
  const [typed, setTyped] = useState('');
  const [anonymize, setAnonymize] = useState(true);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('erase.title')}
      </Title>
      <Text size="sm" mb="sm">
        {t('erase.explain')}
      </Text>
      <ConfirmButton
        label={t('erase.button')}
        title={t('erase.confirmTitle')}
        message={t('erase.confirm', { participant: participantId })}
        confirmLabel={t('erase.button')}
        confirmDisabled={typed !== participantId}
        onConfirm={async () => {
          await erase.mutateAsync({ participantId, anonymize });
          navigate('/participants');
        }}
      >
        <Checkbox label={t('erase.anonymize')} checked={anonymize} onChange={(e) => setAnonymize(e.currentTarget.checked)} />
        <TextInput label={t('erase.typeId')} value={typed} onChange={(e) => setTyped(e.currentTarget.value)} autoComplete="off" />
      </ConfirmButton>
    </Card>
  );
}

export function ParticipantDetail() {
  const { t } = useTranslation();
  const participantId = useParams().participantId!;
  const profile = useParticipantProfile(participantId);
  const state = useParticipantState(participantId);
  const points = state.data?.points;
  const tier = state.data?.tier;
  const badges = (state.data?.badges ?? []) as Named[];
  const streaks = (state.data?.streaks ?? []) as Named[];
  const currency = points?.currency_name ?? t('participant.points');
  return (
    <Stack>
      <Anchor component={Link} to="/participants" size="sm">
        ← {t('participants.title')}
      </Anchor>
      <PageHeader title={t('participant.title', { id: participantId })}>
        {profile.data?.anonymized && <Badge color="gray.7">{t('participants.anonymized')}</Badge>}
      </PageHeader>
      <ErrorAlert error={profile.error ?? state.error} />
      {(profile.isPending || state.isPending) && <Loading />}
      {points && (
        <SimpleGrid cols={{ base: 1, sm: 3 }}>
          <Card withBorder>
            <Text size="sm" c="dimmed">
              {t('participant.available', { currency })}
            </Text>
            <Text fw={700} size="xl" data-testid="available" data-value={points.available}>
              {points.available.toLocaleString()}
            </Text>
          </Card>
          <Card withBorder>
            <Text size="sm" c="dimmed">
              {t('participant.lifetime')}
            </Text>
            <Text fw={700} size="xl">
              {points.lifetime.toLocaleString()}
            </Text>
          </Card>
          <Card withBorder>
            <Text size="sm" c="dimmed">
              {t('participant.tier')}
            </Text>
            <Text fw={700} size="xl">
              {(tier?.current as Named | null)?.name ?? t('participant.noTier')}
            </Text>
            {tier?.next && (
              <Text size="sm">{t('participant.toNext', { points: tier.points_to_next, tier: (tier.next as Named).name })}</Text>
            )}
          </Card>
        </SimpleGrid>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Stack>
          {profile.data && <ProfileCard profile={profile.data} />}
          {state.data && (
            <Card withBorder>
              <Title order={2} size="h4" mb="sm">
                {t('participant.badgesAndStreaks')}
              </Title>
              <Group align="flex-start" grow>
                <div>
                  <Text fw={600}>{t('participant.badges')}</Text>
                  {badges.length === 0 ? <Text size="sm">{t('participant.none')}</Text> : (
                    <List size="sm">
                      {badges.map((b, i) => (
                        <List.Item key={b.code ?? b.badge_code ?? i}>{b.name ?? b.code ?? b.badge_code}</List.Item>
                      ))}
                    </List>
                  )}
                </div>
                <div>
                  <Text fw={600}>{t('participant.streaks')}</Text>
                  {streaks.length === 0 ? <Text size="sm">{t('participant.none')}</Text> : (
                    <List size="sm">
                      {streaks.map((s, i) => (
                        <List.Item key={s.code ?? s.streak_code ?? i}>
                          {s.name ?? s.code ?? s.streak_code}: {s.current ?? s.current_count ?? 0}
                        </List.Item>
                      ))}
                    </List>
                  )}
                </div>
              </Group>
            </Card>
          )}
        </Stack>
        <Stack>
          <RoleGuard permission="participants:write">{!profile.data?.anonymized && <PointsAdjustForm participantId={participantId} currency={currency} />}</RoleGuard>
          <RoleGuard permission="participants:erase">{profile.data && !profile.data.anonymized && <EraseParticipant participantId={participantId} />}</RoleGuard>
        </Stack>
      </SimpleGrid>
      <Ledger participantId={participantId} />
    </Stack>
  );
}
