import { useEffect, useState } from 'react';
import { Anchor, Button, Card, Group, List, NumberInput, Select, SimpleGrid, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useChallenge, useSaveChallenge, type Challenge, type ChallengeInput } from '../../../hooks/api/challenges';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { StatusBadge } from '../common/status-badge';
import { defaultWindow, formatTime, fromLocalInput, toLocalInput } from '../common/dates';
import { ChallengePublication } from './challenge-publication';

type Evaluator = ChallengeInput['objectives'][number]['evaluator'];
const EVALUATORS: Evaluator[] = ['event_count', 'activity_count', 'points_earned', 'badge_earned'];

interface ObjectiveDraft {
  id?: string;
  name: string;
  evaluator: Evaluator;
  target: number | string;
  event_name: string;
  badge_code: string;
}
interface MilestoneDraft {
  name: string;
  /** Percent of the overall progress (the API takes a fraction). */
  percent: number | string;
}
interface Draft {
  name: string;
  description: string;
  starts_at: string;
  ends_at: string;
  objectives: ObjectiveDraft[];
  milestones: MilestoneDraft[];
  completion_points: number | string;
  completion_badge_code: string;
}

/** Which fields the server lets change in each status; the form sends only those. */
const EDITABLE: Record<Challenge['status'], ReadonlyArray<keyof ChallengeInput> | 'all'> = {
  draft: 'all',
  scheduled: 'all',
  active: ['name', 'description', 'ends_at'],
  ended: ['name', 'description'],
  archived: ['name', 'description'],
};

function emptyDraft(): Draft {
  const window = defaultWindow(1, 14);
  return {
    name: '',
    description: '',
    starts_at: toLocalInput(window.starts_at),
    ends_at: toLocalInput(window.ends_at),
    objectives: [{ name: '', evaluator: 'event_count', target: 1, event_name: '', badge_code: '' }],
    milestones: [],
    completion_points: '',
    completion_badge_code: '',
  };
}

function fromChallenge(c: Challenge): Draft {
  return {
    name: c.name,
    description: c.description,
    starts_at: toLocalInput(c.starts_at),
    ends_at: toLocalInput(c.ends_at),
    objectives: c.objectives.map((o) => ({ id: o.id, name: o.name, evaluator: o.evaluator as Evaluator, target: o.target, event_name: o.event_name ?? '', badge_code: o.badge_code ?? '' })),
    milestones: c.milestones.map((m) => ({ name: m.name, percent: Math.round(m.threshold * 100) })),
    completion_points: c.completion_points ?? '',
    completion_badge_code: c.completion_badge_code ?? '',
  };
}

function toInput(draft: Draft, existing: Challenge | undefined): ChallengeInput {
  const full: ChallengeInput = {
    name: draft.name.trim(),
    description: draft.description,
    starts_at: fromLocalInput(draft.starts_at),
    ends_at: fromLocalInput(draft.ends_at),
    objectives: draft.objectives.map((o) => ({
      ...(o.id ? { id: o.id } : {}),
      name: o.name.trim(),
      evaluator: o.evaluator,
      target: Number(o.target),
      ...(o.evaluator === 'event_count' && o.event_name.trim() ? { event_name: o.event_name.trim() } : {}),
      ...(o.evaluator === 'badge_earned' && o.badge_code.trim() ? { badge_code: o.badge_code.trim() } : {}),
    })),
    milestones: draft.milestones.map((m) => ({ name: m.name.trim(), threshold: Number(m.percent) / 100 })),
    completion_points: draft.completion_points === '' ? null : Number(draft.completion_points),
    completion_badge_code: draft.completion_badge_code.trim() || null,
  };
  const editable = existing ? EDITABLE[existing.status] : 'all';
  if (editable === 'all') return full;
  return Object.fromEntries(editable.map((key) => [key, full[key]])) as ChallengeInput;
}

