import { useState } from 'react';
import { Anchor, Badge, Card, Checkbox, Group, List, SimpleGrid, Stack, Tabs, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useEraseParticipant, useParticipantProfile, useParticipantState } from '../../../hooks/api/participants';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { RoleGuard, useCan } from '../../../components/permission';
import { ConfirmButton } from '../../../components/confirm-button';
import { Loading } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';
import { PointsAdjustForm } from './components/points-adjust-form';
import { ProfileCard } from './components/profile-card';
import { LedgerTab } from './components/ledger-tab';
import { EventsTab } from './components/events-tab';
import { ChallengesTab, RewardsTab, type ChallengeProgress, type ClaimedReward } from './components/rewards-tab';

type Named = { code?: string; name?: string; badge_code?: string; streak_code?: string; current?: number; current_count?: number; current_length?: number; earned_at?: string; earned?: boolean };

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

function BadgesAndStreaks({ badges, streaks }: { badges: Named[]; streaks: Named[] }) {
  const { t } = useTranslation();
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('participant.badgesAndStreaks')}
      </Title>
      <Group align="flex-start" grow>
        <div>
          <Text fw={600}>{t('participant.badges')}</Text>
          {badges.length === 0 ? (
            <Text size="sm">{t('participant.none')}</Text>
          ) : (
            <List size="sm">
              {badges.map((b, i) => (
                <List.Item key={b.code ?? b.badge_code ?? i}>{b.name ?? b.code ?? b.badge_code}</List.Item>
              ))}
            </List>
          )}
        </div>
        <div>
          <Text fw={600}>{t('participant.streaks')}</Text>
          {streaks.length === 0 ? (
            <Text size="sm">{t('participant.none')}</Text>
          ) : (
            <List size="sm">
              {streaks.map((s, i) => (
                <List.Item key={s.code ?? s.streak_code ?? i}>
                  {s.name ?? s.code ?? s.streak_code}: {s.current ?? s.current_length ?? s.current_count ?? 0}
                </List.Item>
              ))}
            </List>
          )}
        </div>
      </Group>
    </Card>
  );
}

/**
 * Support's view of a person: the balance first, then tabs with the most used
 * first (the ledger with who granted each entry, the events with their
 * outcome, claimed rewards, challenge progress, the masked profile) — on a
 * phone the ledger is under the balance, not 1,900 px down.
 */
export function ParticipantDetail() {
  const { t } = useTranslation();
  const f = useFormat();
  const participantId = useParams().participantId!;
  const profile = useParticipantProfile(participantId);
  const state = useParticipantState(participantId);
  const mayAdjust = useCan('participants:write') || useCan('participants:erase');
  const points = state.data?.points;
  const tier = state.data?.tier;
  const badges = (state.data?.badges ?? []) as Named[];
  const streaks = (state.data?.streaks ?? []) as Named[];
  const rewards = (state.data?.rewards ?? []) as ClaimedReward[];
  const challenges = (state.data?.challenges ?? []) as ChallengeProgress[];
  const currency = points?.currency_name ?? t('participant.points');
  const anonymized = profile.data?.anonymized ?? false;
  return (
    <Stack gap="sm">
      <Anchor component={Link} to="/participants" size="sm">
        ← {t('participants.title')}
      </Anchor>
      <PageHeader title={t('participant.title', { id: participantId })}>{anonymized && <Badge color="gray.7">{t('participants.anonymized')}</Badge>}</PageHeader>
      <ErrorAlert error={profile.error ?? state.error} />
      {(profile.isPending || state.isPending) && <Loading />}
      {points && (
        <SimpleGrid cols={3} spacing="xs" data-testid="balance">
          <Card withBorder padding="xs">
            <Text size="xs" c="dimmed">
              {t('participant.available', { currency })}
            </Text>
            <Text fw={700} size="lg" data-testid="available" data-value={points.available}>
              {f.number(points.available)}
            </Text>
          </Card>
          <Card withBorder padding="xs">
            <Text size="xs" c="dimmed">
              {t('participant.lifetime')}
            </Text>
            <Text fw={700} size="lg">
              {f.number(points.lifetime)}
            </Text>
          </Card>
          <Card withBorder padding="xs">
            <Text size="xs" c="dimmed">
              {t('participant.tier')}
            </Text>
            <Text fw={700} size="lg">
              {(tier?.current as Named | null)?.name ?? t('participant.noTier')}
            </Text>
            {tier?.next && <Text size="xs">{t('participant.toNext', { points: tier.points_to_next, tier: (tier.next as Named).name })}</Text>}
          </Card>
        </SimpleGrid>
      )}
      <ZoneNote />
      <Tabs defaultValue="ledger" keepMounted={false}>
        <Tabs.List aria-label={t('participant.sections')}>
          <Tabs.Tab value="ledger">{t('participant.tabs.ledger')}</Tabs.Tab>
          <Tabs.Tab value="events">{t('participant.tabs.events')}</Tabs.Tab>
          <Tabs.Tab value="rewards">{t('participant.tabs.rewards')}</Tabs.Tab>
          <Tabs.Tab value="challenges">{t('participant.tabs.challenges')}</Tabs.Tab>
          <Tabs.Tab value="profile">{t('participant.tabs.profile')}</Tabs.Tab>
          {mayAdjust && !anonymized && <Tabs.Tab value="actions">{t('participant.tabs.actions')}</Tabs.Tab>}
        </Tabs.List>
        <Tabs.Panel value="ledger" pt="sm">
          <LedgerTab participantId={participantId} />
        </Tabs.Panel>
        <Tabs.Panel value="events" pt="sm">
          <EventsTab participantId={participantId} />
        </Tabs.Panel>
        <Tabs.Panel value="rewards" pt="sm">
          <RewardsTab rewards={rewards} />
        </Tabs.Panel>
        <Tabs.Panel value="challenges" pt="sm">
          <ChallengesTab challenges={challenges} />
        </Tabs.Panel>
        <Tabs.Panel value="profile" pt="sm">
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            {profile.data && <ProfileCard profile={profile.data} />}
            {state.data && <BadgesAndStreaks badges={badges} streaks={streaks} />}
          </SimpleGrid>
        </Tabs.Panel>
        {mayAdjust && !anonymized && (
          <Tabs.Panel value="actions" pt="sm">
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <RoleGuard permission="participants:write">
                <PointsAdjustForm participantId={participantId} currency={currency} />
              </RoleGuard>
              <RoleGuard permission="participants:erase">{profile.data && <EraseParticipant participantId={participantId} />}</RoleGuard>
            </SimpleGrid>
          </Tabs.Panel>
        )}
      </Tabs>
    </Stack>
  );
}