export function ChallengeEdit() {
  const { t } = useTranslation();
  const challengeId = useParams().challengeId;
  const navigate = useNavigate();
  const challenge = useChallenge(challengeId);
  const save = useSaveChallenge(challengeId);
  const canWrite = useCan('programs:write');
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  useEffect(() => {
    if (challenge.data) setDraft(fromChallenge(challenge.data));
  }, [challenge.data]);

  if (challengeId && challenge.isPending) return <Loading />;
  if (challengeId && challenge.error) return <ErrorAlert error={challenge.error} />;
  const existing = challenge.data;
  const editable = existing ? EDITABLE[existing.status] : 'all';
  const locked = (field: keyof ChallengeInput) => !canWrite || (editable !== 'all' && !editable.includes(field));
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const setObjective = (index: number, patch: Partial<ObjectiveDraft>) =>
    setDraft((d) => ({ ...d, objectives: d.objectives.map((o, i) => (i === index ? { ...o, ...patch } : o)) }));
  const setMilestone = (index: number, patch: Partial<MilestoneDraft>) =>
    setDraft((d) => ({ ...d, milestones: d.milestones.map((m, i) => (i === index ? { ...m, ...patch } : m)) }));

  return (
    <Stack>
      <Anchor component={Link} to="/competitions/challenges">
        {t('challenges.back')}
      </Anchor>
      <PageHeader title={existing ? existing.name : t('challenges.new')}>
        {existing && <StatusBadge status={existing.status} />}
        {existing && <ChallengePublication challenge={existing} />}
      </PageHeader>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate(toInput(draft, existing), {
            onSuccess: (saved) => {
              if (challengeId) return;
              // The same screen shows the new challenge: "Saved." is for changes, not for the creation.
              save.reset();
              navigate(`/competitions/challenges/${saved.id}`);
            },
          });
        }}
      >
        <Stack>
          <Card withBorder>
            <Stack>
              <TextInput label={t('challenges.name')} value={draft.name} onChange={(e) => set({ name: e.currentTarget.value })} required disabled={locked('name')} />
              <Textarea label={t('challenges.description')} value={draft.description} onChange={(e) => set({ description: e.currentTarget.value })} disabled={locked('description')} />
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <TextInput type="datetime-local" label={t('competitions.startsAt')} value={draft.starts_at} onChange={(e) => set({ starts_at: e.currentTarget.value })} required disabled={locked('starts_at')} />
                <TextInput type="datetime-local" label={t('competitions.endsAt')} value={draft.ends_at} onChange={(e) => set({ ends_at: e.currentTarget.value })} required disabled={locked('ends_at')} />
              </SimpleGrid>
            </Stack>
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('challenges.objectives')}
            </Title>
            <Stack>
              {draft.objectives.map((objective, index) => (
                <Group key={index} align="flex-end" wrap="wrap" data-testid="objective">
                  <TextInput label={t('challenges.objectiveName', { n: index + 1 })} value={objective.name} onChange={(e) => setObjective(index, { name: e.currentTarget.value })} required disabled={locked('objectives')} />
                  <Select
                    label={t('challenges.evaluator')}
                    data={EVALUATORS.map((value) => ({ value, label: t(`challenges.evaluators.${value}`) }))}
                    value={objective.evaluator}
                    onChange={(value) => value && setObjective(index, { evaluator: value as Evaluator })}
                    allowDeselect={false}
                    disabled={locked('objectives')}
                  />
                  <NumberInput label={t('challenges.target')} min={1} allowDecimal={false} value={objective.target} onChange={(value) => setObjective(index, { target: value })} required disabled={locked('objectives')} />
                  {objective.evaluator === 'event_count' && (
                    <TextInput label={t('challenges.eventName')} value={objective.event_name} onChange={(e) => setObjective(index, { event_name: e.currentTarget.value })} required disabled={locked('objectives')} />
                  )}
                  {objective.evaluator === 'badge_earned' && (
                    <TextInput label={t('challenges.badgeCode')} value={objective.badge_code} onChange={(e) => setObjective(index, { badge_code: e.currentTarget.value })} disabled={locked('objectives')} />
                  )}
                  {draft.objectives.length > 1 && !locked('objectives') && (
                    <Button variant="outline" color="red.9" onClick={() => set({ objectives: draft.objectives.filter((_, i) => i !== index) })}>
                      {t('challenges.removeObjective', { n: index + 1 })}
                    </Button>
                  )}
                </Group>
              ))}
              {!locked('objectives') && (
                <Button variant="default" onClick={() => set({ objectives: [...draft.objectives, { name: '', evaluator: 'event_count', target: 1, event_name: '', badge_code: '' }] })}>
                  {t('challenges.addObjective')}
                </Button>
              )}
            </Stack>
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('challenges.milestones')}
            </Title>
            <Stack>
              {draft.milestones.length === 0 && <Text c="dimmed">{t('challenges.noMilestones')}</Text>}
              {draft.milestones.map((milestone, index) => (
                <Group key={index} align="flex-end" wrap="wrap">
                  <TextInput label={t('challenges.milestoneName', { n: index + 1 })} value={milestone.name} onChange={(e) => setMilestone(index, { name: e.currentTarget.value })} required disabled={locked('milestones')} />
                  <NumberInput label={t('challenges.milestonePercent')} min={1} max={100} value={milestone.percent} onChange={(value) => setMilestone(index, { percent: value })} required disabled={locked('milestones')} />
                  {!locked('milestones') && (
                    <Button variant="outline" color="red.9" onClick={() => set({ milestones: draft.milestones.filter((_, i) => i !== index) })}>
                      {t('challenges.removeMilestone', { n: index + 1 })}
                    </Button>
                  )}
                </Group>
              ))}
              {!locked('milestones') && (
                <Button variant="default" onClick={() => set({ milestones: [...draft.milestones, { name: '', percent: 50 }] })}>
                  {t('challenges.addMilestone')}
                </Button>
              )}
            </Stack>
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('challenges.completion')}
            </Title>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <NumberInput label={t('challenges.completionPoints')} min={1} allowDecimal={false} value={draft.completion_points} onChange={(value) => set({ completion_points: value })} disabled={locked('completion_points')} />
              <TextInput label={t('challenges.completionBadge')} value={draft.completion_badge_code} onChange={(e) => set({ completion_badge_code: e.currentTarget.value })} disabled={locked('completion_badge_code')} />
            </SimpleGrid>
          </Card>
          <ErrorAlert error={save.error} />
          {canWrite && existing?.status !== 'archived' && (
            <Group>
              <Button type="submit" loading={save.isPending}>
                {existing ? t('challenges.save') : t('challenges.create')}
              </Button>
              {save.isSuccess && challengeId && <Text role="status">{t('challenges.saved')}</Text>}
            </Group>
          )}
        </Stack>
      </form>
      {existing && existing.status_moves.length > 0 && (
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('challenges.history')}
          </Title>
          <List data-testid="challenge-history">
            {existing.status_moves.map((move, index) => (
              <List.Item key={index}>
                {t('challenges.move', { from: move.from_status ?? '—', to: move.to_status, by: move.moved_by, at: formatTime(move.moved_at) })}
              </List.Item>
            ))}
          </List>
        </Card>
      )}
    </Stack>
  );
}
